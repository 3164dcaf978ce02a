// Pretty forms with regions or windows: stablehlo.reduce (`applies` and
// `reducer(...)` bodies), stablehlo.while (`cond { } do { }`) and
// stablehlo.convolution / dynamic_conv (`dim_numbers = ..., window = {...}`).
#include "compiler/stablehlo/text_parser_internal.h"

namespace kiln::stablehlo::text_internal {
namespace {

// Defines `names` as fresh values of `types` and parses a region with them
// as its entry block's arguments.
Status ParseRegionWithArgs(Parser& p, Region& region, const std::vector<Token>& names,
                           const std::vector<TypeId>& types) {
  p.PushScope(false);
  std::vector<ValueId> args;
  for (size_t i = 0; i < names.size(); ++i) {
    const ValueId v = p.module().NewValue(types[i]);
    args.push_back(v);
    KILN_RETURN_IF_ERROR(p.DefineValues(names[i], v, 1));
  }
  KILN_RETURN_IF_ERROR(p.ParseRegion(region, args));
  p.PopScope();
  return Ok();
}

// Flattens [[a, b], [c, d]] into {a, b, c, d}.
Status FlattenPairs(Parser& p, const Attr* list, std::vector<int64_t>& out) {
  if (list->kind != Attr::Kind::kArray) return p.ErrorHere("expected [[low, high], ...]");
  for (const Attr* pair : list->items) {
    if (pair->kind == Attr::Kind::kDenseArray) {
      out.insert(out.end(), pair->ints.begin(), pair->ints.end());
      continue;
    }
    if (pair->kind != Attr::Kind::kArray || pair->items.size() != 2) return p.ErrorHere("expected [low, high]");
    for (const Attr* v : pair->items) {
      if (v->kind != Attr::Kind::kInt) return p.ErrorHere("expected an integer padding");
      out.push_back(v->i);
    }
  }
  return Ok();
}

}  // namespace

Status ParseConvolution(Parser& p, Operation& op, size_t result_count) {
  MlirModule& m = p.module();
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kLParen, "before the operands"));
  KILN_RETURN_IF_ERROR(p.ParseValueUseList(op.operands));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kRParen, "after the operands"));
  KILN_RETURN_IF_ERROR(p.ExpectBare("dim_numbers", "in a convolution"));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "after dim_numbers"));
  KILN_ASSIGN_OR_RETURN(const Attr* dims, ParseConvDimsBody(p));
  op.attrs.push_back({m.Intern("dimension_numbers"), dims});
  if (p.Consume(Tok::kComma)) {
    KILN_RETURN_IF_ERROR(p.ExpectBare("window", "in a convolution"));
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "after window"));
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kLBrace, "to open the window"));
    while (!p.Is(Tok::kRBrace)) {
      if (!p.Is(Tok::kBareId)) return p.Expected("a window field");
      const Token field = p.tok();
      p.Advance();
      KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "after a window field"));
      if (field.text == "pad") {
        KILN_ASSIGN_OR_RETURN(const Attr* list, p.ParseAttribute());
        std::vector<int64_t> flat;
        KILN_RETURN_IF_ERROR(FlattenPairs(p, list, flat));
        op.attrs.push_back({m.Intern("padding"), p.I64ArrayAttr(std::move(flat))});
      } else if (field.text == "reverse") {
        KILN_ASSIGN_OR_RETURN(const Attr* list, p.ParseAttribute());
        std::vector<int64_t> flags;
        if (list->kind == Attr::Kind::kArray) {
          for (const Attr* v : list->items) flags.push_back(v->kind == Attr::Kind::kBool ? v->b : v->i != 0);
        } else if (list->kind == Attr::Kind::kDenseArray) {
          flags = list->ints;
        }
        Attr* a = p.NewAttr(Attr::Kind::kDenseArray);
        a->type = m.types().Scalar(hlo::PrimitiveType::kPred);
        a->ints = std::move(flags);
        op.attrs.push_back({m.Intern("window_reversal"), a});
      } else {
        std::string_view name = field.text == "stride"       ? "window_strides"
                                : field.text == "lhs_dilate" ? "lhs_dilation"
                                : field.text == "rhs_dilate" ? "rhs_dilation"
                                                             : field.text;
        KILN_ASSIGN_OR_RETURN(const Attr* list, p.ParseIntListAttr());
        op.attrs.push_back({m.Intern(name), list});
      }
      if (!p.Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kRBrace, "to close the window"));
  }
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "before the op's type"));
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  if (!sig.arrow) return p.Expected("a function type for the convolution");
  return p.MakeResults(op, sig.results, result_count);
}

