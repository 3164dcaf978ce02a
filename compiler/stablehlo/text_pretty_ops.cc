// Pretty (custom assembly) forms of the StableHLO, CHLO, func and check ops,
// read into the attributes their generic forms carry: `stablehlo.add %a, %b
// : T`, `stablehlo.broadcast_in_dim %x, dims = [0] : (T) -> U`,
// `stablehlo.compare GT, %a, %b, FLOAT : ...`, `stablehlo.slice %x [0:2]`,
// `stablehlo.custom_call @t(%a) {...} : ...`, `call @f(%a) : ...`, ... The
// region forms (reduce, while, convolution windows) are in
// text_pretty_regions.cc.
#include <array>

#include "compiler/stablehlo/text_parser_internal.h"

namespace kiln::stablehlo::text_internal {
namespace {

// A keyword written after the operands (`dims = [1, 0]`) and the generic
// attribute it stands for.
enum class KeywordValue : uint8_t { kIntList, kInt, kEnum, kBool, kString, kPrecisionList, kPrecisionFormat };
struct Keyword {
  std::string_view op;       // op name without dialect
  std::string_view keyword;  // as written
  std::string_view attr;     // generic attribute name
  KeywordValue value;
  std::string_view enum_name = {};  // kEnum: the enum's mnemonic
};

constexpr std::array<Keyword, 24> kKeywords = {{
    {"broadcast_in_dim", "dims", "broadcast_dimensions", KeywordValue::kIntList},
    {"dynamic_broadcast_in_dim", "dims", "broadcast_dimensions", KeywordValue::kIntList},
    {"dynamic_broadcast_in_dim", "known_expanding_dimensions", "known_expanding_dimensions", KeywordValue::kIntList},
    {"dynamic_broadcast_in_dim", "known_nonexpanding_dimensions", "known_nonexpanding_dimensions",
     KeywordValue::kIntList},
    {"transpose", "dims", "permutation", KeywordValue::kIntList},
    {"reverse", "dims", "dimensions", KeywordValue::kIntList},
    {"concatenate", "dim", "dimension", KeywordValue::kInt},
    {"pad", "low", "edge_padding_low", KeywordValue::kIntList},
    {"pad", "high", "edge_padding_high", KeywordValue::kIntList},
    {"pad", "interior", "interior_padding", KeywordValue::kIntList},
    {"dynamic_slice", "sizes", "slice_sizes", KeywordValue::kIntList},
    {"get_dimension_size", "dim", "dimension", KeywordValue::kInt},
    {"set_dimension_size", "dim", "dimension", KeywordValue::kInt},
    {"dynamic_iota", "dim", "iota_dimension", KeywordValue::kInt},
    {"iota", "dim", "iota_dimension", KeywordValue::kInt},
    {"reduce_precision", "format", "", KeywordValue::kPrecisionFormat},
    {"fft", "type", "fft_type", KeywordValue::kEnum, "fft_type"},
    {"fft", "length", "fft_length", KeywordValue::kIntList},
    {"rng_bit_generator", "algorithm", "rng_algorithm", KeywordValue::kEnum, "rng_algorithm"},
    {"rng", "distribution", "rng_distribution", KeywordValue::kEnum, "rng_distribution"},
    {"cholesky", "lower", "lower", KeywordValue::kBool},
    {"einsum", "config", "einsum_config", KeywordValue::kString},
    {"broadcast", "sizes", "broadcast_sizes", KeywordValue::kIntList},
    {"dot", "precision", "precision_config", KeywordValue::kPrecisionList},
}};

const Keyword* FindKeyword(std::string_view op, std::string_view keyword) {
  for (const Keyword& k : kKeywords) {
    if (k.op == op && k.keyword == keyword) return &k;
  }
  return nullptr;
}

std::string_view ShortName(std::string_view name) {
  const size_t dot = name.find('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// `[DEFAULT, HIGHEST]`: precision enums.
Result<const Attr*> ParsePrecisionList(Parser& p) {
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kLSquare, "to open a precision list"));
  Attr* a = p.NewAttr(Attr::Kind::kArray);
  while (!p.Is(Tok::kRSquare)) {
    if (!p.Is(Tok::kBareId)) return p.Expected("a precision");
    a->items.push_back(p.EnumAttr("precision", p.tok().text));
    p.Advance();
    if (!p.Consume(Tok::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kRSquare, "to close a precision list"));
  return a;
}

// `kw = value` after the operands of `op`; appends the generic attribute.
Status ParseKeyword(Parser& p, Operation& op) {
  const Token kw = p.tok();
  const std::string_view short_name = ShortName(op.name);
  p.Advance();
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "after " + std::string(kw.text)));
  MlirModule& m = p.module();
  if (short_name == "dot_general") {
    if (kw.text == "batching_dims" || kw.text == "contracting_dims") {
      KILN_ASSIGN_OR_RETURN(const Attr* lhs, p.ParseIntListAttr());
      if (!p.ConsumeBare("x")) return p.Expected("'x' between lhs and rhs dimensions");
      KILN_ASSIGN_OR_RETURN(const Attr* rhs, p.ParseIntListAttr());
      const bool batch = kw.text == "batching_dims";
      // Kept as fields of one #stablehlo.dot, as the generic form has them.
      Attr* dims = nullptr;
      for (NamedAttr& a : op.attrs) {
        if (a.name == "dot_dimension_numbers") dims = const_cast<Attr*>(a.value);
      }
      if (dims == nullptr) {
        dims = p.NewAttr(Attr::Kind::kStruct);
        dims->dialect_name = "stablehlo.dot";
        op.attrs.push_back({m.Intern("dot_dimension_numbers"), dims});
      }
      dims->fields.push_back({m.Intern(batch ? "lhs_batching_dimensions" : "lhs_contracting_dimensions"), lhs});
      dims->fields.push_back({m.Intern(batch ? "rhs_batching_dimensions" : "rhs_contracting_dimensions"), rhs});
      return Ok();
    }
    if (kw.text == "precision") {
      KILN_ASSIGN_OR_RETURN(const Attr* list, ParsePrecisionList(p));
      op.attrs.push_back({m.Intern("precision_config"), list});
      return Ok();
    }
    if (kw.text == "algorithm") {
      // algorithm = <lhs_precision_type = f32, ...>
      KILN_RETURN_IF_ERROR(p.Expect(Tok::kLess, "after algorithm ="));
      Attr* a = p.NewAttr(Attr::Kind::kStruct);
      a->dialect_name = "stablehlo.dot_algorithm";
      while (!p.Is(Tok::kGreater)) {
        if (!p.Is(Tok::kBareId)) return p.Expected("an algorithm field");
        std::string_view field = m.Intern(p.tok().text);
        p.Advance();
        KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "in algorithm"));
        KILN_ASSIGN_OR_RETURN(const Attr* v, p.ParseAttribute());
        a->fields.push_back({field, v});
        if (!p.Consume(Tok::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(p.Expect(Tok::kGreater, "to close algorithm"));
      op.attrs.push_back({m.Intern("algorithm"), a});
      return Ok();
    }
  }
  const Keyword* k = FindKeyword(short_name, kw.text);
  if (k == nullptr) {
    // An unknown keyword: keep its value under its own name.
    KILN_ASSIGN_OR_RETURN(const Attr* v, p.ParseAttribute());
    op.attrs.push_back({m.Intern(kw.text), v});
    return Ok();
  }
  const Attr* value = nullptr;
  switch (k->value) {
    case KeywordValue::kIntList: {
      KILN_ASSIGN_OR_RETURN(value, p.ParseIntListAttr());
      break;
    }
    case KeywordValue::kInt: {
      KILN_ASSIGN_OR_RETURN(int64_t v, p.ParseSignedInt());
      value = p.IntAttr(v);
      break;
    }
    case KeywordValue::kEnum:
      if (!p.Is(Tok::kBareId)) return p.Expected("a " + std::string(k->enum_name));
      value = p.EnumAttr(k->enum_name, p.tok().text);
      p.Advance();
      break;
    case KeywordValue::kBool:
      if (!p.IsBare("true") && !p.IsBare("false")) return p.Expected("true or false");
      value = p.BoolAttr(p.IsBare("true"));
      p.Advance();
      break;
    case KeywordValue::kString: {
      KILN_ASSIGN_OR_RETURN(value, p.ParseAttribute());
      break;
    }
    case KeywordValue::kPrecisionList: {
      KILN_ASSIGN_OR_RETURN(value, ParsePrecisionList(p));
      break;
    }
    case KeywordValue::kPrecisionFormat: {
      // e5m10: exponent and mantissa bits.
      if (!p.Is(Tok::kBareId)) return p.Expected("a format like e5m10");
      std::string_view f = p.tok().text;
      const size_t m_at = f.find('m');
      int64_t e = 0, mant = 0;
      bool ok = f.size() > 3 && f[0] == 'e' && m_at != std::string_view::npos && m_at > 1;
      for (size_t i = 1; ok && i < m_at; ++i) ok = f[i] >= '0' && f[i] <= '9' && (e = e * 10 + (f[i] - '0')) < 1000;
      for (size_t i = m_at + 1; ok && i < f.size(); ++i) {
        ok = f[i] >= '0' && f[i] <= '9' && (mant = mant * 10 + (f[i] - '0')) < 1000;
      }
      if (!ok || m_at + 1 >= f.size()) return p.ErrorHere("expected a format like e5m10");
      p.Advance();
      op.attrs.push_back({m.Intern("exponent_bits"), p.IntAttr(e)});
      op.attrs.push_back({m.Intern("mantissa_bits"), p.IntAttr(mant)});
      return Ok();
    }
  }
  op.attrs.push_back({m.Intern(k->attr), value});
  return Ok();
}

// Result types from a pretty signature: the results after `->`; one type
// per result when as many are listed (optimization_barrier, while); else
// the last type listed (`: T` for same-typed ops, `: pred_type, T` for
// select).
Status SetResults(Parser& p, Operation& op, const TypeSignature& sig, size_t result_count) {
  if (sig.arrow) return p.MakeResults(op, sig.results, result_count);
  if (result_count == 0) return Ok();
  if (result_count == sig.inputs.size()) return p.MakeResults(op, sig.inputs, result_count);
  if (result_count == 1 && !sig.inputs.empty()) {
    return p.MakeResults(op, std::span<const TypeId>(&sig.inputs.back(), 1), 1);
  }
  return p.ErrorHere("cannot tell the result types of " + std::string(op.name) + " from its type");
}

// operands [, kw = value]* [attr-dict] : signature
Status ParseOperandsKeywordsSignature(Parser& p, Operation& op, size_t result_count, bool parens = false) {
  if (parens) KILN_RETURN_IF_ERROR(p.Expect(Tok::kLParen, "before the operands"));
  KILN_RETURN_IF_ERROR(p.ParseValueUseList(op.operands));
  if (parens) KILN_RETURN_IF_ERROR(p.Expect(Tok::kRParen, "after the operands"));
  while (p.Is(Tok::kComma) || (op.operands.empty() && p.Is(Tok::kBareId) && p.Peek().kind == Tok::kEqual)) {
    if (p.Is(Tok::kComma)) p.Advance();
    if (p.Is(Tok::kBareId) && p.Peek().kind == Tok::kEqual) {
      KILN_RETURN_IF_ERROR(ParseKeyword(p, op));
    } else if (p.Is(Tok::kBareId) && p.IsBare("dense")) {
      // check.*_const %x, dense<...> : T
      KILN_ASSIGN_OR_RETURN(const Attr* v, p.ParseAttribute());
      op.attrs.push_back({p.module().Intern("value"), v});
    } else {
      return p.Expected("a keyword");
    }
  }
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  if (!p.Consume(Tok::kColon)) {
    if (result_count == 0) return Ok();  // return %a with no types, check ops
    return p.Expected("':' and the op's type");
  }
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  return SetResults(p, op, sig, result_count);
}

Status ParseCompare(Parser& p, Operation& op, size_t result_count) {
  if (!p.Is(Tok::kBareId)) return p.Expected("a comparison direction");
  MlirModule& m = p.module();
  op.attrs.push_back({m.Intern("comparison_direction"), p.EnumAttr("comparison_direction", p.tok().text)});
  p.Advance();
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kComma, "after the comparison direction"));
  KILN_RETURN_IF_ERROR(p.ParseValueUseList(op.operands));
  if (p.Consume(Tok::kComma)) {
    if (!p.Is(Tok::kBareId)) return p.Expected("a comparison type");
    op.attrs.push_back({m.Intern("compare_type"), p.EnumAttr("comparison_type", p.tok().text)});
    p.Advance();
  }
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "before the op's type"));
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  return SetResults(p, op, sig, result_count);
}

