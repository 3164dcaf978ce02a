// Modules, functions, regions and generic ops of MLIR text (text_parser.h);
// the token cursor and value scopes every part of the parser shares.
#include "compiler/stablehlo/text_parser.h"

#include <span>

#include "compiler/stablehlo/text_parser_internal.h"

namespace kiln::stablehlo {
namespace text_internal {

void Parser::Advance() { tok_ = lex_.Next(); }

void Parser::SeekTo(uint32_t offset) {
  const uint32_t line_start = tok_.offset - static_cast<uint32_t>(tok_.column - 1);
  lex_.Seek(offset, tok_.line, line_start);
  Advance();
}

void Parser::SeekToToken(const Token& t) {
  lex_.Seek(t.offset, t.line, t.offset - static_cast<uint32_t>(t.column - 1));
  Advance();
}

Token Parser::Peek() {
  const uint32_t pos = lex_.position();
  const int line = lex_.line();
  const uint32_t line_start = lex_.line_start();
  Token next = lex_.Next();
  lex_.Seek(pos, line, line_start);
  return next;
}

Error Parser::ErrorAt(const Token& t, std::string_view message) const {
  std::string text(message);
  if (t.kind == Tok::kError && !lex_.error().empty()) text = lex_.error();
  return InvalidArgumentError(std::move(text))
      .At({.file = std::string(filename_), .line = t.line, .column = t.column})
      .WithReason("stablehlo_parse_error");
}

Error Parser::Expected(std::string_view what) const {
  std::string got = tok_.kind == Tok::kEof ? std::string("end of input")
                                           : "'" + std::string(tok_.text.substr(0, 40)) + "'";
  return ErrorAt(tok_, "expected " + std::string(what) + ", got " + got);
}

Status Parser::Expect(Tok kind, std::string_view context) {
  if (Consume(kind)) return Ok();
  return Expected(std::string(TokName(kind)) + (context.empty() ? "" : " " + std::string(context)));
}

Status Parser::ExpectBare(std::string_view word, std::string_view context) {
  if (ConsumeBare(word)) return Ok();
  return Expected("'" + std::string(word) + "'" + (context.empty() ? "" : " " + std::string(context)));
}

// ---- Values ----------------------------------------------------------------

void Parser::PushScope(bool isolated) { scopes_.push_back(Scope{{}, isolated}); }
void Parser::PopScope() { scopes_.pop_back(); }

Status Parser::DefineValues(const Token& name, ValueId first, size_t count) {
  if (scopes_.empty()) PushScope(true);
  auto [it, inserted] =
      scopes_.back().names.try_emplace(name.text, Binding{first, static_cast<uint32_t>(count)});
  if (!inserted) return ErrorAt(name, "redefinition of " + std::string(name.text));
  return Ok();
}

Result<ValueId> Parser::ParseValueUse() {
  if (!Is(Tok::kPercentId)) return Expected("a %value");
  const Token name = tok_;
  Advance();
  uint32_t index = 0;
  bool indexed = false;
  // `%0#1`: the lexer gives `#1` as a hash id right after the name.
  if (Is(Tok::kHashId) && tok_.offset == name.offset + name.text.size()) {
    std::string_view digits = tok_.text.substr(1);
    if (digits.empty() || digits.size() > 9) return ErrorAt(tok_, "bad result index");
    for (char c : digits) {
      if (c < '0' || c > '9') return ErrorAt(tok_, "bad result index");
      index = index * 10 + static_cast<uint32_t>(c - '0');
    }
    indexed = true;
    Advance();
  }
  for (size_t s = scopes_.size(); s-- > 0;) {
    auto it = scopes_[s].names.find(name.text);
    if (it != scopes_[s].names.end()) {
      if (index >= it->second.count || (!indexed && it->second.count != 1 && false)) {
        return ErrorAt(name, "result #" + std::to_string(index) + " of " + std::string(name.text) +
                                 " does not exist (it has " + std::to_string(it->second.count) + ")");
      }
      return it->second.first + index;
    }
    if (scopes_[s].isolated) break;
  }
  return ErrorAt(name, "use of undefined value " + std::string(name.text));
}

Status Parser::ParseValueUseList(std::vector<ValueId>& out) {
  if (!Is(Tok::kPercentId)) return Ok();
  while (true) {
    KILN_ASSIGN_OR_RETURN(ValueId v, ParseValueUse());
    out.push_back(v);
    if (!Is(Tok::kComma) || Peek().kind != Tok::kPercentId) return Ok();
    Advance();
  }
}

Status Parser::MakeResults(Operation& op, std::span<const TypeId> types, size_t expected) {
  if (types.size() != expected) {
    return ErrorAt(tok_, "operation " + std::string(op.name) + " defines " + std::to_string(expected) +
                             " results but its type gives " + std::to_string(types.size()));
  }
  op.results.clear();
  for (TypeId t : types) op.results.push_back(module_.NewValue(t));
  return Ok();
}

const Attr* Parser::IntAttr(int64_t v, TypeId type) {
  Attr* a = NewAttr(Attr::Kind::kInt);
  a->i = v;
  a->type = type == kNoType ? module_.types().Scalar(hlo::PrimitiveType::kS64) : type;
  return a;
}

const Attr* Parser::I64ArrayAttr(std::vector<int64_t> values) {
  Attr* a = NewAttr(Attr::Kind::kDenseArray);
  a->type = module_.types().Scalar(hlo::PrimitiveType::kS64);
  a->ints = std::move(values);
  return a;
}

const Attr* Parser::EnumAttr(std::string_view dialect_name, std::string_view value) {
  Attr* a = NewAttr(Attr::Kind::kEnum);
  a->dialect_name = dialect_name;
  a->text = value;
  return a;
}

const Attr* Parser::BoolAttr(bool v) {
  Attr* a = NewAttr(Attr::Kind::kBool);
  a->b = v;
  return a;
}

const Attr* Parser::StringAttr(std::string_view v) {
  Attr* a = NewAttr(Attr::Kind::kString);
  a->text = v;
  return a;
}

// ---- Regions and operations -----------------------------------------------

Status Parser::ParseRegion(Region& region, std::span<const ValueId> entry_args) {
  if (++depth_ > kMaxNesting) return ErrorHere("regions nest too deeply");
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace, "to open a region"));
  PushScope(false);
  auto block = std::make_unique<Block>();
  block->args.assign(entry_args.begin(), entry_args.end());
  bool first = true;
  while (!Is(Tok::kRBrace)) {
    if (Is(Tok::kEof) || Is(Tok::kError)) return Expected("'}' to close the region");
    if (Is(Tok::kCaretId)) {
      // A block label: ^bb0(%a: T, ...):
      if (!first || !block->ops.empty()) {
        region.blocks.push_back(std::move(block));
        block = std::make_unique<Block>();
      }
      Advance();
      if (Consume(Tok::kLParen)) {
        while (!Is(Tok::kRParen)) {
          if (!Is(Tok::kPercentId)) return Expected("a block argument");
          const Token name = tok_;
          Advance();
          KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "after a block argument"));
          KILN_ASSIGN_OR_RETURN(TypeId type, ParseType());
          KILN_RETURN_IF_ERROR(SkipLocation());
          const ValueId v = module_.NewValue(type);
          block->args.push_back(v);
          KILN_RETURN_IF_ERROR(DefineValues(name, v, 1));
          if (!Consume(Tok::kComma)) break;
        }
        KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after block arguments"));
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "after a block label"));
    }
    first = false;
    if (Is(Tok::kRBrace) || Is(Tok::kCaretId)) continue;
    KILN_RETURN_IF_ERROR(ParseOperation(*block));
  }
  Advance();
  region.blocks.push_back(std::move(block));
  PopScope();
  --depth_;
  return Ok();
}

