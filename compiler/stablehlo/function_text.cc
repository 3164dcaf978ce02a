#include "compiler/stablehlo/function_text.h"

#include <unordered_map>

#include "compiler/stablehlo/attr_printer.h"
#include "compiler/stablehlo/mlir_types_text.h"

namespace kiln::stablehlo {
namespace {

class Printer {
 public:
  explicit Printer(const MlirModule& m) : m_(m) {}

  std::string Function(const stablehlo::Function& fn) {
    out_ = "func(";
    Types(fn.arg_types);
    out_ += ") -> (";
    Types(fn.result_types);
    out_ += ")";
    for (const auto& attrs : fn.arg_attrs) out_ += " " + SortedAttrsText(m_.types(), attrs);
    if (!fn.body.blocks.empty()) Region(fn.body);
    return std::move(out_);
  }

 private:
  void Types(const std::vector<TypeId>& types) {
    for (size_t i = 0; i < types.size(); ++i) {
      if (i > 0) out_ += ", ";
      AppendTypeText(m_.types(), types[i], out_);
    }
  }

  void Value(ValueId v) {
    auto [it, added] = numbers_.try_emplace(v, numbers_.size());
    out_ += "%" + std::to_string(it->second);
  }

  void Region(const stablehlo::Region& region) {
    out_ += " {";
    for (const auto& block : region.blocks) {
      out_ += " ^(";
      for (size_t i = 0; i < block->args.size(); ++i) {
        if (i > 0) out_ += ", ";
        Value(block->args[i]);
        out_ += ": ";
        AppendTypeText(m_.types(), m_.value_type(block->args[i]), out_);
      }
      out_ += "):";
      for (const Operation* op : block->ops) Op(*op);
    }
    out_ += " }";
  }

  void Op(const Operation& op) {
    out_ += " ";
    for (size_t i = 0; i < op.results.size(); ++i) {
      if (i > 0) out_ += ", ";
      Value(op.results[i]);
    }
    if (!op.results.empty()) out_ += " = ";
    out_ += "\"" + std::string(op.name) + "\"(";
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (i > 0) out_ += ", ";
      Value(op.operands[i]);
    }
    out_ += ") " + SortedAttrsText(m_.types(), op.attrs) + " : (";
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (i > 0) out_ += ", ";
      AppendTypeText(m_.types(), m_.value_type(op.operands[i]), out_);
    }
    out_ += ") -> (";
    for (size_t i = 0; i < op.results.size(); ++i) {
      if (i > 0) out_ += ", ";
      AppendTypeText(m_.types(), m_.value_type(op.results[i]), out_);
    }
    out_ += ")";
    for (const stablehlo::Region& r : op.regions) Region(r);
    out_ += ";";
  }

  const MlirModule& m_;
  std::string out_;
  std::unordered_map<ValueId, size_t> numbers_;
};

}  // namespace

std::string CanonicalFunctionText(const MlirModule& module, const Function& fn) {
  return Printer(module).Function(fn);
}

}  // namespace kiln::stablehlo