// stablehlo.slice %x [0:2, 1:4:2]
Status ParseSlice(Parser& p, Operation& op, size_t result_count) {
  KILN_ASSIGN_OR_RETURN(ValueId v, p.ParseValueUse());
  op.operands.push_back(v);
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kLSquare, "before slice ranges"));
  std::vector<int64_t> starts, limits, strides;
  while (!p.Is(Tok::kRSquare)) {
    KILN_ASSIGN_OR_RETURN(int64_t s, p.ParseSignedInt());
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "in a slice range"));
    KILN_ASSIGN_OR_RETURN(int64_t l, p.ParseSignedInt());
    int64_t stride = 1;
    if (p.Consume(Tok::kColon)) {
      KILN_ASSIGN_OR_RETURN(stride, p.ParseSignedInt());
    }
    starts.push_back(s);
    limits.push_back(l);
    strides.push_back(stride);
    if (starts.size() > 64) return p.ErrorHere("too many slice ranges");
    if (!p.Consume(Tok::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kRSquare, "after slice ranges"));
  MlirModule& m = p.module();
  op.attrs.push_back({m.Intern("start_indices"), p.I64ArrayAttr(std::move(starts))});
  op.attrs.push_back({m.Intern("limit_indices"), p.I64ArrayAttr(std::move(limits))});
  op.attrs.push_back({m.Intern("strides"), p.I64ArrayAttr(std::move(strides))});
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "before the op's type"));
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  return SetResults(p, op, sig, result_count);
}

