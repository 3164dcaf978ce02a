#include "compiler/hlo/op_attributes.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/lexer.h"

namespace kiln::hlo {
namespace {

std::unexpected<Error> AttrError(const Instruction& instr, std::string_view name,
                                 std::string_view message) {
  return MakeError("instruction %" + instr.name() + ": attribute " + std::string(name) + ": " +
                   std::string(message));
}

// Wraps a decoder error with the instruction and attribute names.
template <typename T>
Result<T> Annotate(const Instruction& instr, std::string_view name, Result<T> r) {
  if (!r) return AttrError(instr, name, r.error().message);
  return r;
}

Result<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    return MakeError("expected an integer, got '" + std::string(s) + "'");
  }
  return v;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// `3x3`, `3` -> {3, 3}, {3}.
Result<std::vector<int64_t>> ParseDxD(std::string_view s) {
  std::vector<int64_t> out;
  for (std::string_view part : Split(s, 'x')) {
    KILN_ASSIGN_OR_RETURN(int64_t v, ParseInt(part));
    out.push_back(v);
  }
  return out;
}

// `1_1x0_2_1` -> {{1,1,0}, {0,2,1}}; interior is 0 when absent.
Result<std::vector<std::array<int64_t, 3>>> ParsePads(std::string_view s, bool allow_interior) {
  std::vector<std::array<int64_t, 3>> out;
  for (std::string_view part : Split(s, 'x')) {
    std::vector<std::string_view> fields = Split(part, '_');
    if (fields.size() != 2 && !(allow_interior && fields.size() == 3)) {
      return MakeError("malformed padding '" + std::string(part) + "'");
    }
    std::array<int64_t, 3> v = {0, 0, 0};
    for (size_t i = 0; i < fields.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(v[i], ParseInt(fields[i]));
    }
    out.push_back(v);
  }
  return out;
}

Result<const std::string*> RequiredText(const Instruction& instr, std::string_view name) {
  const Attribute* a = instr.FindAttribute(name);
  if (a == nullptr) return AttrError(instr, name, "missing");
  if (a->kind != Attribute::Kind::kText && a->kind != Attribute::Kind::kRaw) {
    return AttrError(instr, name, "expected a value, got a reference");
  }
  return &a->value;
}

template <typename E, size_t N>
std::optional<E> LookupEnum(const std::array<std::string_view, N>& names, std::string_view s) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

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
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, name));
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
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, name));
  return Annotate(instr, name, DecodeBool(*text));
}

Result<double> GetFloatAttributeOr(const Instruction& instr, std::string_view name,
                                   double default_value) {
  if (instr.FindAttribute(name) == nullptr) return default_value;
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, name));
  double v = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || ptr != text->data() + text->size() || text->empty()) {
    return AttrError(instr, name, "expected a number, got '" + *text + "'");
  }
  return v;
}

Result<std::vector<int64_t>> GetIntListAttribute(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, name));
  return Annotate(instr, name, DecodeIntList(*text));
}

Result<std::vector<int64_t>> GetIntListAttributeOr(const Instruction& instr,
                                                   std::string_view name) {
  if (instr.FindAttribute(name) == nullptr) return std::vector<int64_t>{};
  return GetIntListAttribute(instr, name);
}

Result<std::string> GetStringAttribute(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, name));
  return Annotate(instr, name, DecodeString(*text));
}

Result<std::string> GetIdentifierAttribute(const Instruction& instr, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, name));
  Lexer lex(*text);
  Token t = lex.Next();
  if (t.kind != TokKind::kIdent || lex.Next().kind != TokKind::kEof) {
    return AttrError(instr, name, "expected an identifier, got '" + *text + "'");
  }
  return *text;
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

// ---- Windows ----------------------------------------------------------------

