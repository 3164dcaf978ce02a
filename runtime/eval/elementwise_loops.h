// Loop templates shared by the elementwise kernel families (private to
// runtime/eval). An Op is a struct with
//   template <class Tr> static constexpr bool kSupports;
//   template <class Tr> static typename Tr::Compute Apply(Compute...);
// and a loop instantiation exists only where kSupports holds.
#pragma once

#include <cstdint>

#include "runtime/eval/element_traits.h"
#include "runtime/eval/elementwise_kernel.h"

namespace kiln::runtime::elementwise_internal {

// Hot loops are compiled three times, for AVX-512 (x86-64-v4), AVX2 and the
// baseline ISA, and the loader picks one per machine (GCC function
// multiversioning). a*b+c is never contracted to an FMA (ISO C++ mode's
// -ffp-contract=off): that would change results. Clang (only the fuzz
// build uses it) leaves the inline functions such clones call undefined at
// link time, so there the loops are compiled once.
#if defined(__clang__)
#define KILN_ELEMENTWISE_LOOP
#else
#define KILN_ELEMENTWISE_LOOP [[gnu::target_clones("arch=x86-64-v4", "avx2", "default")]]
#endif

template <class Tr, class Op>
struct UnaryLoop {
  KILN_ELEMENTWISE_LOOP static void Run(const ElementwiseArgs& a, const ElementwiseParams&) {
    using S = typename Tr::Stored;
    const S* x = static_cast<const S*>(a.in[0]);
    S* y = static_cast<S*>(a.out);
    for (int64_t i = 0; i < a.n; ++i) y[i] = Tr::Store(Op::template Apply<Tr>(Tr::Load(x[i])));
  }
};

template <class Tr, class Op>
struct BinaryLoop {
  KILN_ELEMENTWISE_LOOP static void Run(const ElementwiseArgs& a, const ElementwiseParams&) {
    using S = typename Tr::Stored;
    const S* x = static_cast<const S*>(a.in[0]);
    const S* z = static_cast<const S*>(a.in[1]);
    S* y = static_cast<S*>(a.out);
    for (int64_t i = 0; i < a.n; ++i) {
      y[i] = Tr::Store(Op::template Apply<Tr>(Tr::Load(x[i]), Tr::Load(z[i])));
    }
  }
};

#undef KILN_ELEMENTWISE_LOOP

// Resolves Loop<Tr, Op> for a runtime element type; nullptr where the op is
// not defined on the type.
template <class Op, template <class, class> class Loop>
ElementwiseFn ResolveTyped(hlo::PrimitiveType type) {
  return DispatchElementType(
      type,
      [](auto traits) -> ElementwiseFn {
        using Tr = decltype(traits);
        if constexpr (Op::template kSupports<Tr>) {
          return &Loop<Tr, Op>::Run;
        } else {
          return nullptr;
        }
      },
      []() -> ElementwiseFn { return nullptr; });
}

template <class Tr>
inline constexpr bool kIsFloat = Tr::kKind == ElementKind::kFloat;
template <class Tr>
inline constexpr bool kIsComplex = Tr::kKind == ElementKind::kComplex;
template <class Tr>
inline constexpr bool kIsInt = Tr::kKind == ElementKind::kSigned || Tr::kKind == ElementKind::kUnsigned;
template <class Tr>
inline constexpr bool kIsSigned = Tr::kKind == ElementKind::kSigned;
template <class Tr>
inline constexpr bool kIsPred = Tr::kKind == ElementKind::kPred;

}  // namespace kiln::runtime::elementwise_internal