// stablehlo.get_tuple_element %t[1] : (tuple<...>) -> T
Status ParseGetTupleElement(Parser& p, Operation& op, size_t result_count) {
  KILN_ASSIGN_OR_RETURN(ValueId v, p.ParseValueUse());
  op.operands.push_back(v);
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kLSquare, "before the tuple index"));
  KILN_ASSIGN_OR_RETURN(int64_t index, p.ParseSignedInt());
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kRSquare, "after the tuple index"));
  op.attrs.push_back({p.module().Intern("index"), p.IntAttr(index, p.module().types().Scalar(hlo::PrimitiveType::kS32))});
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "before the op's type"));
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  return SetResults(p, op, sig, result_count);
}

// @callee(%a, %b) [attr-dict] : (T) -> U, for custom_call and call.
Status ParseSymbolCall(Parser& p, Operation& op, size_t result_count, std::string_view symbol_attr) {
  if (!p.Is(Tok::kAtId)) return p.Expected("a @symbol");
  KILN_ASSIGN_OR_RETURN(const Attr* symbol, p.ParseAttribute());
  MlirModule& m = p.module();
  if (symbol_attr == "call_target_name") {
    Attr* name = p.NewAttr(Attr::Kind::kString);
    name->text = symbol->text;
    symbol = name;
  }
  op.attrs.push_back({m.Intern(symbol_attr), symbol});
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kLParen, "before the operands"));
  KILN_RETURN_IF_ERROR(p.ParseValueUseList(op.operands));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kRParen, "after the operands"));
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "before the op's type"));
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  return SetResults(p, op, sig, result_count);
}