Result<Window> ParseWindow(std::string_view text) {
  Lexer lex(text);
  if (lex.Next().kind != TokKind::kLbrace) return MakeError("expected '{'");
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::array<int64_t, 3>> pad;
  bool seen_size = false;
  while (true) {
    Token key = lex.Next();
    if (key.kind == TokKind::kRbrace) break;
    if (key.kind != TokKind::kAttributeName) {
      return MakeError("expected a window field such as size=, got '" + std::string(key.text) +
                       "'");
    }
    Token value = lex.Next();
    std::string_view field = key.text;
    if (field == "pad") {
      if (value.kind != TokKind::kPad) return MakeError("pad expects low_high values");
      KILN_ASSIGN_OR_RETURN(pad, ParsePads(value.text, /*allow_interior=*/false));
      continue;
    }
    if (value.kind != TokKind::kDxD && value.kind != TokKind::kInt) {
      return MakeError(std::string(field) + " expects NxM values, got '" + std::string(value.text) +
                       "'");
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseDxD(value.text));
    if (field == "size") {
      size = std::move(v);
      seen_size = true;
    } else if (field == "stride") {
      stride = std::move(v);
    } else if (field == "lhs_dilate") {
      lhs_dilate = std::move(v);
    } else if (field == "rhs_dilate") {
      rhs_dilate = std::move(v);
    } else if (field == "rhs_reversal") {
      reversal = std::move(v);
    } else {
      return MakeError("unknown window field '" + std::string(field) + "'");
    }
  }
  if (lex.Next().kind != TokKind::kEof) return MakeError("unexpected text after window");
  if (!seen_size) return MakeError("window has no size");
  const size_t rank = size.size();
  auto check = [&](size_t n, const char* what) -> Status {
    if (n != 0 && n != rank) {
      return MakeError(std::string(what) + " has " + std::to_string(n) + " entries but size has " +
                       std::to_string(rank));
    }
    return Ok();
  };
  KILN_RETURN_IF_ERROR(check(stride.size(), "stride"));
  KILN_RETURN_IF_ERROR(check(pad.size(), "pad"));
  KILN_RETURN_IF_ERROR(check(lhs_dilate.size(), "lhs_dilate"));
  KILN_RETURN_IF_ERROR(check(rhs_dilate.size(), "rhs_dilate"));
  KILN_RETURN_IF_ERROR(check(reversal.size(), "rhs_reversal"));
  Window w;
  w.dimensions.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    WindowDimension& d = w.dimensions[i];
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) {
      d.padding_low = pad[i][0];
      d.padding_high = pad[i][1];
    }
    if (!lhs_dilate.empty()) d.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.window_dilation = rhs_dilate[i];
    if (!reversal.empty()) {
      if (reversal[i] != 0 && reversal[i] != 1)
        return MakeError("rhs_reversal values must be 0 or 1");
      d.window_reversal = reversal[i] == 1;
    }
  }
  return w;
}

Result<Window> GetWindow(const Instruction& instr) {
  if (instr.FindAttribute("window") == nullptr) return Window{};
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, "window"));
  return Annotate(instr, "window", ParseWindow(*text));
}

// ---- Slices and padding ---------------------------------------------------

Result<SliceSpec> ParseSliceSpec(std::string_view text) {
  Lexer lex(text);
  if (lex.Next().kind != TokKind::kLbrace) return MakeError("expected '{'");
  SliceSpec spec;
  Token t = lex.Next();
  while (t.kind != TokKind::kRbrace) {
    if (t.kind != TokKind::kLsquare) return MakeError("expected '[start:limit]'");
    int64_t v[3] = {0, 0, 1};
    int n = 0;
    while (true) {
      Token num = lex.Next();
      if (num.kind != TokKind::kInt) return MakeError("expected an integer in slice bounds");
      KILN_ASSIGN_OR_RETURN(v[n], ParseInt(num.text));
      ++n;
      Token sep = lex.Next();
      if (sep.kind == TokKind::kRsquare) break;
      if (sep.kind != TokKind::kColon || n == 3) return MakeError("expected ':' or ']' in slice");
    }
    if (n < 2) return MakeError("slice dimension needs start:limit");
    spec.starts.push_back(v[0]);
    spec.limits.push_back(v[1]);
    spec.strides.push_back(v[2]);
    t = lex.Next();
    if (t.kind == TokKind::kComma) {
      t = lex.Next();
    } else if (t.kind != TokKind::kRbrace) {
      return MakeError("expected ',' or '}' in slice");
    }
  }
  if (lex.Next().kind != TokKind::kEof) return MakeError("unexpected text after slice");
  return spec;
}

Result<SliceSpec> GetSliceSpec(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, "slice"));
  return Annotate(instr, "slice", ParseSliceSpec(*text));
}

Result<PaddingConfig> ParsePaddingConfig(std::string_view text) {
  PaddingConfig config;
  if (text.empty()) return config;  // rank 0
  Lexer lex(text);
  Token t = lex.Next();
  if (t.kind != TokKind::kPad || lex.Next().kind != TokKind::kEof) {
    return MakeError("expected low_high[_interior] per dimension, got '" + std::string(text) + "'");
  }
  KILN_ASSIGN_OR_RETURN(auto pads, ParsePads(t.text, /*allow_interior=*/true));
  for (const auto& p : pads) config.dimensions.push_back({p[0], p[1], p[2]});
  return config;
}

