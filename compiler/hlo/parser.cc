#include "compiler/hlo/parser.h"

#include <string>
#include <vector>

#include "compiler/hlo/call_nesting.h"
#include "compiler/hlo/module_parser.h"
#include "compiler/hlo/shape_inference.h"
#include "compiler/hlo/shape_literal_parser.h"
#include "compiler/hlo/text_extent.h"

namespace kiln::hlo {
namespace {

// Shapes inferred for instructions written without one hold at most this
// many shapes (tuple elements at any depth) per module: "%t = tuple(%s, %s)"
// doubles a shape per line, so a few dozen lines could otherwise ask for
// more memory than the host has. Written shapes are bounded by the text.
constexpr int64_t kMaxInferredShapeNodes = int64_t{1} << 21;

}  // namespace

namespace parser_internal {

Result<std::unique_ptr<Module>> ModuleParser::Parse() {
  if (!cur_.IsIdent("HloModule")) return std::unexpected(cur_.Expected("'HloModule'"));
  cur_.Advance();
  if (!IsNameToken(cur_.kind()) && !cur_.Is(TokKind::kNameColon)) {
    return std::unexpected(cur_.Expected("a module name"));
  }
  auto module = std::make_unique<Module>(std::string(cur_.tok().text));
  arena_ = module->arena();
  cur_.Advance();
  while (cur_.Accept(TokKind::kComma)) {
    KILN_RETURN_IF_ERROR(ParseHeaderAttribute(*module));
  }
  bool saw_entry = false;
  while (!cur_.Is(TokKind::kEof)) {
    KILN_RETURN_IF_ERROR(ParseComputation(*module, &saw_entry));
  }
  if (module->computations().empty()) return std::unexpected(cur_.Expected("a computation"));
  if (!saw_entry) module->set_entry(module->computations().back().get());
  int64_t inferred_nodes = 0;
  for (Instruction* instr : pending_shapes_) {
    Result<Shape> shape = InferInstructionShape(*instr, /*declared=*/nullptr);
    Token at;
    at.offset = shape_offsets_[instr];
    if (!shape) {
      return std::unexpected(cur_.ErrorAt(
          at, "cannot infer the shape of %" + std::string(instr->name()) + ": " + shape.error().ToString()));
    }
    // Inferred shapes are bounded like written ones.
    const ShapeExtent extent = MeasureShape(*shape);
    if (extent.levels > kMaxNesting + 1) {
      return std::unexpected(cur_.ErrorAt(at, "the shape of %" + std::string(instr->name()) +
                                                  " would nest tuples " + std::to_string(extent.levels - 1) +
                                                  " deep; shapes may nest at most " +
                                                  std::to_string(kMaxNesting) + " deep"));
    }
    inferred_nodes += extent.nodes;
    if (inferred_nodes > kMaxInferredShapeNodes) {
      return std::unexpected(cur_.ErrorAt(
          at, "the shapes inferred for this module hold more than " + std::to_string(kMaxInferredShapeNodes) +
                  " tuple elements by %" + std::string(instr->name()) + "; write the shapes out"));
    }
    instr->set_shape(std::move(*shape));
  }
  return module;
}

Result<ComputationLayout> ModuleParser::ParseComputationLayout() {
  ComputationLayout layout;
  KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kLbrace, "'{' opening entry_computation_layout"));
  KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kLparen, "'(' opening parameter layouts"));
  while (!cur_.Is(TokKind::kRparen)) {
    Shape s;
    KILN_RETURN_IF_ERROR(ReadShape(&s));
    layout.parameters.push_back(std::move(s));
    if (!cur_.Accept(TokKind::kComma) && !cur_.Is(TokKind::kRparen)) {
      return std::unexpected(cur_.Expected("',' or ')' in parameter layouts"));
    }
  }
  cur_.Advance();
  KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kArrow, "'->' in entry_computation_layout"));
  KILN_RETURN_IF_ERROR(ReadShape(&layout.result));
  KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kRbrace, "'}' closing entry_computation_layout"));
  return layout;
}

Status ModuleParser::ParseSignature() {
  // (p0: f32[2], p1: s32[]) -> f32[2]; informative only, parameters are the
  // parameter(N) instructions.
  cur_.Advance();  // '('
  while (!cur_.Is(TokKind::kRparen)) {
    if (cur_.Is(TokKind::kPercentName)) {
      cur_.Advance();
      KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kColon, "':' after parameter name"));
    } else if (!cur_.Accept(TokKind::kNameColon)) {
      return std::unexpected(cur_.Expected("a parameter name"));
    }
    KILN_RETURN_IF_ERROR(ReadShape(nullptr));
    if (!cur_.Accept(TokKind::kComma) && !cur_.Is(TokKind::kRparen)) {
      return std::unexpected(cur_.Expected("',' or ')' in computation signature"));
    }
  }
  cur_.Advance();
  KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kArrow, "'->' in computation signature"));
  KILN_RETURN_IF_ERROR(ReadShape(nullptr));
  return Ok();
}

