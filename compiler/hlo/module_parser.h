// The module parser behind ParseModule (parser.h), shared by the files
// that implement it: parser.cc (modules, computations, instructions and
// their operands) and module_parser_attributes.cc (attributes). Internal
// to kiln_hlo; use parser.h. One parser reads one text, on one thread.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/attribute_value_parser.h"
#include "compiler/hlo/module.h"
#include "compiler/hlo/name_table.h"
#include "compiler/hlo/text_memo.h"
#include "compiler/hlo/token_cursor.h"

namespace kiln::hlo::parser_internal {

class ModuleParser {
 public:
  ModuleParser(std::string_view text, std::string_view filename) : cur_(text, filename) {}

  Result<std::unique_ptr<Module>> Parse();

 private:
  using NameMap = NameTable<Instruction>;

  struct PendingControl {
    Instruction* instr;
    std::vector<Token> names;
    bool braced;
  };

  Status ParseHeaderAttribute(Module& module);
  Result<ComputationLayout> ParseComputationLayout();
  Status ParseComputation(Module& module, bool* saw_entry);
  Status ParseSignature();
  Status ParseInstruction(Computation& comp, NameMap& names, Instruction** root,
                          std::vector<PendingControl>& pending);
  Result<InstructionPtr> ParseInstructionBody(Computation& comp, NameMap& names, std::string_view name,
                                              int depth);
  // Reads a value at the cursor through `memo`: a span delimited by
  // `end` (from a text_extent.h scan) that was read before is stepped over
  // and its value copied; otherwise `parse` reads it through tokens, and
  // the value is memoized when the parse ended exactly at `end`. `out` may
  // be null when the value is not needed.
  template <typename T, typename ParseFn>
  Status ReadMemoized(TextMemo<T>& memo, std::optional<size_t> end, ParseFn parse, T* out);
  // ParseShapeTokens through shape_memo_; `out` may be null for shapes
  // that are only informative (signatures, typed operands).
  Status ReadShape(Shape* out);
  Result<Literal> ParseConstantLiteral(const Shape& shape);
  // Fills `operands` (cleared first).
  Status ParseOperands(Computation& comp, NameMap& names, int depth,
                       std::vector<Instruction*>& operands);
  // At the '(' of an operand list written the common way, "(%a, %b)" with
  // every name defined: reads it straight from the bytes (no tokens), fills
  // `operands` and consumes through ')'. Otherwise returns false with
  // nothing consumed and `operands` empty; the token path then reads the
  // list and reports any error.
  bool ReadPlainOperands(const NameMap& names, std::vector<Instruction*>& operands);
  // At an operand that is not a plain %name: reads an informative shape
  // before a name ("f32[2] %x"), leaving the cursor at the name and
  // returning nullptr, or parses and adds a nested instruction and returns
  // it.
  Result<Instruction*> ParseTypedOrNestedOperand(Computation& comp, NameMap& names, int depth);
  // At a word followed directly by '[': the start of an array shape,
  // whatever its element type.
  bool LooksLikeArrayShape() const {
    const std::string_view src = cur_.source();
    const size_t after = cur_.tok().offset + cur_.tok().text.size();
    return cur_.Is(TokKind::kIdent) && after < src.size() && src[after] == '[';
  }
  bool IsBufferShapeStart() const {
    return cur_.IsIdent("b") && cur_.PeekNext().kind == TokKind::kLparen;
  }
  Status ParseInstructionAttribute(const Computation& comp, Instruction& instr,
                                   std::vector<PendingControl>& pending);
  // The value of `attr` (named already): kRaw text verbatim, or the
  // canonical text of any other value, built in a reused buffer.
  Status ReadAttributeValue(Attribute& attr) {
    if (IsRawAttribute(attr.name)) {
      attr.kind = Attribute::Kind::kRaw;
      KILN_ASSIGN_OR_RETURN(std::string_view raw, ParseRawAttributeValue(cur_));
      attr.value = raw;
      return Ok();
    }
    KILN_RETURN_IF_ERROR(ParseGenericAttributeValue(cur_, value_text_));
    attr.value = value_text_;
    return Ok();
  }
  // Records that the computation being parsed calls `callee` (named by
  // `at`); fails when that nests computations deeper than kMaxCallNesting.
  Status NoteCall(const Computation& caller, const Computation* callee, const Token& at);
  Error Err(const Token& t, std::string_view message) const { return cur_.ErrorAt(t, message); }

  TokenCursor cur_;
  // The arena of the module being built: its instructions go there.
  IrArena* arena_ = nullptr;
  std::deque<std::vector<Instruction*>> operand_lists_;  // see ParseInstructionBody
  std::string value_text_;                               // see ReadAttributeValue
  TextMemo<Shape> shape_memo_;
  NameTable<Computation> computations_;
  // Instructions written without a shape; inferred once the module is built.
  std::vector<Instruction*> pending_shapes_;
  std::unordered_map<const Instruction*, uint32_t> shape_offsets_;
  // Nesting level (call_nesting.h) of each computation parsed so far and of
  // the one being parsed, with the computation at the bottom of its deepest
  // call chain (itself when it calls nothing).
  struct CallLevel {
    int level = 1;
    const Computation* bottom = nullptr;
  };
  std::unordered_map<const Computation*, CallLevel> call_levels_;
  CallLevel current_level_;
  int nested_count_ = 0;
  int64_t splat_bytes_ = 0;
};

}  // namespace kiln::hlo::parser_internal