Result<PaddingConfig> GetPaddingConfig(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, "padding"));
  return Annotate(instr, "padding", ParsePaddingConfig(*text));
}

// ---- Convolution ------------------------------------------------------------

namespace {

// Decodes one part of dim_labels. `a`/`b` are the two letters of the part
// (b,f / i,o); spatial positions are returned by digit.
Status ParseConvPart(std::string_view part, char a, char b, int64_t* pos_a, int64_t* pos_b,
                     std::vector<int64_t>* spatial, const char* what) {
  *pos_a = -1;
  *pos_b = -1;
  std::vector<int64_t> by_digit(10, -1);
  int64_t digits = 0;
  for (size_t i = 0; i < part.size(); ++i) {
    char c = part[i];
    int64_t pos = static_cast<int64_t>(i);
    if (c == '?') continue;
    if (c == a || c == b) {
      int64_t* slot = c == a ? pos_a : pos_b;
      if (*slot != -1) return MakeError(std::string(what) + " repeats '" + std::string(1, c) + "'");
      *slot = pos;
    } else if (c >= '0' && c <= '9') {
      if (by_digit[c - '0'] != -1) {
        return MakeError(std::string(what) + " repeats spatial dimension " + std::string(1, c));
      }
      by_digit[c - '0'] = pos;
      ++digits;
    } else {
      return MakeError(std::string(what) + " has unexpected label '" + std::string(1, c) + "'");
    }
  }
  if (*pos_a == -1 || *pos_b == -1) {
    return MakeError(std::string(what) + " must contain '" + std::string(1, a) + "' and '" +
                     std::string(1, b) + "'");
  }
  spatial->clear();
  for (int64_t d = 0; d < digits; ++d) {
    if (by_digit[d] == -1) {
      return MakeError(std::string(what) + " is missing spatial dimension " + std::to_string(d));
    }
    spatial->push_back(by_digit[d]);
  }
  return Ok();
}

}  // namespace

Result<ConvolutionDimensionNumbers> ParseConvolutionDimensionNumbers(std::string_view text) {
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < underscore) {
    return MakeError("expected lhs_rhs->out, got '" + std::string(text) + "'");
  }
  std::string_view lhs = text.substr(0, underscore);
  std::string_view rhs = text.substr(underscore + 1, arrow - underscore - 1);
  std::string_view out = text.substr(arrow + 2);
  ConvolutionDimensionNumbers d;
  KILN_RETURN_IF_ERROR(ParseConvPart(lhs, 'b', 'f', &d.input_batch_dimension,
                                     &d.input_feature_dimension, &d.input_spatial_dimensions,
                                     "lhs dimension labels"));
  KILN_RETURN_IF_ERROR(ParseConvPart(rhs, 'i', 'o', &d.kernel_input_feature_dimension,
                                     &d.kernel_output_feature_dimension,
                                     &d.kernel_spatial_dimensions, "rhs dimension labels"));
  KILN_RETURN_IF_ERROR(ParseConvPart(out, 'b', 'f', &d.output_batch_dimension,
                                     &d.output_feature_dimension, &d.output_spatial_dimensions,
                                     "output dimension labels"));
  if (d.input_spatial_dimensions.size() != d.kernel_spatial_dimensions.size() ||
      d.input_spatial_dimensions.size() != d.output_spatial_dimensions.size()) {
    return MakeError("lhs, rhs and output must have the same number of spatial dimensions in '" +
                     std::string(text) + "'");
  }
  d.input_rank = static_cast<int64_t>(lhs.size());
  d.kernel_rank = static_cast<int64_t>(rhs.size());
  d.output_rank = static_cast<int64_t>(out.size());
  return d;
}

Result<ConvolutionDimensionNumbers> GetConvolutionDimensionNumbers(const Instruction& instr) {
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, "dim_labels"));
  return Annotate(instr, "dim_labels", ParseConvolutionDimensionNumbers(*text));
}

// ---- Dot ----------------------------------------------------------------------

