// The StableHLO-to-HLO converter behind ConvertToHlo (convert.h), shared by
// the files that convert each family of ops (convert_*.cc, chlo_*.cc).
// Internal to kiln_stablehlo. One converter converts one module, on one
// thread.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/module.h"
#include "compiler/stablehlo/convert.h"
#include "compiler/stablehlo/hlo_emitter.h"
#include "compiler/stablehlo/mlir_module.h"

namespace kiln::stablehlo::convert_internal {

class Converter;
using OpHandler = Status (*)(Converter& c, const Operation& op);

// "add" of "stablehlo.add".
inline std::string_view OpShortName(std::string_view name) {
  const size_t dot = name.find('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// The handler of an op name ("stablehlo.add", "chlo.erf", "check.eq"), or
// nullptr (op_table.cc).
OpHandler FindOpHandler(std::string_view name);

class Converter {
 public:
  Converter(const MlirModule& module, const ConvertOptions& options);
  Result<std::unique_ptr<hlo::Module>> Run();

  const MlirModule& mlir() const { return mlir_; }
  const TypeTable& types() const { return mlir_.types(); }
  const ConvertOptions& options() const { return options_; }
  HloEmitter& emit() { return *emitters_.back(); }
  hlo::Module& module() { return *module_; }

  // The HLO shape of an MLIR type: tensors as arrays (dynamic dimensions
  // `?`, bounds `<=N`; quantized ones as their storage type), tuples,
  // tokens. Fails at `op` for a type HLO has no shape for.
  Result<hlo::Shape> ShapeOf(TypeId type, const Operation* op) const;
  Result<hlo::Shape> ResultShape(const Operation& op, size_t i = 0) const;
  // The op's one result's shape, or a tuple of all its results' shapes (an
  // empty tuple for none).
  Result<hlo::Shape> ResultsShape(const Operation& op) const;
  TypeId OperandType(const Operation& op, size_t i) const { return mlir_.value_type(op.operands[i]); }
  const TypeInfo& OperandTypeInfo(const Operation& op, size_t i) const { return types()[OperandType(op, i)]; }
  const TypeInfo& ResultTypeInfo(const Operation& op, size_t i = 0) const {
    return types()[mlir_.value_type(op.results[i])];
  }

  hlo::Instruction* Value(ValueId v) const { return values_[v]; }
  hlo::Instruction* Operand(const Operation& op, size_t i) const { return values_[op.operands[i]]; }
  std::vector<hlo::Instruction*> Operands(const Operation& op, size_t first = 0, size_t count = SIZE_MAX) const;
  void SetValue(ValueId v, hlo::Instruction* instr) { values_[v] = instr; }
  // Binds the op's results to `result`: the value itself for one result,
  // get-tuple-elements of it for several.
  Status SetResults(const Operation& op, hlo::Instruction* result);

  // An error at the op's place in the input.
  Error OpError(const Operation& op, std::string message) const;
  Error Unsupported(const Operation& op, std::string message) const;

  // How a region's block arguments reach the computation made of it.
  enum class RegionArgs {
    kScalars,  // one parameter per block argument (reduce, sort, scatter, ... bodies)
    kTuple,    // one tuple parameter: the arguments, then the captured values; root the
               // same tuple (a while body)
    kLoopCondition,  // kTuple's parameter, the one result as root (a while condition)
    kBranch,   // one tuple parameter of the captured values; no arguments (case, if)
  };
  struct RegionComputation {
    hlo::Computation* computation = nullptr;
    // kTuple/kBranch: the outer values the region reads, in tuple order after
    // the arguments (constants are re-made inside instead).
    std::vector<ValueId> captures;
  };
  // Converts `region` into a new computation of the module named after
  // `name`. `captures_override` (kTuple) fixes the captured values, so that
  // a loop's condition and body take the same state.
  Result<RegionComputation> ConvertRegion(const Region& region, std::string_view name, RegionArgs args,
                                          const Operation& owner,
                                          const std::vector<ValueId>* captures_override = nullptr);
  // The values `region` reads that are defined outside it, constants
  // excepted, in first-use order.
  std::vector<ValueId> Captures(const Region& region) const;

  // The computation of function `name` (converted once; recursion is an
  // error).
  Result<hlo::Computation*> FunctionComputation(std::string_view name, const Operation& at);

  // The op defining `v`, or nullptr for block arguments.
  const Operation* DefiningOp(ValueId v) const { return v < defining_.size() ? defining_[v] : nullptr; }

  // Adds a finished computation to the module (callees before callers).
  hlo::Computation* AddComputation(std::unique_ptr<hlo::Computation> computation);
  void PushEmitter(hlo::Computation* computation);
  void PopEmitter();

  // Converts the ops of `block` up to its terminator, whose operands are
  // returned (converted).
  Result<std::vector<hlo::Instruction*>> ConvertBlock(const Block& block);
  Status ConvertOp(const Operation& op);

  std::string_view filename() const { return options_.filename; }

  // While one lives, ShapeOf gives a quantized tensor type its expressed
  // type instead of its storage type: for the ops quant_lowering.h converts
  // over dequantized values.
  class ExpressedQuantizedTypes {
   public:
    explicit ExpressedQuantizedTypes(Converter& c) : c_(c), was_(c.quantized_as_expressed_) {
      c.quantized_as_expressed_ = true;
    }
    ~ExpressedQuantizedTypes() { c_.quantized_as_expressed_ = was_; }
    ExpressedQuantizedTypes(const ExpressedQuantizedTypes&) = delete;
    ExpressedQuantizedTypes& operator=(const ExpressedQuantizedTypes&) = delete;

   private:
    Converter& c_;
    bool was_;
  };

 private:
  void IndexDefinitions(const Region& region);
  Result<hlo::Computation*> ConvertFunction(const Function& fn, bool is_entry);
  Result<hlo::Computation*> SynthesizeEntry(const std::vector<const Function*>& functions);
  Status ApplyModuleAttributes();

  bool quantized_as_expressed_ = false;  // ExpressedQuantizedTypes
  const MlirModule& mlir_;
  const ConvertOptions& options_;
  std::unique_ptr<hlo::Module> module_;
  NameGen names_;
  std::vector<std::unique_ptr<HloEmitter>> emitters_;
  std::vector<hlo::Instruction*> values_;
  std::vector<const Operation*> defining_;
  std::unordered_map<std::string_view, const Function*> functions_;
  std::unordered_map<const Function*, hlo::Computation*> converted_;
  std::unordered_set<const Function*> in_progress_;
  std::vector<std::unique_ptr<hlo::Computation>> pending_;  // computations being built
  int depth_ = 0;
};

// Reading op attributes (attr_reader.cc). Each fails at the op naming the
// attribute.
Result<const Attr*> RequiredAttr(const Converter& c, const Operation& op, std::string_view name);
// Integers from array<i64: ...>, dense<...> : tensor<Nxi64>, [1, 2] or a
// single integer; `fallback` when absent and not required.
Result<std::vector<int64_t>> IntListAttr(const Converter& c, const Operation& op, std::string_view name,
                                         bool required = true);
std::vector<int64_t> IntListOf(const TypeTable& types, const Attr* attr);
Result<int64_t> IntAttrValue(const Converter& c, const Operation& op, std::string_view name,
                             std::optional<int64_t> fallback = std::nullopt);
bool BoolAttrValue(const Operation& op, std::string_view name, bool fallback = false);
// The value of #stablehlo<name VALUE> or a bare VALUE; empty when absent.
std::string_view EnumAttrValue(const Operation& op, std::string_view name);
std::string_view EnumValueOf(const Attr* attr);
// A field of a #stablehlo.struct<...> attribute, or of the op itself when the
// struct is not there (VHLO's flattened attributes).
const Attr* StructField(const Operation& op, std::string_view struct_name, std::string_view field);

}  // namespace kiln::stablehlo::convert_internal