Status ModuleParser::ParseComputation(Module& module, bool* saw_entry) {
  bool is_entry = false;
  Token entry_tok = cur_.tok();
  if (cur_.IsIdent("ENTRY")) {
    if (*saw_entry) return std::unexpected(Err(entry_tok, "more than one ENTRY computation"));
    is_entry = true;
    *saw_entry = true;
    cur_.Advance();
  }
  Token name_tok = cur_.tok();
  if (!IsNameToken(cur_.kind()) && !cur_.Is(TokKind::kNameColon)) {
    return std::unexpected(cur_.Expected("a computation name"));
  }
  std::string name(name_tok.text);
  cur_.Advance();
  if (computations_.Find(name) != nullptr) {
    return std::unexpected(Err(name_tok, "computation %" + name + " is defined twice"));
  }
  if (cur_.Is(TokKind::kLparen)) KILN_RETURN_IF_ERROR(ParseSignature());
  KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kLbrace, "'{' opening computation %" + name));

  auto comp_owned = std::make_unique<Computation>(name);
  Computation& comp = *comp_owned;
  current_level_ = CallLevel{};
  NameMap names;
  Instruction* root = nullptr;
  std::vector<PendingControl> pending;
  while (!cur_.Is(TokKind::kRbrace)) {
    if (cur_.Is(TokKind::kEof) || cur_.Is(TokKind::kError)) {
      return std::unexpected(cur_.Expected("an instruction or '}' closing computation %" + name));
    }
    KILN_RETURN_IF_ERROR(ParseInstruction(comp, names, &root, pending));
  }
  Token close = cur_.tok();
  cur_.Advance();
  if (comp.instructions().empty()) {
    return std::unexpected(Err(close, "computation %" + name + " has no instructions"));
  }
  comp.set_root(root != nullptr ? root : comp.instructions().back().get());
  // Control predecessors may name any instruction of the computation.
  for (PendingControl& p : pending) {
    Attribute attr;
    attr.name = "control-predecessors";
    attr.kind = Attribute::Kind::kInstructions;
    attr.braced = p.braced;
    for (const Token& t : p.names) {
      Instruction* pred = names.Find(t.text);
      if (pred == nullptr) {
        return std::unexpected(Err(t, "control predecessor %" + std::string(t.text) +
                                          " is not defined in computation %" + name));
      }
      attr.instructions.push_back(pred);
    }
    p.instr->AddAttribute(std::move(attr));
  }
  if (cur_.Accept(TokKind::kComma)) {
    if (!cur_.Is(TokKind::kAttributeName) || cur_.tok().text != "execution_thread") {
      return std::unexpected(cur_.Expected("execution_thread= after computation"));
    }
    cur_.Advance();
    if (!cur_.Is(TokKind::kString)) return std::unexpected(cur_.Expected("a string"));
    std::string thread;
    if (!UnescapeString(cur_.tok().text, &thread)) {
      return std::unexpected(Err(cur_.tok(), "invalid escape in string"));
    }
    comp.set_execution_thread(std::move(thread));
    cur_.Advance();
  }
  Computation* added = module.AddComputation(std::move(comp_owned), is_entry);
  computations_.Insert(added->name(), added);
  if (current_level_.bottom == nullptr) current_level_.bottom = added;
  call_levels_[added] = current_level_;
  return Ok();
}