Status Parser::ParseOperation(Block& block) {
  if (static_cast<int64_t>(module_.operation_count()) >= kMaxOperations) {
    return ErrorHere("the program has more than " + std::to_string(kMaxOperations) + " operations");
  }
  // Result names: %a, %b:2 = ...
  std::vector<std::pair<Token, size_t>> names;
  size_t result_count = 0;
  if (Is(Tok::kPercentId)) {
    while (true) {
      if (!Is(Tok::kPercentId)) return Expected("a result name");
      Token name = tok_;
      Advance();
      size_t count = 1;
      if (Consume(Tok::kColon)) {
        if (!Is(Tok::kInteger)) return Expected("a result count");
        KILN_ASSIGN_OR_RETURN(int64_t n, ParseSignedInt());
        if (n < 1 || n > 1 << 20) return ErrorAt(name, "bad result count");
        count = static_cast<size_t>(n);
      }
      names.emplace_back(name, count);
      result_count += count;
      if (!Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kEqual, "after result names"));
  }
  Operation* op = module_.NewOperation();
  op->pos = {tok_.line, tok_.column};
  if (Is(Tok::kString)) {
    std::string name;
    if (!DecodeMlirString(tok_.text, name)) return ErrorHere("bad op name string");
    op->name = module_.Intern(name);
    Advance();
    KILN_RETURN_IF_ERROR(ParseGenericOp(*op, result_count));
  } else if (Is(Tok::kBareId)) {
    op->name = module_.Intern(tok_.text);
    Advance();
    KILN_RETURN_IF_ERROR(ParsePrettyOp(*op, op->name, result_count));
  } else {
    return Expected("an operation");
  }
  KILN_RETURN_IF_ERROR(SkipLocation());
  if (op->results.size() != result_count) {
    return ErrorAt(names.empty() ? tok_ : names[0].first,
                   "operation " + std::string(op->name) + " has " + std::to_string(op->results.size()) +
                       " results, " + std::to_string(result_count) + " named");
  }
  size_t next = 0;
  for (const auto& [name, count] : names) {
    KILN_RETURN_IF_ERROR(DefineValues(name, op->results[next], count));
    next += count;
  }
  block.ops.push_back(op);
  return Ok();
}