// stablehlo.constant [attr-dict] dense<...> : T
Status ParseConstant(Parser& p, Operation& op, size_t result_count) {
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  const Token at = p.tok();
  KILN_ASSIGN_OR_RETURN(const Attr* value, p.ParseAttribute());
  if (value->kind != Attr::Kind::kDense) return p.ErrorAt(at, "expected a dense<...> constant");
  op.attrs.push_back({p.module().Intern("value"), value});
  const TypeId type = value->type;
  return p.MakeResults(op, std::span<const TypeId>(&type, 1), result_count);
}

// chlo.top_k(%x, k = 2) : T -> (T, U)
Status ParseTopK(Parser& p, Operation& op, size_t result_count) {
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kLParen, "before the operand"));
  KILN_ASSIGN_OR_RETURN(ValueId v, p.ParseValueUse());
  op.operands.push_back(v);
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kComma, "before k"));
  KILN_RETURN_IF_ERROR(p.ExpectBare("k", "in top_k"));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "after k"));
  KILN_ASSIGN_OR_RETURN(int64_t k, p.ParseSignedInt());
  op.attrs.push_back({p.module().Intern("k"), p.IntAttr(k)});
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kRParen, "after k"));
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "before the op's type"));
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  return SetResults(p, op, sig, result_count);
}

