// Custom calls, the `check` test dialect and ops kept opaque
// (op_handlers.h). Checks become side-effecting custom calls the evaluator
// runs (runtime/eval/check_calls.h): target check.expect_eq,
// check.expect_almost_eq, check.expect_close or check.eq, operands (actual,
// expected), backend_config holding the tolerance or ULP bounds.
#include <charconv>

#include "compiler/stablehlo/attr_printer.h"
#include "compiler/stablehlo/op_handlers.h"
#include "compiler/stablehlo/shape_folding.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;


std::string DoubleText(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, p);
}

// The interpreter's tolerances (stablehlo-translate --interpret): custom
// calls check.expect_almost_eq 0.001, check.eq 0.0001 on floats,
// check.expect_close 0..3 ULPs; the ops' attributes default to 0.0001 and
// 0..3.
struct CheckSpec {
  std::string_view target;  // the evaluator's kind
  std::string config;       // backend_config
  bool has_result = false;  // check.eq gives an i1
};

Status EmitCheck(Converter& c, const Operation& op, const CheckSpec& spec, Instruction* actual,
                 Instruction* expected) {
  if (!actual->shape().IsArray() || !expected->shape().IsArray() ||
      actual->shape().dimensions() != expected->shape().dimensions()) {
    return c.OpError(op, "compares values of different shapes " + actual->shape().ToString() + " and " +
                             expected->shape().ToString());
  }
  Shape shape = spec.has_result ? Shape(hlo::PrimitiveType::kPred, {}) : Shape::Tuple({});
  const std::string name = std::string(spec.target) + ".L" + std::to_string(op.pos.line);
  Instruction* check = c.emit().Add(Opcode::kCustomCall, shape, {actual, expected}, name);
  HloEmitter::SetAttr(check, "custom_call_target", QuotedHloString(spec.target));
  HloEmitter::SetAttr(check, "custom_call_has_side_effect", "true");
  if (!spec.config.empty()) HloEmitter::SetRawAttr(check, "backend_config", QuotedHloString(spec.config));
  HloEmitter::SetRawAttr(check, "metadata",
                         "{op_name=" + QuotedHloString(op.name) + " source_file=" + QuotedHloString(c.filename()) +
                             " source_line=" + std::to_string(op.pos.line) + "}");
  if (spec.has_result && !op.results.empty()) c.SetValue(op.results[0], check);
  return Ok();
}

Result<Instruction*> ConstantOperand(Converter& c, const Operation& op) {
  const Attr* value = op.FindAttr("value");
  if (value == nullptr || value->kind != Attr::Kind::kDense) return c.OpError(op, "missing its dense value");
  return EmitDenseConstant(c, op, value, Shape(value->literal->shape().element_type(), c.types()[value->type].dims));
}

}  // namespace

Status ConvertCheckOp(Converter& c, const Operation& op) {
  const std::string_view kind = op.name.substr(6);  // after "check."
  CheckSpec spec;
  Instruction* actual = op.operands.empty() ? nullptr : c.Operand(op, 0);
  if (actual == nullptr) return c.OpError(op, "expected an operand");
  Instruction* expected = nullptr;
  const bool constant = kind.ends_with("_const") || kind == "eq" || kind == "almost_eq";
  if (constant && op.operands.size() == 1) {
    KILN_ASSIGN_OR_RETURN(expected, ConstantOperand(c, op));
  } else if (op.operands.size() == 2) {
    expected = c.Operand(op, 1);
  } else {
    return c.OpError(op, "expected two operands, or one and a value");
  }
  const Attr* tolerance = op.FindAttr("tolerance");
  const double tol = tolerance != nullptr && tolerance->kind == Attr::Kind::kFloat ? tolerance->f : 0.0001;
  if (kind == "expect_eq" || kind == "expect_eq_const" || kind == "eq") {
    spec.target = "check.expect_eq";
  } else if (kind == "expect_almost_eq" || kind == "expect_almost_eq_const" || kind == "almost_eq") {
    spec.target = "check.expect_almost_eq";
    spec.config = "tolerance=" + DoubleText(tol);
  } else if (kind == "expect_close") {
    spec.target = "check.expect_close";
    KILN_ASSIGN_OR_RETURN(int64_t lo, IntAttrValue(c, op, "min_ulp_difference", 0));
    KILN_ASSIGN_OR_RETURN(int64_t hi, IntAttrValue(c, op, "max_ulp_difference", 3));
    spec.config = "min_ulp=" + std::to_string(lo) + " max_ulp=" + std::to_string(hi);
  } else {
    return c.Unsupported(op, "check op is not supported");
  }
  return EmitCheck(c, op, spec, actual, expected);
}

