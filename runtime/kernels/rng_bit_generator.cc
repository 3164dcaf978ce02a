// rng-bit-generator with the bits and state layout of XLA's expansion
// (rng_bit_generator_expander + the ThreeFry/Philox generators of the XLA
// builder library), so a program sees the numbers it would see under XLA.
//
// key = state[0] in both algorithms; the new state keeps the key.
//   ThreeFry (state u64[2]): 64-bit counter c = state[1].
//     64-bit elements: element i = ThreeFry2x32(key, c + i), low word first;
//       the counter advances by the element count.
//     32-bit elements: the shape is halved along one dimension (the first of
//       even size, else the first largest); element (.., j, ..) is word j % 2
//       of ThreeFry2x32(key, c + half-index(.., j / 2, ..)); the counter
//       advances by the half shape's element count.
//   Philox (RNG_PHILOX and RNG_DEFAULT, as XLA's CPU and GPU backends pick):
//     128-bit counter (state[1], state[2]) for u64[3]; for u64[2] it is
//     (state[1], state[0]) and only its low word is written back.
//     32-bit elements: element i is word i % 4 of block i / 4 (block b =
//       Philox4x32-10(key, counter + b)); 64-bit elements: element i is words
//       (0,1) or (2,3) of block i / 2. The counter advances by the blocks used.
// Narrower types (16-, 8-bit, sub-byte, pred) take the low bits of the 32-bit
// words, as XLA's generators do for 16- and 8-bit types.
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/hlo/op_attributes.h"
#include "runtime/kernels/counter_rng.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace kiln::runtime {
namespace {

std::array<uint32_t, 2> Split(uint64_t v) {
  return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}

uint64_t Join(uint32_t lo, uint32_t hi) { return lo | (uint64_t{hi} << 32); }

// Writes `bits` (a 32- or 64-bit word) as element i of `out`, keeping the low
// bits that fit the element type (sign-extended for signed sub-byte types).
void StoreBits(hlo::Literal& out, int64_t i, uint64_t bits) {
  const hlo::PrimitiveType type = out.shape().element_type();
  const int width = hlo::HostByteWidth(type);
  const int bit_width = hlo::BitWidth(type);
  if (bit_width < 8) {
    uint8_t v = static_cast<uint8_t>(bits & ((1u << bit_width) - 1));
    if (hlo::IsSignedInteger(type) && (v >> (bit_width - 1)) != 0) {
      v = static_cast<uint8_t>(v | (0xFFu << bit_width));
    }
    out.mutable_data()[i] = v;
    return;
  }
  std::memcpy(out.mutable_data().data() + i * width, &bits, width);  // little-endian
}

// ThreeFry, 64-bit elements.
uint64_t ThreeFryBits64(hlo::Literal& out, uint64_t key, uint64_t counter) {
  const int64_t n = out.element_count();
  for (int64_t i = 0; i < n; ++i) {
    auto words = ThreeFry2x32(Split(counter + static_cast<uint64_t>(i)), Split(key));
    StoreBits(out, i, Join(words[0], words[1]));
  }
  return counter + static_cast<uint64_t>(n);
}

// ThreeFry, 32-bit (and narrower) elements over a halved shape.
uint64_t ThreeFryBits32(hlo::Literal& out, uint64_t key, uint64_t counter) {
  const std::vector<int64_t>& dims = out.shape().dimensions();
  if (dims.empty()) {
    StoreBits(out, 0, ThreeFry2x32(Split(counter), Split(key))[0]);
    return counter + 1;
  }
  int64_t split = -1;
  for (size_t d = 0; d < dims.size() && split < 0; ++d) {
    if (dims[d] % 2 == 0) split = static_cast<int64_t>(d);
  }
  if (split < 0) {
    split = 0;
    for (size_t d = 1; d < dims.size(); ++d) {
      if (dims[d] > dims[split]) split = static_cast<int64_t>(d);
    }
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < split; ++d) outer *= dims[d];
  for (size_t d = split + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t mid = dims[split];
  const int64_t half_mid = (mid + 1) / 2;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t h = 0; h < half_mid; ++h) {
      for (int64_t k = 0; k < inner; ++k) {
        const uint64_t half_index = static_cast<uint64_t>((o * half_mid + h) * inner + k);
        const auto words = ThreeFry2x32(Split(counter + half_index), Split(key));
        for (int64_t w = 0; w < 2 && 2 * h + w < mid; ++w) {
          StoreBits(out, (o * mid + 2 * h + w) * inner + k, words[w]);
        }
      }
    }
  }
  return counter + static_cast<uint64_t>(outer * half_mid * inner);
}