Status ModuleParser::ParseInstruction(Computation& comp, NameMap& names, Instruction** root,
                                      std::vector<PendingControl>& pending) {
  // The hot path keeps token fields, not Token copies: copying a token the
  // lexer has just written stalls on store forwarding.
  const uint32_t start_offset = cur_.tok().offset;
  const uint32_t start_line = cur_.tok().line;
  bool is_root = false;
  if (cur_.IsIdent("ROOT")) {
    is_root = true;
    cur_.Advance();
  }
  const uint32_t name_offset = cur_.tok().offset;
  const std::string_view name = cur_.tok().text;
  if (cur_.Is(TokKind::kAttributeName)) {  // "name=" written without spaces
    cur_.Advance();
  } else if (IsNameToken(cur_.kind())) {
    cur_.Advance();
    KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kEqual, "'=' after instruction name"));
  } else {
    return std::unexpected(cur_.Expected("an instruction name"));
  }

  KILN_ASSIGN_OR_RETURN(InstructionPtr instr, ParseInstructionBody(comp, names, name, /*depth=*/0));
  instr->set_source_line(static_cast<int>(start_line));

  while (cur_.Accept(TokKind::kComma)) {
    KILN_RETURN_IF_ERROR(ParseInstructionAttribute(comp, *instr, pending));
  }
  Instruction* added = comp.AddInstruction(std::move(instr));
  if (!names.Insert(added->name(), added)) {
    return std::unexpected(cur_.ErrorAt(name_offset, "instruction %" + std::string(name) +
                                                         " is defined twice in computation %" +
                                                         comp.name()));
  }
  if (is_root) {
    if (*root != nullptr) {
      return std::unexpected(
          cur_.ErrorAt(start_offset, "computation %" + comp.name() + " has more than one ROOT"));
    }
    *root = added;
  }
  return Ok();
}

// shape? opcode operands — everything of an instruction after "name =" up
// to its attributes. Nested instructions used as operands come here too.
Result<InstructionPtr> ModuleParser::ParseInstructionBody(Computation& comp, NameMap& names,
                                                          std::string_view name, int depth) {
  if (depth > kMaxNesting) {
    return std::unexpected(Err(cur_.tok(), "instructions nested too deeply (operands nest at most " +
                                               std::to_string(kMaxNesting) + " deep)"));
  }
  Shape shape;
  bool has_shape = false;
  if (cur_.Is(TokKind::kLparen) || AtArrayShape(cur_) || IsBufferShapeStart()) {
    KILN_RETURN_IF_ERROR(ReadShape(&shape));
    has_shape = true;
  }
  const uint32_t opcode_offset = cur_.tok().offset;
  if (!cur_.Is(TokKind::kIdent)) return std::unexpected(cur_.Expected("an opcode"));
  const std::string_view opcode_text = cur_.tok().text;
  std::optional<Opcode> opcode = OpcodeFromName(opcode_text);
  std::string wrapped;
  if (!opcode) {
    for (auto [suffix, async_op] : {std::pair{std::string_view("-start"), Opcode::kAsyncStart},
                                    std::pair{std::string_view("-update"), Opcode::kAsyncUpdate},
                                    std::pair{std::string_view("-done"), Opcode::kAsyncDone}}) {
      if (opcode_text.ends_with(suffix) &&
          OpcodeFromName(opcode_text.substr(0, opcode_text.size() - suffix.size()))) {
        opcode = async_op;
        wrapped = std::string(opcode_text.substr(0, opcode_text.size() - suffix.size()));
        break;
      }
    }
  }
  if (!opcode) {
    // "q99[2]" is a shape with an unknown element type, not an opcode.
    if (LooksLikeArrayShape()) {
      return std::unexpected(cur_.ErrorAt(opcode_offset, UnknownElementTypeMessage(opcode_text)));
    }
    return std::unexpected(
        cur_.ErrorAt(opcode_offset, "unknown opcode '" + std::string(opcode_text) + "'"));
  }
  cur_.Advance();

  InstructionPtr instr;
  if (*opcode == Opcode::kParameter) {
    KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kLparen, "'(' after parameter"));
    Token num = cur_.tok();
    if (!cur_.Is(TokKind::kInt)) return std::unexpected(cur_.Expected("a parameter number"));
    Result<int64_t> number = DecodeInt(num.text);
    if (!number) return std::unexpected(Err(num, number.error().ToString()));
    int64_t n = *number;
    if (n < 0 || n >= (int64_t{1} << 20)) {
      return std::unexpected(Err(num, "parameter number " + std::string(num.text) + " out of range"));
    }
    cur_.Advance();
    KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kRparen, "')' after parameter number"));
    instr = Instruction::CreateParameter(n, std::move(shape), name, arena_);
  } else if (*opcode == Opcode::kConstant) {
    if (!has_shape) {
      return std::unexpected(
          cur_.ErrorAt(opcode_offset, "constant %" + std::string(name) + " needs a shape"));
    }
    KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kLparen, "'(' after constant"));
    KILN_ASSIGN_OR_RETURN(Literal lit, ParseConstantLiteral(shape));
    KILN_RETURN_IF_ERROR(cur_.Expect(TokKind::kRparen, "')' after constant literal"));
    instr = Instruction::CreateConstant(std::move(lit), name, arena_);
    instr->set_shape(std::move(shape));  // keeps the written layout
  } else {
    // One reused list per nesting depth: no allocation per instruction. A
    // deque, so that a nested operand growing it keeps this reference.
    if (operand_lists_.size() <= static_cast<size_t>(depth)) operand_lists_.resize(depth + 1);
    std::vector<Instruction*>& operands = operand_lists_[depth];
    KILN_RETURN_IF_ERROR(ParseOperands(comp, names, depth, operands));
    instr = Instruction::Create(*opcode, std::move(shape), operands, name, arena_);
  }
  instr->set_async_wrapped_opcode(std::move(wrapped));
  if (!has_shape) {
    pending_shapes_.push_back(instr.get());
    shape_offsets_[instr.get()] = opcode_offset;
  }
  return instr;
}

