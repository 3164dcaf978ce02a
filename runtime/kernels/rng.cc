// rng (RNG_UNIFORM / RNG_NORMAL from scalar parameters) and
// rng-bit-generator (Philox4x32-10 / ThreeFry2x32-20 over a u64 state).

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

// A stream of 32-bit words from a counter-based generator. Philox: key =
// state[0], 128-bit counter = state[1] | state[2] << 64. ThreeFry: key =
// state[0], 64-bit counter = state[1]. Missing state words are 0; each block
// advances the counter by one.
class BitStream {
 public:
  BitStream(hlo::RngAlgorithm algorithm, std::vector<uint64_t> state)
      : philox_(algorithm != hlo::RngAlgorithm::kThreeFry), state_(std::move(state)) {
    state_.resize(std::max<size_t>(state_.size(), philox_ ? 3 : 2), 0);
  }

  uint32_t NextWord() {
    if (next_ == words_.size()) Refill();
    return words_[next_++];
  }
  uint64_t NextDoubleWord() {
    const uint64_t lo = NextWord();
    return lo | (uint64_t{NextWord()} << 32);
  }

  // The state after the blocks drawn so far, `size` words long.
  std::vector<uint64_t> State(size_t size) const {
    return std::vector<uint64_t>(state_.begin(), state_.begin() + size);
  }

 private:
  void Refill() {
    const std::array<uint32_t, 2> key = {static_cast<uint32_t>(state_[0]),
                                         static_cast<uint32_t>(state_[0] >> 32)};
    words_.clear();
    if (philox_) {
      auto block = Philox4x32({static_cast<uint32_t>(state_[1]),
                               static_cast<uint32_t>(state_[1] >> 32),
                               static_cast<uint32_t>(state_[2]),
                               static_cast<uint32_t>(state_[2] >> 32)},
                              key);
      words_.assign(block.begin(), block.end());
      if (++state_[1] == 0) ++state_[2];
    } else {
      auto block = ThreeFry2x32(
          {static_cast<uint32_t>(state_[1]), static_cast<uint32_t>(state_[1] >> 32)}, key);
      words_.assign(block.begin(), block.end());
      ++state_[1];
    }
    next_ = 0;
  }

  bool philox_;
  std::vector<uint64_t> state_;
  std::vector<uint32_t> words_;
  size_t next_ = 0;
};

// Uniform double in [0, 1) from 53 random bits.
double UnitDouble(BitStream& bits) {
  return static_cast<double>(bits.NextDoubleWord() >> 11) * 0x1.0p-53;
}

}  // namespace

Result<hlo::Literal> EvalRngBitGenerator(const hlo::Instruction& instr, Operands operands,
                                         EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckArrayOperands(instr, operands, 1));
  KILN_ASSIGN_OR_RETURN(hlo::RngAlgorithm algorithm, hlo::GetRngAlgorithm(instr));
  const hlo::Literal& state = *operands[0];
  const hlo::Shape& shape = instr.shape();
  if (!shape.IsTuple() || shape.tuple_shapes().size() != 2 || !shape.tuple_shapes(1).IsArray() ||
      !shape.tuple_shapes(0).Compatible(state.shape()) || state.shape().rank() != 1 ||
      state.element_count() < 1 || hlo::BitWidth(state.shape().element_type()) != 64) {
    return KernelError(instr, "expects a 64-bit state vector and a (state, bits) result, got " +
                                  state.shape().ToString() + " -> " + shape.ToString());
  }
  const hlo::Shape& bits_shape = shape.tuple_shapes(1);
  const int width = hlo::HostByteWidth(bits_shape.element_type());
  if (width > 8 || hlo::IsComplex(bits_shape.element_type())) {
    return KernelError(instr, "cannot fill " + bits_shape.ToString() + " with random bits");
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(bits_shape.ElementCount()));
  std::vector<uint64_t> words(state.element_count());
  std::memcpy(words.data(), state.data().data(), words.size() * 8);
  BitStream stream(algorithm, words);
  hlo::Literal bits(bits_shape);
  uint8_t* out = bits.mutable_data().data();
  for (int64_t i = 0; i < bits.element_count(); ++i) {
    const uint64_t v = width == 8 ? stream.NextDoubleWord() : stream.NextWord();
    std::memcpy(out + i * width, &v, width);  // little-endian: the low bytes
  }
  if (bits_shape.element_type() == hlo::PrimitiveType::kPred) {
    for (int64_t i = 0; i < bits.element_count(); ++i) out[i] &= 1;
  }
  const std::vector<uint64_t> new_state = stream.State(words.size());
  hlo::Literal state_out(state.shape());
  std::memcpy(state_out.mutable_data().data(), new_state.data(), new_state.size() * 8);
  std::vector<hlo::Literal> elements;
  elements.push_back(std::move(state_out));
  elements.push_back(std::move(bits));
  return hlo::Literal::Tuple(std::move(elements));
}

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
  BitStream stream(hlo::RngAlgorithm::kPhilox, {seed, 0, 0});
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
