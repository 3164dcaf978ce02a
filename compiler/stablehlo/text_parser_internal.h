// The MLIR text parser behind ParseMlirText (text_parser.h), shared by the
// files that implement it: text_parser.cc (modules, functions, regions,
// generic ops), text_types.cc, text_attributes.cc, text_dense.cc and the
// pretty op forms (text_pretty_ops.cc, text_pretty_regions.cc). Internal to
// kiln_stablehlo. One parser reads one text, on one thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/stablehlo/mlir_module.h"
#include "compiler/stablehlo/text_lexer.h"
#include "compiler/stablehlo/text_parser.h"

namespace kiln::stablehlo::text_internal {

// The types an op's trailing `: ...` wrote: a list of types, or a function
// type `(inputs) -> results` (`arrow` set). chlo writes `T1, T2 -> T3`.
struct TypeSignature {
  std::vector<TypeId> inputs;
  std::vector<TypeId> results;
  bool arrow = false;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename) : lex_(text), filename_(filename) {
    Advance();
  }

  Result<MlirModule> Parse();

  // ---- Token cursor --------------------------------------------------
  const Token& tok() const { return tok_; }
  bool Is(Tok kind) const { return tok_.kind == kind; }
  bool IsBare(std::string_view word) const { return tok_.kind == Tok::kBareId && tok_.text == word; }
  void Advance();
  bool Consume(Tok kind) {
    if (!Is(kind)) return false;
    Advance();
    return true;
  }
  bool ConsumeBare(std::string_view word) {
    if (!IsBare(word)) return false;
    Advance();
    return true;
  }
  Status Expect(Tok kind, std::string_view context);
  Status ExpectBare(std::string_view word, std::string_view context);
  // The token after the current one, without consuming anything.
  Token Peek();
  Error ErrorAt(const Token& t, std::string_view message) const;
  Error ErrorHere(std::string_view message) const { return ErrorAt(tok_, message); }
  Error Expected(std::string_view what) const;

  // ---- Types (text_types.cc) ------------------------------------------
  Result<TypeId> ParseType();
  Result<TypeId> ParseElementOrScalarType();
  Result<TypeId> ParseTensorType();  // at `tensor`
  // `: T` or `: (T, U) -> V` or `: T, U -> V` after an op.
  Result<TypeSignature> ParseTypeSignature();
  Result<std::vector<TypeId>> ParseTypeListNoParens();
  // `(T, U)` or a single type, for function results.
  Result<std::vector<TypeId>> ParseResultTypes();
  bool AtTypeStart() const;

  // ---- Attributes (text_attributes.cc, text_dense.cc) --------------------
  // An attribute value. `?` is read as an integer kDynamic (bounds).
  Result<const Attr*> ParseAttribute();
  // `{name = value, flag, ...}`: appends to `out`.
  Status ParseAttrDict(std::vector<NamedAttr>& out);
  Result<const Attr*> ParseDense();          // at `dense`
  Result<const Attr*> ParseDenseArray();     // at `array`
  Result<const Attr*> ParseHashAttribute();  // at `#...`
  Result<const Attr*> ParseIntListAttr();    // `[1, 2]` as a dense i64 array
  Result<std::vector<int64_t>> ParseIntList();  // `[1, 2]` (`?` is kDynamic)
  Result<int64_t> ParseSignedInt();
  // Skips `loc(...)` if it is next.
  Status SkipLocation();
  // Skips a balanced group starting at the current bracket token.
  Status SkipBalanced();
  // The text from `start` up to the cursor, whitespace normalized (kept
  // only between words, outside strings), for attributes and types kept
  // as text: their key must not depend on line breaks.
  std::string SpanText(const Token& start) const;

  // ---- Ops (text_parser.cc, text_pretty_*.cc) ---------------------------
  Status ParseOperation(Block& block);
  Status ParseRegion(Region& region, std::span<const ValueId> entry_args = {});
  // A pretty-form op whose name was read; results are to be defined.
  Status ParsePrettyOp(Operation& op, std::string_view name, size_t result_count);

  MlirModule& module() { return module_; }
  Attr* NewAttr(Attr::Kind kind) { return module_.NewAttr(kind); }
  const Attr* IntAttr(int64_t v, TypeId type = kNoType);
  const Attr* I64ArrayAttr(std::vector<int64_t> values);
  const Attr* EnumAttr(std::string_view dialect_name, std::string_view value);
  const Attr* BoolAttr(bool v);
  const Attr* StringAttr(std::string_view v);

  // ---- Values -----------------------------------------------------------
  // `%name` or `%name#N` at the cursor: the value it uses.
  Result<ValueId> ParseValueUse();
  // Defines `name` (with `count` results starting at `first`) in the innermost scope.
  Status DefineValues(const Token& name, ValueId first, size_t count);
  // `%a, %b, ...` until something else; appends to `out`.
  Status ParseValueUseList(std::vector<ValueId>& out);
  // Sets the types of an op's results from its signature and defines them.
  void PushScope(bool isolated);
  void PopScope();

  // Results of the op being parsed: created once its types are known.
  Status MakeResults(Operation& op, std::span<const TypeId> types, size_t expected);

  int depth_ = 0;

 private:
  struct Binding {
    ValueId first;
    uint32_t count;
  };
  struct Scope {
    std::unordered_map<std::string_view, Binding> names;
    bool isolated = false;
  };

  Status ParseTopLevel();
  Status ParseModuleBody(bool braced);
  Status ParseFunction();
  Status ParseAliasDefinition();
  Status ParseGenericOp(Operation& op, size_t result_count);

  Lexer lex_;
  std::string_view filename_;
  Token tok_;
  MlirModule module_;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, const Attr*> attr_aliases_;
  std::unordered_map<std::string, TypeId> type_aliases_;
  std::unordered_map<std::string_view, TypeId> type_memo_;  // type text -> id
  bool saw_module_name_ = false;
  int module_count_ = 0;

  friend class TypesAccess;
 public:
  // Access for the type and attribute files.
  std::unordered_map<std::string, const Attr*>& attr_aliases() { return attr_aliases_; }
  std::unordered_map<std::string, TypeId>& type_aliases() { return type_aliases_; }
  std::unordered_map<std::string_view, TypeId>& type_memo() { return type_memo_; }
  Lexer& lexer() { return lex_; }
  // Re-reads from byte `offset` of the current line (types scanned by character).
  void SeekTo(uint32_t offset);
  // Continues at token `t` (read before: its line and column are kept).
  void SeekToToken(const Token& t);
};

// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` (convolution dimension numbers)
// as the fields of #stablehlo.conv's raw form.
Result<const Attr*> ParseConvDimsBody(Parser& p);

}  // namespace kiln::stablehlo::text_internal