// jax.export's shape-polymorphism assertion (`@shape_assertion(%cond,
// %dims...) {error_message = ...}`, no results): JAX's shape refinement
// checks and removes it. A condition known false here fails with the
// program's message; otherwise the assertion adds nothing to the HLO.
Status ConvertShapeAssertion(Converter& c, const Operation& op) {
  if (op.operands.empty() || !op.results.empty()) return c.OpError(op, "shape_assertion takes a condition and gives no results");
  const Instruction* condition = c.Operand(op, 0);
  if (condition->opcode() != Opcode::kConstant || condition->literal() == nullptr) return Ok();
  std::optional<IntTensor> value = IntTensorOf(*condition->literal());
  if (!value.has_value() || value->values.size() != 1 || value->values[0] != 0) return Ok();
  const Attr* message = op.FindAttr("error_message");
  std::string text = message != nullptr && message->kind == Attr::Kind::kString ? message->text : "no message";
  return c.OpError(op, "shape assertion fails: " + text);
}

Status ConvertCustomCall(Converter& c, const Operation& op) {
  const Attr* target = op.FindAttr("call_target_name");
  if (target == nullptr || target->kind != Attr::Kind::kString) return c.OpError(op, "missing call_target_name");
  const std::string& name = target->text;
  if (name == "shape_assertion") return ConvertShapeAssertion(c, op);
  if (name.starts_with("check.")) {
    if (op.operands.size() != 2) return c.OpError(op, "a check takes two operands");
    CheckSpec spec;
    if (name == "check.expect_eq") {
      spec.target = "check.expect_eq";
    } else if (name == "check.expect_almost_eq") {
      spec.target = "check.expect_almost_eq";
      spec.config = "tolerance=0.001";
    } else if (name == "check.expect_close") {
      spec.target = "check.expect_close";
      spec.config = "min_ulp=0 max_ulp=3";
    } else if (name == "check.eq") {
      spec.target = "check.eq";
      spec.config = "tolerance=0.0001";
      spec.has_result = true;
    } else {
      return c.Unsupported(op, "custom call " + name + " is not a check kiln knows");
    }
    if (spec.has_result && op.results.size() != 1) return c.OpError(op, "check.eq has one result");
    return EmitCheck(c, op, spec, c.Operand(op, 0), c.Operand(op, 1));
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  Instruction* call = c.emit().Add(Opcode::kCustomCall, std::move(shape), c.Operands(op), "custom-call");
  HloEmitter::SetAttr(call, "custom_call_target", QuotedHloString(name));
  if (BoolAttrValue(op, "has_side_effect")) HloEmitter::SetAttr(call, "custom_call_has_side_effect", "true");
  if (const Attr* config = op.FindAttr("backend_config")) {
    if (config->kind == Attr::Kind::kString) {
      if (!config->text.empty()) HloEmitter::SetRawAttr(call, "backend_config", QuotedHloString(config->text));
    } else if (config->kind == Attr::Kind::kDict) {
      std::string text;
      AppendAttrText(c.types(), *config, text);
      HloEmitter::SetRawAttr(call, "backend_config", QuotedHloString(text));
    }
  }
  if (const Attr* api = op.FindAttr("api_version")) {
    std::vector<int64_t> v = IntListOf(c.types(), api);
    std::string_view e = EnumValueOf(api);
    int64_t version = v.size() == 1 ? v[0] : e == "API_VERSION_STATUS_RETURNING" ? 2
                                          : e == "API_VERSION_STATUS_RETURNING_UNIFIED" ? 3
                                          : e == "API_VERSION_TYPED_FFI" ? 4 : 1;
    static constexpr std::string_view kNames[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                                  "API_VERSION_STATUS_RETURNING",
                                                  "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
    if (version >= 2 && version <= 4) HloEmitter::SetAttr(call, "api_version", kNames[version]);
  }
  if (const Attr* called = op.FindAttr("called_computations");
      called != nullptr && called->kind == Attr::Kind::kArray && !called->items.empty()) {
    hlo::Attribute attr;
    attr.name = "called_computations";
    attr.kind = hlo::Attribute::Kind::kComputations;
    attr.braced = true;
    for (const Attr* item : called->items) {
      if (item->kind != Attr::Kind::kSymbol) return c.OpError(op, "bad called_computations");
      KILN_ASSIGN_OR_RETURN(hlo::Computation * fn, c.FunctionComputation(item->text, op));
      attr.computations.push_back(fn);
    }
    call->AddAttribute(std::move(attr));
  }
  if (!op.results.empty()) return c.SetResults(op, call);
  return Ok();
}

Status ConvertAsOpaqueCustomCall(Converter& c, const Operation& op) {
  if (!op.regions.empty()) return c.Unsupported(op, "op is not supported");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  Instruction* call = c.emit().Add(Opcode::kCustomCall, std::move(shape), c.Operands(op), "custom-call");
  HloEmitter::SetAttr(call, "custom_call_target", QuotedHloString(op.name));
  HloEmitter::SetRawAttr(call, "backend_config", QuotedHloString(SortedAttrsText(c.types(), op.attrs)));
  if (!op.results.empty()) return c.SetResults(op, call);
  return Ok();
}

}  // namespace kiln::stablehlo::convert_internal
