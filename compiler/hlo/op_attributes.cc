// Generic attribute accessors, the common single attributes, comparisons and
// the small enum configs (op_attributes.h).
#include "compiler/hlo/op_attributes.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/lexer.h"
#include "compiler/hlo/op_attributes_util.h"

namespace kiln::hlo {

using op_attributes_internal::AttrError;
using op_attributes_internal::Annotate;
using op_attributes_internal::RequiredText;
using op_attributes_internal::LookupEnum;

namespace {

template <typename E, size_t N>
Result<E> GetEnum(const Instruction& instr, std::string_view name,
                  const std::array<std::string_view, N>& names, std::optional<E> default_value) {
  if (instr.FindAttribute(name) == nullptr && default_value) return *default_value;
  KILN_ASSIGN_OR_RETURN(std::string text, GetIdentifierAttribute(instr, name));
  std::optional<E> e = LookupEnum<E>(names, text);
  if (!e) {
    std::string expected;
    for (std::string_view n : names) expected += (expected.empty() ? "" : "|") + std::string(n);
    return AttrError(instr, name, "expected " + expected + ", got '" + text + "'");
  }
  return *e;
}

constexpr std::array<std::string_view, 6> kDirectionNames = {"EQ", "NE", "GE", "GT", "LE", "LT"};
constexpr std::array<std::string_view, 4> kComparisonTypeNames = {"FLOAT", "TOTALORDER", "SIGNED",
                                                                  "UNSIGNED"};

}  // namespace

// ---- Generic accessors --------------------------------------------------

Result<int64_t> GetIntAttribute(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, name));
  return Annotate(instr, name, DecodeInt(*text));
}

Result<int64_t> GetIntAttributeOr(const Instruction& instr, std::string_view name,
                                  int64_t default_value) {
  if (instr.FindAttribute(name) == nullptr) return default_value;
  return GetIntAttribute(instr, name);
}

Result<bool> GetBoolAttributeOr(const Instruction& instr, std::string_view name,
                                bool default_value) {
  if (instr.FindAttribute(name) == nullptr) return default_value;
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, name));
  return Annotate(instr, name, DecodeBool(*text));
}

Result<double> GetFloatAttributeOr(const Instruction& instr, std::string_view name,
                                   double default_value) {
  if (instr.FindAttribute(name) == nullptr) return default_value;
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, name));
  double v = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || ptr != text->data() + text->size() || text->empty()) {
    return AttrError(instr, name, "expected a number, got '" + *text + "'");
  }
  return v;
}

Result<std::vector<int64_t>> GetIntListAttribute(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, name));
  return Annotate(instr, name, DecodeIntList(*text));
}

Result<std::vector<int64_t>> GetIntListAttributeOr(const Instruction& instr,
                                                   std::string_view name) {
  if (instr.FindAttribute(name) == nullptr) return std::vector<int64_t>{};
  return GetIntListAttribute(instr, name);
}

Result<std::string> GetStringAttribute(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, name));
  return Annotate(instr, name, DecodeString(*text));
}

Result<std::string> GetIdentifierAttribute(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const std::pmr::string* text, RequiredText(instr, name));
  Lexer lex(*text);
  Token t = lex.Next();
  if (t.kind != TokKind::kIdent || lex.Next().kind != TokKind::kEof) {
    return AttrError(instr, name, "expected an identifier, got '" + std::string(*text) + "'");
  }
  return std::string(*text);
}

Result<std::vector<const Computation*>> GetCalledComputations(const Instruction& instr,
                                                              std::string_view name) {
  const Attribute* a = instr.FindAttribute(name);
  if (a == nullptr) return AttrError(instr, name, "missing");
  if (a->kind != Attribute::Kind::kComputations) {
    return AttrError(instr, name, "expected computation references");
  }
  std::vector<const Computation*> out;
  for (const Computation* c : a->computations) {
    if (c == nullptr) return AttrError(instr, name, "refers to a null computation");
    out.push_back(c);
  }
  return out;
}

Result<const Computation*> GetCalledComputation(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(std::vector<const Computation*> cs, GetCalledComputations(instr, name));
  if (cs.size() != 1) {
    return AttrError(instr, name, "expected one computation, got " + std::to_string(cs.size()));
  }
  return cs[0];
}

// ---- Common single attributes -------------------------------------------

Result<std::vector<int64_t>> GetDimensions(const Instruction& instr) {
  return GetIntListAttribute(instr, "dimensions");
}

Result<int64_t> GetSingleDimension(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, GetDimensions(instr));
  if (dims.size() != 1) {
    return AttrError(instr, "dimensions",
                     "expected exactly one dimension, got " + std::to_string(dims.size()));
  }
  return dims[0];
}

Result<int64_t> GetTupleIndex(const Instruction& instr) { return GetIntAttribute(instr, "index"); }

Result<int64_t> GetIotaDimension(const Instruction& instr) {
  return GetIntAttribute(instr, "iota_dimension");
}

Result<std::vector<int64_t>> GetDynamicSliceSizes(const Instruction& instr) {
  return GetIntListAttribute(instr, "dynamic_slice_sizes");
}

Result<int64_t> GetFeatureGroupCount(const Instruction& instr) {
  return GetIntAttributeOr(instr, "feature_group_count", 1);
}

Result<int64_t> GetBatchGroupCount(const Instruction& instr) {
  return GetIntAttributeOr(instr, "batch_group_count", 1);
}

Result<std::optional<int64_t>> GetChannelId(const Instruction& instr) {
  if (instr.FindAttribute("channel_id") == nullptr) return std::optional<int64_t>();
  KILN_ASSIGN_OR_RETURN(int64_t id, GetIntAttribute(instr, "channel_id"));
  return std::optional<int64_t>(id);
}