// A 128-bit Philox counter, low word first.
struct Counter128 {
  uint64_t low = 0;
  uint64_t high = 0;

  Counter128 Plus(uint64_t n) const {
    Counter128 c{low + n, high};
    if (c.low < low) ++c.high;
    return c;
  }
  std::array<uint32_t, 4> Words() const {
    return {static_cast<uint32_t>(low), static_cast<uint32_t>(low >> 32),
            static_cast<uint32_t>(high), static_cast<uint32_t>(high >> 32)};
  }
};

Counter128 PhiloxBits(hlo::Literal& out, uint64_t key, Counter128 counter) {
  const int64_t n = out.element_count();
  const bool wide = hlo::BitWidth(out.shape().element_type()) == 64;
  const int64_t per_block = wide ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t b = 0; b < blocks; ++b) {
    const auto words = Philox4x32(counter.Plus(static_cast<uint64_t>(b)).Words(), Split(key));
    for (int64_t j = 0; j < per_block && b * per_block + j < n; ++j) {
      const uint64_t bits = wide ? Join(words[2 * j], words[2 * j + 1]) : words[j];
      StoreBits(out, b * per_block + j, bits);
    }
  }
  return counter.Plus(static_cast<uint64_t>(blocks));
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
      state.element_count() < 2 || hlo::BitWidth(state.shape().element_type()) != 64) {
    return KernelError(instr,
                       "expects a state of at least two 64-bit words and a (state, bits) "
                       "result, got " +
                           state.shape().ToString() + " -> " + shape.ToString());
  }
  const hlo::Shape& bits_shape = shape.tuple_shapes(1);
  const hlo::PrimitiveType type = bits_shape.element_type();
  const int bit_width = hlo::BitWidth(type);
  if (bit_width > 64 || hlo::IsComplex(type)) {
    return KernelError(instr, "cannot fill " + bits_shape.ToString() + " with random bits");
  }
  KILN_RETURN_IF_ERROR(ctx.Charge(bits_shape.ElementCount()));
  std::vector<uint64_t> words(static_cast<size_t>(state.element_count()));
  std::memcpy(words.data(), state.data().data(), words.size() * sizeof(uint64_t));
  const uint64_t key = words[0];

  hlo::Literal bits(bits_shape);
  if (algorithm == hlo::RngAlgorithm::kThreeFry) {
    words[1] =
        bit_width == 64 ? ThreeFryBits64(bits, key, words[1]) : ThreeFryBits32(bits, key, words[1]);
  } else {
    const bool three_words = words.size() >= 3;
    const Counter128 counter{words[1], three_words ? words[2] : words[0]};
    const Counter128 next = PhiloxBits(bits, key, counter);
    words[1] = next.low;
    if (three_words) words[2] = next.high;
  }
  hlo::Literal state_out(state.shape());
  std::memcpy(state_out.mutable_data().data(), words.data(), words.size() * sizeof(uint64_t));
  std::vector<hlo::Literal> elements;
  elements.push_back(std::move(state_out));
  elements.push_back(std::move(bits));
  return hlo::Literal::Tuple(std::move(elements));
}

}  // namespace kiln::runtime