Status ParseReduce(Parser& p, Operation& op, size_t result_count) {
  MlirModule& m = p.module();
  std::vector<ValueId> inputs, inits;
  while (true) {
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kLParen, "before a reduce input"));
    KILN_ASSIGN_OR_RETURN(ValueId input, p.ParseValueUse());
    KILN_RETURN_IF_ERROR(p.ExpectBare("init", "in a reduce input"));
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "after init"));
    KILN_ASSIGN_OR_RETURN(ValueId init, p.ParseValueUse());
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kRParen, "after a reduce input"));
    inputs.push_back(input);
    inits.push_back(init);
    if (!p.Consume(Tok::kComma)) break;
  }
  op.operands = inputs;
  op.operands.insert(op.operands.end(), inits.begin(), inits.end());
  std::string_view applies;
  Token applies_at;
  if (p.ConsumeBare("applies")) {
    if (!p.Is(Tok::kBareId)) return p.Expected("the op a reduce applies");
    applies_at = p.tok();
    applies = m.Intern(p.tok().text);
    p.Advance();
  }
  KILN_RETURN_IF_ERROR(p.ExpectBare("across", "in a reduce"));
  KILN_RETURN_IF_ERROR(p.ExpectBare("dimensions", "in a reduce"));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "after dimensions"));
  KILN_ASSIGN_OR_RETURN(const Attr* dims, p.ParseIntListAttr());
  op.attrs.push_back({m.Intern("dimensions"), dims});
  if (p.Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "before the op's type"));
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, p.ParseTypeSignature());
  if (!sig.arrow) return p.Expected("a function type for the reduce");
  KILN_RETURN_IF_ERROR(p.MakeResults(op, sig.results, result_count));
  op.regions.emplace_back();
  Region& body = op.regions.back();
  const size_t n = inputs.size();
  if (!applies.empty()) {
    if (n != 1) return p.ErrorAt(applies_at, "`applies` takes one input");
    const TypeId t = m.value_type(inits[0]);
    auto block = std::make_unique<Block>();
    block->args = {m.NewValue(t), m.NewValue(t)};
    Operation* apply = m.NewOperation();
    apply->name = applies;
    apply->pos = {applies_at.line, applies_at.column};
    apply->operands = block->args;
    apply->results = {m.NewValue(t)};
    Operation* ret = m.NewOperation();
    ret->name = m.Intern("stablehlo.return");
    ret->pos = apply->pos;
    ret->operands = apply->results;
    block->ops = {apply, ret};
    body.blocks.push_back(std::move(block));
    return Ok();
  }
  // reducer(%acc0: T, %x0: T) (%acc1: T, %x1: T) { ... }: block arguments
  // are the accumulators, then the elements.
  KILN_RETURN_IF_ERROR(p.ExpectBare("reducer", "after the reduce's type"));
  std::vector<Token> names(2 * n);
  std::vector<TypeId> types(2 * n);
  for (size_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kLParen, "before reducer arguments"));
    for (size_t j = 0; j < 2; ++j) {
      if (!p.Is(Tok::kPercentId)) return p.Expected("a reducer argument");
      names[j * n + i] = p.tok();
      p.Advance();
      KILN_RETURN_IF_ERROR(p.Expect(Tok::kColon, "after a reducer argument"));
      KILN_ASSIGN_OR_RETURN(types[j * n + i], p.ParseType());
      KILN_RETURN_IF_ERROR(p.SkipLocation());
      if (j == 0) KILN_RETURN_IF_ERROR(p.Expect(Tok::kComma, "between reducer arguments"));
    }
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kRParen, "after reducer arguments"));
  }
  return ParseRegionWithArgs(p, body, names, types);
}

Status ParseWhile(Parser& p, Operation& op, size_t result_count) {
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kLParen, "before the loop's values"));
  std::vector<Token> names;
  while (!p.Is(Tok::kRParen)) {
    if (!p.Is(Tok::kPercentId)) return p.Expected("a loop value");
    names.push_back(p.tok());
    p.Advance();
    KILN_RETURN_IF_ERROR(p.Expect(Tok::kEqual, "after a loop value's name"));
    KILN_ASSIGN_OR_RETURN(ValueId init, p.ParseValueUse());
    op.operands.push_back(init);
    if (!p.Consume(Tok::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(p.Expect(Tok::kRParen, "after the loop's values"));
  std::vector<TypeId> types;
  if (p.Consume(Tok::kColon)) {
    KILN_ASSIGN_OR_RETURN(types, p.ParseTypeListNoParens());
  }
  if (types.size() != names.size()) return p.ErrorHere("the loop lists " + std::to_string(types.size()) +
                                                       " types for " + std::to_string(names.size()) + " values");
  if (p.ConsumeBare("attributes")) KILN_RETURN_IF_ERROR(p.ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(p.MakeResults(op, types, result_count));
  op.regions.resize(2);
  KILN_RETURN_IF_ERROR(p.ExpectBare("cond", "in a while loop"));
  KILN_RETURN_IF_ERROR(ParseRegionWithArgs(p, op.regions[0], names, types));
  KILN_RETURN_IF_ERROR(p.ExpectBare("do", "in a while loop"));
  return ParseRegionWithArgs(p, op.regions[1], names, types);
}

}  // namespace kiln::stablehlo::text_internal