// ---- Compare ------------------------------------------------------------------

std::string_view ComparisonDirectionName(ComparisonDirection d) {
  return kDirectionNames[static_cast<size_t>(d)];
}
std::string_view ComparisonTypeName(ComparisonType t) {
  return kComparisonTypeNames[static_cast<size_t>(t)];
}
std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name) {
  return LookupEnum<ComparisonDirection>(kDirectionNames, name);
}
std::optional<ComparisonType> ComparisonTypeFromName(std::string_view name) {
  return LookupEnum<ComparisonType>(kComparisonTypeNames, name);
}

ComparisonType DefaultComparisonType(PrimitiveType t) {
  if (IsFloatingPoint(t) || IsComplex(t)) return ComparisonType::kFloat;
  if (IsSignedInteger(t)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

Result<Comparison> GetComparison(const Instruction& instr) {
  Comparison c;
  KILN_ASSIGN_OR_RETURN(
      c.direction, GetEnum<ComparisonDirection>(instr, "direction", kDirectionNames, std::nullopt));
  if (instr.FindAttribute("type") != nullptr) {
    KILN_ASSIGN_OR_RETURN(
        c.type, GetEnum<ComparisonType>(instr, "type", kComparisonTypeNames, std::nullopt));
    c.type_explicit = true;
  } else {
    const Instruction* lhs = instr.operand_count() > 0 ? instr.operand(0) : nullptr;
    c.type = lhs != nullptr && lhs->shape().IsArray()
                 ? DefaultComparisonType(lhs->shape().element_type())
                 : ComparisonType::kFloat;
  }
  return c;
}

// ---- Other enums and small configs ----------------------------------------

Result<FusionKind> GetFusionKind(const Instruction& instr) {
  constexpr std::array<std::string_view, 4> kNames = {"kLoop", "kInput", "kOutput", "kCustom"};
  return GetEnum<FusionKind>(instr, "kind", kNames, std::nullopt);
}

Result<FftConfig> GetFftConfig(const Instruction& instr) {
  constexpr std::array<std::string_view, 4> kNames = {"FFT", "IFFT", "RFFT", "IRFFT"};
  FftConfig c;
  KILN_ASSIGN_OR_RETURN(c.type, GetEnum<FftType>(instr, "fft_type", kNames, std::nullopt));
  KILN_ASSIGN_OR_RETURN(c.length, GetIntListAttribute(instr, "fft_length"));
  return c;
}

Result<ReducePrecisionConfig> GetReducePrecisionConfig(const Instruction& instr) {
  ReducePrecisionConfig c;
  KILN_ASSIGN_OR_RETURN(c.exponent_bits, GetIntAttribute(instr, "exponent_bits"));
  KILN_ASSIGN_OR_RETURN(c.mantissa_bits, GetIntAttribute(instr, "mantissa_bits"));
  return c;
}

Result<RngDistribution> GetRngDistribution(const Instruction& instr) {
  constexpr std::array<std::string_view, 2> kNames = {"rng_uniform", "rng_normal"};
  return GetEnum<RngDistribution>(instr, "distribution", kNames, std::nullopt);
}

Result<RngAlgorithm> GetRngAlgorithm(const Instruction& instr) {
  constexpr std::array<std::string_view, 3> kNames = {"rng_default", "rng_three_fry", "rng_philox"};
  return GetEnum<RngAlgorithm>(instr, "algorithm", kNames, RngAlgorithm::kDefault);
}

Result<TriangularSolveOptions> GetTriangularSolveOptions(const Instruction& instr) {
  constexpr std::array<std::string_view, 3> kNames = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  TriangularSolveOptions o;
  KILN_ASSIGN_OR_RETURN(o.left_side, GetBoolAttributeOr(instr, "left_side", false));
  KILN_ASSIGN_OR_RETURN(o.lower, GetBoolAttributeOr(instr, "lower", false));
  KILN_ASSIGN_OR_RETURN(o.unit_diagonal, GetBoolAttributeOr(instr, "unit_diagonal", false));
  KILN_ASSIGN_OR_RETURN(o.transpose_a,
                        GetEnum<TriangularSolveTranspose>(instr, "transpose_a", kNames,
                                                          TriangularSolveTranspose::kNoTranspose));
  return o;
}

Result<SortConfig> GetSortConfig(const Instruction& instr) {
  SortConfig c;
  KILN_ASSIGN_OR_RETURN(c.dimension, GetSingleDimension(instr));
  KILN_ASSIGN_OR_RETURN(c.is_stable, GetBoolAttributeOr(instr, "is_stable", false));
  return c;
}

Result<TopKConfig> GetTopKConfig(const Instruction& instr) {
  TopKConfig c;
  KILN_ASSIGN_OR_RETURN(c.k, GetIntAttribute(instr, "k"));
  KILN_ASSIGN_OR_RETURN(c.largest, GetBoolAttributeOr(instr, "largest", true));
  return c;
}

Result<BatchNormConfig> GetBatchNormConfig(const Instruction& instr) {
  BatchNormConfig c;
  if (instr.FindAttribute("epsilon") == nullptr) return AttrError(instr, "epsilon", "missing");
  KILN_ASSIGN_OR_RETURN(c.epsilon, GetFloatAttributeOr(instr, "epsilon", 0));
  KILN_ASSIGN_OR_RETURN(c.feature_index, GetIntAttribute(instr, "feature_index"));
  return c;
}

}  // namespace kiln::hlo