template <typename T, typename ParseFn>
Status ModuleParser::ReadMemoized(TextMemo<T>& memo, std::optional<size_t> end, ParseFn parse,
                                  T* out) {
  std::string_view text;
  if (end) {
    text = cur_.source().substr(cur_.tok().offset, *end - cur_.tok().offset);
    if (const T* cached = memo.Find(text)) {
      cur_.SkipTo(static_cast<uint32_t>(*end));
      if (out != nullptr) *out = *cached;
      return Ok();
    }
  }
  KILN_ASSIGN_OR_RETURN(T value, parse());
  if (end && cur_.consumed_end() == *end) memo.Insert(text, value);
  if (out != nullptr) *out = std::move(value);
  return Ok();
}

Status ModuleParser::ReadShape(Shape* out) {
  return ReadMemoized(shape_memo_, ScanShapeExtent(cur_.source(), cur_.tok().offset),
                      [&] { return ParseShapeTokens(cur_); }, out);
}

// A rank > 0 constant written as one scalar ("f32[3,3] constant(1)") is
// that value everywhere.
Result<Literal> ModuleParser::ParseConstantLiteral(const Shape& shape) {
  bool splat = shape.IsArray() && shape.rank() > 0 && !cur_.Is(TokKind::kLbrace);
  if (!splat) return ParseLiteralValue(cur_, shape);
  // Expanded splats are bounded in bytes per parse, so a short input cannot
  // make the parser allocate without bound.
  constexpr int64_t kSplatBudgetBytes = int64_t{64} << 20;
  int64_t count = shape.ElementCount();
  int64_t bytes = shape.ByteSize();
  if (count < 0 || bytes < 0 || bytes > kSplatBudgetBytes - splat_bytes_) {
    return std::unexpected(Err(cur_.tok(), "scalar constant of shape " + shape.ToString() +
                                               " is too large to expand (splat constants are limited to 64 MiB per module)"));
  }
  splat_bytes_ += bytes;
  KILN_ASSIGN_OR_RETURN(Literal scalar, ParseLiteralValue(cur_, Shape(shape.element_type(), {})));
  return Literal::Splat(shape, scalar);
}

Status ModuleParser::ParseOperands(Computation& comp, NameMap& names, int depth,
                                   std::vector<Instruction*>& operands) {
  operands.clear();
  if (!cur_.Is(TokKind::kLparen)) return std::unexpected(cur_.Expected("'(' opening operands"));
  if (ReadPlainOperands(names, operands)) return Ok();
  cur_.Advance();
  while (!cur_.Is(TokKind::kRparen)) {
    // "%x" is the common case; anything else may be a typed operand or a
    // nested instruction.
    if (!cur_.Is(TokKind::kPercentName)) {
      KILN_ASSIGN_OR_RETURN(Instruction* nested, ParseTypedOrNestedOperand(comp, names, depth));
      if (nested != nullptr) {
        operands.push_back(nested);
        if (!cur_.Accept(TokKind::kComma) && !cur_.Is(TokKind::kRparen)) {
          return std::unexpected(cur_.Expected("',' or ')' after operand"));
        }
        continue;
      }
    }
    Token t = cur_.tok();
    if (!IsNameToken(cur_.kind())) return std::unexpected(cur_.Expected("an operand name"));
    Instruction* operand = names.Find(t.text);
    if (operand == nullptr) {
      return std::unexpected(Err(t, "operand %" + std::string(t.text) +
                                        " is not defined earlier in this computation"));
    }
    operands.push_back(operand);
    cur_.Advance();
    if (!cur_.Accept(TokKind::kComma) && !cur_.Is(TokKind::kRparen)) {
      return std::unexpected(cur_.Expected("',' or ')' after operand"));
    }
  }
  cur_.Advance();
  return Ok();
}