Result<DotDimensionNumbers> GetDotDimensionNumbers(const Instruction& instr) {
  DotDimensionNumbers d;
  KILN_ASSIGN_OR_RETURN(d.lhs_batch_dimensions, GetIntListAttributeOr(instr, "lhs_batch_dims"));
  KILN_ASSIGN_OR_RETURN(d.rhs_batch_dimensions, GetIntListAttributeOr(instr, "rhs_batch_dims"));
  KILN_ASSIGN_OR_RETURN(d.lhs_contracting_dimensions,
                        GetIntListAttributeOr(instr, "lhs_contracting_dims"));
  KILN_ASSIGN_OR_RETURN(d.rhs_contracting_dimensions,
                        GetIntListAttributeOr(instr, "rhs_contracting_dims"));
  return d;
}

Result<std::vector<Precision>> GetOperandPrecision(const Instruction& instr) {
  std::vector<Precision> out;
  if (instr.FindAttribute("operand_precision") == nullptr) return out;
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, "operand_precision"));
  constexpr std::array<std::string_view, 4> kNames = {"default", "high", "highest",
                                                      "packed_nibble"};
  Lexer lex(*text);
  Token t = lex.Next();
  if (t.kind != TokKind::kLbrace) return AttrError(instr, "operand_precision", "expected '{'");
  t = lex.Next();
  while (t.kind != TokKind::kRbrace) {
    std::string lower(t.text);
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    std::optional<Precision> p = LookupEnum<Precision>(kNames, lower);
    if (t.kind != TokKind::kIdent || !p) {
      return AttrError(instr, "operand_precision",
                       "unknown precision '" + std::string(t.text) + "'");
    }
    out.push_back(*p);
    t = lex.Next();
    if (t.kind == TokKind::kComma)
      t = lex.Next();
    else if (t.kind != TokKind::kRbrace)
      return AttrError(instr, "operand_precision", "expected ',' or '}'");
  }
  return out;
}

// ---- Gather / scatter -----------------------------------------------------

Result<GatherDimensionNumbers> GetGatherDimensionNumbers(const Instruction& instr) {
  GatherDimensionNumbers d;
  KILN_ASSIGN_OR_RETURN(d.offset_dims, GetIntListAttribute(instr, "offset_dims"));
  KILN_ASSIGN_OR_RETURN(d.collapsed_slice_dims, GetIntListAttribute(instr, "collapsed_slice_dims"));
  KILN_ASSIGN_OR_RETURN(d.start_index_map, GetIntListAttribute(instr, "start_index_map"));
  KILN_ASSIGN_OR_RETURN(d.index_vector_dim, GetIntAttribute(instr, "index_vector_dim"));
  KILN_ASSIGN_OR_RETURN(d.operand_batching_dims,
                        GetIntListAttributeOr(instr, "operand_batching_dims"));
  KILN_ASSIGN_OR_RETURN(d.start_indices_batching_dims,
                        GetIntListAttributeOr(instr, "start_indices_batching_dims"));
  return d;
}

Result<std::vector<int64_t>> GetGatherSliceSizes(const Instruction& instr) {
  return GetIntListAttribute(instr, "slice_sizes");
}

Result<ScatterDimensionNumbers> GetScatterDimensionNumbers(const Instruction& instr) {
  ScatterDimensionNumbers d;
  KILN_ASSIGN_OR_RETURN(d.update_window_dims, GetIntListAttribute(instr, "update_window_dims"));
  KILN_ASSIGN_OR_RETURN(d.inserted_window_dims, GetIntListAttribute(instr, "inserted_window_dims"));
  KILN_ASSIGN_OR_RETURN(d.scatter_dims_to_operand_dims,
                        GetIntListAttribute(instr, "scatter_dims_to_operand_dims"));
  KILN_ASSIGN_OR_RETURN(d.index_vector_dim, GetIntAttribute(instr, "index_vector_dim"));
  KILN_ASSIGN_OR_RETURN(d.input_batching_dims, GetIntListAttributeOr(instr, "input_batching_dims"));
  KILN_ASSIGN_OR_RETURN(d.scatter_indices_batching_dims,
                        GetIntListAttributeOr(instr, "scatter_indices_batching_dims"));
  return d;
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

// ---- Collectives ------------------------------------------------------------

namespace {

// `[a,b,...]` from the lexer; the '[' must be next.
Result<std::vector<int64_t>> LexSquareList(Lexer& lex) {
  if (lex.Next().kind != TokKind::kLsquare) return MakeError("expected '['");
  std::vector<int64_t> out;
  while (true) {
    Token t = lex.Next();
    if (t.kind != TokKind::kInt) return MakeError("expected an integer in [...]");
    KILN_ASSIGN_OR_RETURN(int64_t v, ParseInt(t.text));
    out.push_back(v);
    t = lex.Next();
    if (t.kind == TokKind::kRsquare) return out;
    if (t.kind != TokKind::kComma) return MakeError("expected ',' or ']'");
  }
}

Result<int64_t> Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 24)) {
      return MakeError("iota replica group list is too large or negative");
    }
  }
  return n;
}

