// rng (RNG_UNIFORM / RNG_NORMAL from scalar parameters), drawn from a
// Philox4x32-10 stream seeded by the evaluation (EvalContext::NextRngSeed).
// rng-bit-generator, whose bits follow XLA's layout, is in
// rng_bit_generator.cc.

#include <array>
#include <cmath>
#include <cstring>
#include <numbers>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/counter_rng.h"
#include "runtime/kernels/element_access.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

// A stream of 32-bit words: Philox4x32-10 blocks under a 64-bit key, with a
// 64-bit block counter starting at 0.
class BitStream {
 public:
  explicit BitStream(uint64_t key)
      : key_{static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)} {}

  uint32_t NextWord() {
    if (next_ == words_.size()) {
      words_ = Philox4x32(
          {static_cast<uint32_t>(counter_), static_cast<uint32_t>(counter_ >> 32), 0, 0}, key_);
      ++counter_;
      next_ = 0;
    }
    return words_[next_++];
  }
  uint64_t NextDoubleWord() {
    const uint64_t lo = NextWord();
    return lo | (uint64_t{NextWord()} << 32);
  }

 private:
  std::array<uint32_t, 2> key_;
  uint64_t counter_ = 0;
  std::array<uint32_t, 4> words_{};
  size_t next_ = words_.size();
};

// Uniform double in [0, 1) from 53 random bits.
double UnitDouble(BitStream& bits) {
  return static_cast<double>(bits.NextDoubleWord() >> 11) * 0x1.0p-53;
}

}  // namespace

Result<hlo::Literal> EvalRng(const hlo::Instruction& instr, Operands operands, EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 2));
  KILN_ASSIGN_OR_RETURN(hlo::RngDistribution distribution, hlo::GetRngDistribution(instr));
  const hlo::Shape& shape = instr.shape();
  const hlo::PrimitiveType type = shape.element_type();
  if (!shape.IsArray() || operands[0]->element_count() != 1 ||
      operands[1]->element_count() != 1) {
    return KernelError(instr, "expects two scalar parameters and an array result");
  }
  const bool is_float = hlo::IsFloatingPoint(type);
  if (distribution == hlo::RngDistribution::kNormal && !is_float) {
    return KernelError(instr, "RNG_NORMAL needs a floating-point result, got " + shape.ToString());
  }
  if (!is_float && !hlo::IsInteger(type)) {
    return KernelError(instr, "rng cannot produce " + shape.ToString());
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(shape.ElementCount()));
  const uint64_t seed = ctx.NextRngSeed();
  BitStream stream(seed);
  hlo::Literal result(shape);
  const int64_t n = result.element_count();
  if (distribution == hlo::RngDistribution::kNormal) {
    const double mu = GetElementAs<double>(*operands[0], 0);
    const double sigma = GetElementAs<double>(*operands[1], 0);
    for (int64_t i = 0; i < n; ++i) {
      // Box-Muller; 1 - u keeps the logarithm finite.
      const double u1 = 1.0 - UnitDouble(stream), u2 = UnitDouble(stream);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
      SetElementFrom<double>(result, i, mu + sigma * z);
    }
  } else if (is_float) {
    const double a = GetElementAs<double>(*operands[0], 0);
    const double b = GetElementAs<double>(*operands[1], 0);
    for (int64_t i = 0; i < n; ++i) {
      double v = a + (b - a) * UnitDouble(stream);
      SetElementFrom<double>(result, i, v);
      // Rounding to the element type may land on b; keep the range half-open.
      if (b > a && GetElementAs<double>(result, i) >= b) SetElementFrom<double>(result, i, a);
    }
  } else {
    const int64_t a = GetElementAs<int64_t>(*operands[0], 0);
    const int64_t b = GetElementAs<int64_t>(*operands[1], 0);
    const uint64_t range = b > a ? static_cast<uint64_t>(b) - static_cast<uint64_t>(a) : 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t r = range == 0 ? 0 : stream.NextDoubleWord() % range;
      SetElementFrom<int64_t>(result, i, static_cast<int64_t>(static_cast<uint64_t>(a) + r));
    }
  }
  return result;
}

}  // namespace kiln::runtime