Status Parser::ParseGenericOp(Operation& op, size_t result_count) {
  KILN_RETURN_IF_ERROR(Expect(Tok::kLParen, "before the operands"));
  KILN_RETURN_IF_ERROR(ParseValueUseList(op.operands));
  KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after the operands"));
  if (Is(Tok::kLSquare)) return ErrorHere("block successors are not supported");
  if (Is(Tok::kLess)) {  // <{properties}>
    Advance();
    KILN_RETURN_IF_ERROR(ParseAttrDict(op.attrs));
    KILN_RETURN_IF_ERROR(Expect(Tok::kGreater, "after properties"));
  }
  if (Is(Tok::kLParen)) {
    Advance();
    while (true) {
      op.regions.emplace_back();
      KILN_RETURN_IF_ERROR(ParseRegion(op.regions.back()));
      if (!Consume(Tok::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after regions"));
  }
  if (Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(ParseAttrDict(op.attrs));
  KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "before the op's type"));
  if (!Is(Tok::kLParen)) return Expected("a function type");
  KILN_ASSIGN_OR_RETURN(TypeSignature sig, ParseTypeSignature());
  if (!sig.arrow) return Expected("'->' in the op's function type");
  if (sig.inputs.size() != op.operands.size()) {
    return ErrorHere("the op's type lists " + std::to_string(sig.inputs.size()) + " operands, it has " +
                     std::to_string(op.operands.size()));
  }
  return MakeResults(op, sig.results, result_count);
}

// ---- Functions and modules --------------------------------------------------

Status Parser::ParseFunction() {
  auto fn = std::make_unique<Function>();
  fn->pos = {tok_.line, tok_.column};
  if (IsBare("public") || IsBare("private") || IsBare("nested")) {
    fn->is_public = IsBare("public");
    Advance();
  }
  if (!Is(Tok::kAtId)) return Expected("a function name");
  fn->name = tok_.text.substr(1);
  if (!fn->name.empty() && fn->name[0] == '"') {
    std::string decoded;
    if (!DecodeMlirString(fn->name, decoded)) return ErrorHere("bad function name");
    fn->name = decoded;
  }
  Advance();
  KILN_RETURN_IF_ERROR(Expect(Tok::kLParen, "before the arguments"));
  std::vector<std::pair<Token, ValueId>> args;
  while (!Is(Tok::kRParen)) {
    Token name;
    const bool named = Is(Tok::kPercentId);
    if (named) {
      name = tok_;
      Advance();
      KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "after an argument name"));
    }
    KILN_ASSIGN_OR_RETURN(TypeId type, ParseType());
    fn->arg_types.push_back(type);
    fn->arg_attrs.emplace_back();
    if (Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(ParseAttrDict(fn->arg_attrs.back()));
    KILN_RETURN_IF_ERROR(SkipLocation());
    if (named) args.emplace_back(name, module_.NewValue(type));
    if (!Consume(Tok::kComma)) break;
  }
  KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after the arguments"));
  if (Consume(Tok::kArrow)) {
    if (Consume(Tok::kLParen)) {
      while (!Is(Tok::kRParen)) {
        KILN_ASSIGN_OR_RETURN(TypeId type, ParseType());
        fn->result_types.push_back(type);
        fn->result_attrs.emplace_back();
        if (Is(Tok::kLBrace)) KILN_RETURN_IF_ERROR(ParseAttrDict(fn->result_attrs.back()));
        KILN_RETURN_IF_ERROR(SkipLocation());
        if (!Consume(Tok::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "after the results"));
    } else {
      KILN_ASSIGN_OR_RETURN(TypeId type, ParseType());
      fn->result_types.push_back(type);
      fn->result_attrs.emplace_back();
    }
  }
  if (ConsumeBare("attributes")) KILN_RETURN_IF_ERROR(ParseAttrDict(fn->attrs));
  if (Is(Tok::kLBrace)) {
    if (args.size() != fn->arg_types.size()) return ErrorHere("a function body needs named arguments");
    PushScope(true);
    std::vector<ValueId> entry;
    for (const auto& [name, v] : args) {
      KILN_RETURN_IF_ERROR(DefineValues(name, v, 1));
      entry.push_back(v);
    }
    KILN_RETURN_IF_ERROR(ParseRegion(fn->body, entry));
    PopScope();
  }
  KILN_RETURN_IF_ERROR(SkipLocation());
  module_.functions.push_back(std::move(fn));
  return Ok();
}

Status Parser::ParseAliasDefinition() {
  const Token name = tok_;
  Advance();
  KILN_RETURN_IF_ERROR(Expect(Tok::kEqual, "in an alias definition"));
  if (name.kind == Tok::kBangId) {
    KILN_ASSIGN_OR_RETURN(TypeId type, ParseType());
    type_aliases_[std::string(name.text)] = type;
    return Ok();
  }
  if (IsBare("loc")) return SkipLocation();  // #loc3 = loc(...)
  KILN_ASSIGN_OR_RETURN(const Attr* value, ParseAttribute());
  attr_aliases_[std::string(name.text)] = value;
  return Ok();
}

Status Parser::ParseModuleBody(bool braced) {
  while (true) {
    if (braced && Is(Tok::kRBrace)) {
      Advance();
      return Ok();
    }
    if (Is(Tok::kEof)) {
      if (braced) return Expected("'}' to close the module");
      return Ok();
    }
    if ((Is(Tok::kHashId) || Is(Tok::kBangId)) && Peek().kind == Tok::kEqual) {
      KILN_RETURN_IF_ERROR(ParseAliasDefinition());
    } else if (IsBare("func.func")) {
      Advance();
      KILN_RETURN_IF_ERROR(ParseFunction());
    } else if (IsBare("module") || IsBare("builtin.module")) {
      Advance();
      if (++depth_ > kMaxNesting) return ErrorHere("modules nest too deeply");
      if (Is(Tok::kAtId)) {
        if (module_count_ == 0) module_.name = tok_.text.substr(1);
        Advance();
      }
      ++module_count_;
      if (ConsumeBare("attributes")) {
        std::vector<NamedAttr> attrs;
        KILN_RETURN_IF_ERROR(ParseAttrDict(attrs));
        for (const NamedAttr& a : attrs) {
          if (module_.FindModuleAttr(a.name) == nullptr) module_.attrs.push_back(a);
        }
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace, "to open the module"));
      KILN_RETURN_IF_ERROR(ParseModuleBody(true));
      KILN_RETURN_IF_ERROR(SkipLocation());
      --depth_;
    } else if (Is(Tok::kBareId)) {
      // Another module-level op (sdy.mesh, ...): not part of the program.
      Advance();
      while (!Is(Tok::kEof) && !Is(Tok::kRBrace) && !IsBare("func.func") && !IsBare("module")) {
        if (Is(Tok::kLParen) || Is(Tok::kLBrace) || Is(Tok::kLSquare) || Is(Tok::kLess)) {
          KILN_RETURN_IF_ERROR(SkipBalanced());
        } else {
          Advance();
        }
      }
    } else {
      return Expected("func.func or module");
    }
  }
}

Result<MlirModule> Parser::Parse() {
  if (Is(Tok::kError)) return ErrorHere("invalid token");
  KILN_RETURN_IF_ERROR(ParseModuleBody(false));
  if (module_.functions.empty()) return ErrorAt(tok_, "no func.func in the input");
  return std::move(module_);
}

}  // namespace text_internal

Result<MlirModule> ParseMlirText(std::string_view text, std::string_view filename) {
  text_internal::Parser parser(text, filename);
  return parser.Parse();
}

bool LooksLikeMlirText(std::string_view text) {
  Lexer lex(text);
  Token t = lex.Next();
  if (t.kind == Tok::kBareId) {
    return t.text == "module" || t.text == "func.func" || t.text == "builtin.module";
  }
  if (t.kind == Tok::kHashId || t.kind == Tok::kBangId) return lex.Next().kind == Tok::kEqual;
  return false;
}

}  // namespace kiln::stablehlo