// `[G,S]<=[r0,r1,...]T(p0,p1,...)`: iota over the reshape dims, transposed by
// the permutation, read out in row-major order as G groups of S.
Result<std::vector<std::vector<int64_t>>> ParseIotaGroups(std::string_view text) {
  Lexer lex(text);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> group_dims, LexSquareList(lex));
  if (lex.Next().kind != TokKind::kLeq) return MakeError("expected '<=' in iota replica groups");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> reshape, LexSquareList(lex));
  std::vector<int64_t> perm(reshape.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  Token t = lex.Next();
  if (t.kind == TokKind::kIdent && t.text == "T") {
    if (lex.Next().kind != TokKind::kLparen) return MakeError("expected '(' after T");
    perm.clear();
    while (true) {
      Token n = lex.Next();
      if (n.kind != TokKind::kInt) return MakeError("expected an integer in T(...)");
      KILN_ASSIGN_OR_RETURN(int64_t v, ParseInt(n.text));
      perm.push_back(v);
      n = lex.Next();
      if (n.kind == TokKind::kRparen) break;
      if (n.kind != TokKind::kComma) return MakeError("expected ',' or ')' in T(...)");
    }
    t = lex.Next();
  }
  if (t.kind != TokKind::kEof) return MakeError("unexpected text after iota replica groups");
  if (group_dims.size() < 1) return MakeError("iota replica groups need a group shape");
  KILN_ASSIGN_OR_RETURN(int64_t total, Product(group_dims));
  KILN_ASSIGN_OR_RETURN(int64_t reshape_total, Product(reshape));
  if (total != reshape_total) return MakeError("iota replica group sizes do not match");
  std::vector<bool> seen(perm.size(), false);
  if (perm.size() != reshape.size()) return MakeError("transpose permutation has the wrong rank");
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      return MakeError("invalid transpose permutation in iota replica groups");
    }
    seen[p] = true;
  }
  // Transposed dims and strides of the original (row-major) iota array.
  const size_t rank = reshape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * reshape[i];
  std::vector<int64_t> tdims(rank), tstrides(rank), index(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    tdims[i] = reshape[perm[i]];
    tstrides[i] = strides[perm[i]];
  }
  const int64_t group_size = group_dims.back();
  std::vector<std::vector<int64_t>> groups;
  std::vector<int64_t> current;
  for (int64_t n = 0; n < total; ++n) {
    int64_t value = 0;
    for (size_t i = 0; i < rank; ++i) value += index[i] * tstrides[i];
    current.push_back(value);
    if (static_cast<int64_t>(current.size()) == group_size) {
      groups.push_back(std::move(current));
      current.clear();
    }
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < tdims[i]) break;
      index[i] = 0;
    }
  }
  return groups;
}

}  // namespace

Result<std::vector<std::vector<int64_t>>> ParseReplicaGroups(std::string_view text) {
  if (!text.empty() && text.front() == '[') return ParseIotaGroups(text);
  return DecodeIntListList(text);
}

Result<std::vector<std::vector<int64_t>>> GetReplicaGroups(const Instruction& instr) {
  if (instr.FindAttribute("replica_groups") == nullptr) {
    return std::vector<std::vector<int64_t>>{};
  }
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, "replica_groups"));
  return Annotate(instr, "replica_groups", ParseReplicaGroups(*text));
}

Result<std::vector<std::pair<int64_t, int64_t>>> GetSourceTargetPairs(const Instruction& instr) {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (instr.FindAttribute("source_target_pairs") == nullptr) return out;
  KILN_ASSIGN_OR_RETURN(const std::string* text, RequiredText(instr, "source_target_pairs"));
  KILN_ASSIGN_OR_RETURN(auto lists,
                        Annotate(instr, "source_target_pairs", DecodeIntListList(*text)));
  for (const auto& pair : lists) {
    if (pair.size() != 2)
      return AttrError(instr, "source_target_pairs", "expected {source,target} pairs");
    out.emplace_back(pair[0], pair[1]);
  }
  return out;
}

}  // namespace kiln::hlo