bool ModuleParser::ReadPlainOperands(const NameMap& names, std::vector<Instruction*>& operands) {
  std::string_view src = cur_.source();
  size_t i = cur_.tok().offset + 1;  // past '('
  if (i < src.size() && src[i] == ')') {
    cur_.SkipTo(static_cast<uint32_t>(i + 1));
    return true;
  }
  // Most lists are short: gathered here first, the vector is allocated
  // once at its final size.
  constexpr size_t kInline = 8;
  Instruction* inline_operands[kInline];
  size_t count = 0;
  while (true) {
    if (i + 1 >= src.size() || src[i] != '%' || !IsIdentStart(src[i + 1])) break;
    const size_t start = ++i;
    while (i < src.size() && IsIdentChar(src[i])) ++i;
    Instruction* operand = names.Find(src.substr(start, i - start));
    if (operand == nullptr || i >= src.size()) break;
    if (count < kInline) {
      inline_operands[count] = operand;
    } else {
      if (count == kInline) operands.assign(inline_operands, inline_operands + kInline);
      operands.push_back(operand);
    }
    ++count;
    if (src[i] == ')') {
      if (count <= kInline) operands.assign(inline_operands, inline_operands + count);
      cur_.SkipTo(static_cast<uint32_t>(i + 1));
      return true;
    }
    if (src[i] != ',') break;
    ++i;
    if (i < src.size() && src[i] == ' ') ++i;
  }
  operands.clear();
  return false;
}

Result<Instruction*> ModuleParser::ParseTypedOrNestedOperand(Computation& comp, NameMap& names,
                                                             int depth) {
  TokenCursor::Mark before = cur_.Save();
  if (cur_.Is(TokKind::kLparen) || AtArrayShape(cur_)) {
    // Old-style typed operand: "f32[2] %x". The shape is informative.
    KILN_RETURN_IF_ERROR(ReadShape(nullptr));
  }
  if (!AtArrayShape(cur_) && LooksLikeArrayShape()) {  // "q99[2] %x"
    return std::unexpected(cur_.ErrorAt(cur_.tok(), UnknownElementTypeMessage(cur_.tok().text)));
  }
  if (!cur_.Is(TokKind::kIdent) || cur_.PeekNext().kind != TokKind::kLparen) return nullptr;
  // A nested instruction: "add(s32[] parameter(0), s32[] constant(1))".
  cur_.Restore(before);
  std::string nested_name =
      std::string(cur_.tok().text) + ".nested." + std::to_string(++nested_count_);
  KILN_ASSIGN_OR_RETURN(InstructionPtr nested,
                        ParseInstructionBody(comp, names, nested_name, depth + 1));
  Instruction* added = comp.AddInstruction(std::move(nested));
  names.Insert(added->name(), added);
  return added;
}

}  // namespace parser_internal

Result<std::unique_ptr<Module>> ParseModule(std::string_view text, std::string_view filename) {
  if (text.size() >= UINT32_MAX) return InvalidArgumentError(std::string(filename) + ": input larger than 4 GiB");
  parser_internal::ModuleParser parser(text, filename);
  return parser.Parse();
}

Result<Shape> ParseShape(std::string_view text) {
  TokenCursor cur(text, "<shape>");
  KILN_ASSIGN_OR_RETURN(Shape s, ParseShapeTokens(cur));
  if (!cur.Is(TokKind::kEof)) return std::unexpected(cur.Expected("end of shape"));
  return s;
}

Result<std::vector<Shape>> ParseShapeList(std::string_view text) {
  std::vector<Shape> shapes;
  int depth = 0;  // commas inside brackets belong to a shape
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '[' || c == '(' || c == '{') ++depth;
    if (c == ']' || c == ')' || c == '}') --depth;
    if (c != ',' || depth != 0) continue;
    const std::string_view piece = text.substr(start, i - start);
    start = i + 1;
    if (piece.find_first_not_of(' ') == std::string_view::npos) continue;
    Result<Shape> shape = ParseShape(piece);
    if (!shape) return std::unexpected(shape.error().WithContext("shape \"" + std::string(piece) + "\""));
    shapes.push_back(std::move(*shape));
  }
  if (depth != 0) {
    return InvalidArgumentError("shape \"" + std::string(text.substr(start)) + "\": unbalanced brackets");
  }
  return shapes;
}

Result<Literal> ParseLiteral(std::string_view text) {
  TokenCursor cur(text, "<literal>");
  KILN_ASSIGN_OR_RETURN(Literal lit, ParseShapedLiteral(cur));
  if (!cur.Is(TokKind::kEof)) return std::unexpected(cur.Expected("end of literal"));
  return lit;
}

}  // namespace kiln::hlo