// stablehlo.composite "name" %a, %b {attrs} : (T) -> U
Status ParseComposite(Parser& p, Operation& op, size_t result_count) {
  if (!p.Is(Tok::kString)) return p.Expected("the composite's name");
  KILN_ASSIGN_OR_RETURN(const Attr* name, p.ParseAttribute());
  op.attrs.push_back({p.module().Intern("name"), name});
  return ParseOperandsKeywordsSignature(p, op, result_count);
}

}  // namespace

Status ParseConvolution(Parser& p, Operation& op, size_t result_count);  // text_pretty_regions.cc
Status ParseReduce(Parser& p, Operation& op, size_t result_count);
Status ParseWhile(Parser& p, Operation& op, size_t result_count);

Status Parser::ParsePrettyOp(Operation& op, std::string_view name, size_t result_count) {
  const std::string_view short_name = ShortName(name);
  const bool stablehlo = name.starts_with("stablehlo.") || name.starts_with("mhlo.");
  if (name == "func.return" || name == "return" || name == "stablehlo.return") {
    return ParseOperandsKeywordsSignature(*this, op, result_count);
  }
  if (name == "func.call" || name == "call") return ParseSymbolCall(*this, op, result_count, "callee");
  if (stablehlo) {
    // `stablehlo.constant() <{value = dense<1> : tensor<i8>}> : () -> T`:
    // how MLIR prints a constant whose type differs from its value's (a
    // quantized one).
    if (short_name == "constant" && Is(Tok::kLParen)) return ParseGenericOp(op, result_count);
    if (short_name == "constant") return ParseConstant(*this, op, result_count);
    if (short_name == "compare") return ParseCompare(*this, op, result_count);
    if (short_name == "slice") return ParseSlice(*this, op, result_count);
    if (short_name == "get_tuple_element") return ParseGetTupleElement(*this, op, result_count);
    if (short_name == "custom_call") return ParseSymbolCall(*this, op, result_count, "call_target_name");
    if (short_name == "convolution" || short_name == "dynamic_conv") return ParseConvolution(*this, op, result_count);
    if (short_name == "reduce") return ParseReduce(*this, op, result_count);
    if (short_name == "while") return ParseWhile(*this, op, result_count);
    if (short_name == "composite") return ParseComposite(*this, op, result_count);
  }
  if (name == "chlo.top_k") return ParseTopK(*this, op, result_count);
  if (name == "chlo.constant") return ParseConstant(*this, op, result_count);
  // Everything else: operands, keywords, attributes and a type.
  return ParseOperandsKeywordsSignature(*this, op, result_count);
}

}  // namespace kiln::stablehlo::text_internal
