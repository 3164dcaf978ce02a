// compare: every direction, FLOAT (IEEE, NaN unordered) and TOTALORDER
// comparisons of floats, signed/unsigned integers, pred, and EQ/NE of
// complex numbers.
#include <bit>
#include <cmath>
#include <string>
#include <type_traits>

#include "compiler/hlo/op_attributes.h"
#include "runtime/eval/elementwise_loops.h"

namespace kiln::runtime::elementwise_internal {
namespace {

using hlo::ComparisonDirection;

// A key whose signed order is IEEE totalOrder: -NaN < -inf < ... < -0 < +0
// < ... < +inf < +NaN. Works on the stored bits of every sign-magnitude
// float format.
template <class Tr>
int64_t TotalOrderKey(typename Tr::Stored s) {
  uint64_t bits;
  if constexpr (std::is_same_v<typename Tr::Stored, float>) bits = std::bit_cast<uint32_t>(s);
  else if constexpr (std::is_same_v<typename Tr::Stored, double>) bits = std::bit_cast<uint64_t>(s);
  else bits = s;
  const uint64_t sign = uint64_t{1} << (Tr::kBits - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude - 1 : magnitude;
}

template <ComparisonDirection kDir, typename V>
bool Compare(V a, V b) {
  if constexpr (kDir == ComparisonDirection::kEq) return a == b;
  else if constexpr (kDir == ComparisonDirection::kNe) return a != b;
  else if constexpr (kDir == ComparisonDirection::kLt) return a < b;
  else if constexpr (kDir == ComparisonDirection::kLe) return a <= b;
  else if constexpr (kDir == ComparisonDirection::kGt) return a > b;
  else return a >= b;
}

template <class Tr, ComparisonDirection kDir, bool kTotalOrder>
void CompareLoop(const ElementwiseArgs& a, const ElementwiseParams&) {
  using S = typename Tr::Stored;
  const S* x = static_cast<const S*>(a.in[0]);
  const S* z = static_cast<const S*>(a.in[1]);
  uint8_t* y = static_cast<uint8_t*>(a.out);
  for (int64_t i = 0; i < a.n; ++i) {
    if constexpr (kTotalOrder) {
      y[i] = Compare<kDir>(TotalOrderKey<Tr>(x[i]), TotalOrderKey<Tr>(z[i]));
    } else {
      y[i] = Compare<kDir>(Tr::Load(x[i]), Tr::Load(z[i]));
    }
  }
}

template <ComparisonDirection kDir>
ElementwiseFn ForDirection(hlo::PrimitiveType type, bool total_order) {
  return DispatchElementType(
      type,
      [total_order](auto traits) -> ElementwiseFn {
        using Tr = decltype(traits);
        if constexpr (kIsComplex<Tr>) {
          if constexpr (kDir == ComparisonDirection::kEq || kDir == ComparisonDirection::kNe) {
            return &CompareLoop<Tr, kDir, false>;
          } else {
            return nullptr;
          }
        } else if constexpr (kIsFloat<Tr>) {
          return total_order ? &CompareLoop<Tr, kDir, true> : &CompareLoop<Tr, kDir, false>;
        } else {
          return &CompareLoop<Tr, kDir, false>;
        }
      },
      []() -> ElementwiseFn { return nullptr; });
}

}  // namespace

Result<ElementwiseFn> ResolveCompare(const hlo::Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(hlo::Comparison cmp, hlo::GetComparison(instr));
  const hlo::PrimitiveType type = instr.operand(0)->shape().element_type();
  const bool total = cmp.type == hlo::ComparisonType::kTotalOrder;
  ElementwiseFn fn = nullptr;
  switch (cmp.direction) {
    case ComparisonDirection::kEq: fn = ForDirection<ComparisonDirection::kEq>(type, total); break;
    case ComparisonDirection::kNe: fn = ForDirection<ComparisonDirection::kNe>(type, total); break;
    case ComparisonDirection::kLt: fn = ForDirection<ComparisonDirection::kLt>(type, total); break;
    case ComparisonDirection::kLe: fn = ForDirection<ComparisonDirection::kLe>(type, total); break;
    case ComparisonDirection::kGt: fn = ForDirection<ComparisonDirection::kGt>(type, total); break;
    case ComparisonDirection::kGe: fn = ForDirection<ComparisonDirection::kGe>(type, total); break;
  }
  if (fn == nullptr) {
    return UnimplementedError("instruction %" + std::string(instr.name()) + ": compare direction " +
                              std::string(hlo::ComparisonDirectionName(cmp.direction)) +
                              " is not defined on " + std::string(hlo::PrimitiveTypeName(type)));
  }
  return fn;
}

}  // namespace kiln::runtime::elementwise_internal
