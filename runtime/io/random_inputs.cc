#include "runtime/io/random_inputs.h"

#include <cmath>
#include <cstring>
#include <random>

#include "compiler/hlo/float_formats.h"
#include "compiler/hlo/instruction.h"
#include "base/str_cat.h"

namespace kiln::runtime::io {
namespace {

using hlo::PrimitiveType;

// Uniform in [-1, 1) on a grid of 2^-23, so every value is exact in f32.
double UnitValue(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 40) / static_cast<double>(uint64_t{1} << 23) - 1.0;
}

// Exclusive upper bound of the random integers of `type`.
uint64_t IntegerLimit(PrimitiveType type) {
  int bits = hlo::BitWidth(type);
  int value_bits = hlo::IsSignedInteger(type) ? bits - 1 : bits;
  if (value_bits >= 2) return 4;
  return uint64_t{1} << value_bits;  // u1: {0, 1}; s2: {0, 1}; s1: {0}
}

void FillArray(hlo::Literal& lit, std::mt19937_64& rng) {
  PrimitiveType type = lit.shape().element_type();
  int64_t count = lit.element_count();
  if (type == PrimitiveType::kPred) {
    for (int64_t i = 0; i < count; ++i) lit.Set<uint8_t>(i, rng() >> 63);
  } else if (hlo::IsInteger(type)) {
    uint64_t limit = IntegerLimit(type);
    int width = hlo::HostByteWidth(type);
    for (int64_t i = 0; i < count; ++i) {
      uint64_t v = (rng() >> 32) % limit;  // little-endian: the low bytes hold the value
      std::memcpy(lit.mutable_data().data() + i * width, &v, width);
    }
  } else if (type == PrimitiveType::kF32) {
    for (int64_t i = 0; i < count; ++i) lit.Set<float>(i, static_cast<float>(UnitValue(rng)));
  } else if (type == PrimitiveType::kF64) {
    for (int64_t i = 0; i < count; ++i) lit.Set<double>(i, UnitValue(rng));
  } else if (type == PrimitiveType::kC64) {
    for (int64_t i = 0; i < 2 * count; ++i) lit.Set<float>(i, static_cast<float>(UnitValue(rng)));
  } else if (type == PrimitiveType::kC128) {
    for (int64_t i = 0; i < 2 * count; ++i) lit.Set<double>(i, UnitValue(rng));
  } else if (type == PrimitiveType::kBF16) {
    for (int64_t i = 0; i < count; ++i) {
      lit.Set<uint16_t>(i, hlo::FloatToBFloat16(static_cast<float>(UnitValue(rng))));
    }
  } else if (type == PrimitiveType::kF16) {
    for (int64_t i = 0; i < count; ++i) {
      lit.Set<uint16_t>(i, hlo::FloatToHalf(static_cast<float>(UnitValue(rng))));
    }
  } else if (const hlo::FloatFormat* format = hlo::NarrowFloatFormat(type)) {
    for (int64_t i = 0; i < count; ++i) {
      double v = UnitValue(rng);
      // Formats without a sign (e8m0) get magnitudes.
      lit.Set<uint8_t>(i, hlo::EncodeNarrowFloat(*format, format->has_sign ? v : std::fabs(v)));
    }
  }
}

Result<hlo::Literal> RandomValue(const hlo::Shape& shape, std::mt19937_64& rng) {
  if (shape.IsTuple()) {
    std::vector<hlo::Literal> elements;
    for (const hlo::Shape& element : shape.tuple_shapes()) {
      KILN_ASSIGN_OR_RETURN(hlo::Literal value, RandomValue(element, rng));
      elements.push_back(std::move(value));
    }
    return hlo::Literal::Tuple(std::move(elements));
  }
  if (shape.IsToken()) return hlo::Literal(shape);  // a token carries no data
  if (!shape.IsArray()) {
    return UnimplementedError(StrCat("cannot make a random value of shape ", shape.ToString()));
  }
  if (shape.ElementCount() < 0) {
    return InvalidArgumentError(
        StrCat("cannot make a random value of shape ", shape.ToString(), ": unbounded or overflowing dimensions"));
  }
  hlo::Literal lit(shape);
  FillArray(lit, rng);
  return lit;
}

}  // namespace

Result<hlo::Literal> RandomLiteral(const hlo::Shape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return RandomValue(shape, rng);
}

Result<std::vector<hlo::Literal>> RandomArguments(const hlo::Module& module, uint64_t seed) {
  if (module.entry() == nullptr) return InvalidArgumentError("module has no entry computation");
  std::vector<hlo::Shape> shapes;
  const auto& parameters = module.entry()->parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr) return InvalidArgumentError(StrCat("entry parameter ", i, " is missing"));
    shapes.push_back(parameters[i]->shape());
  }
  return RandomArguments(shapes, seed);
}

Result<std::vector<hlo::Literal>> RandomArguments(std::span<const hlo::Shape> parameter_shapes,
                                                  uint64_t seed) {
  std::vector<hlo::Literal> args;
  for (size_t i = 0; i < parameter_shapes.size(); ++i) {
    // Parameter i's stream depends only on (seed, i).
    uint64_t parameter_seed = seed ^ (0x9e3779b97f4a7c15ULL * (i + 1));
    auto value = RandomLiteral(parameter_shapes[i], parameter_seed);
    if (!value) return value.error().WithContext(StrCat("parameter ", i));
    args.push_back(std::move(*value));
  }
  return args;
}

}  // namespace kiln::runtime::io
