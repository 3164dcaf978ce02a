// The converter's core: functions, the entry, blocks, regions and the values
// they read (converter.h).
#include "compiler/stablehlo/converter.h"
#include "compiler/stablehlo/quant_lowering.h"

#include <algorithm>

#include "compiler/stablehlo/attr_printer.h"
#include "compiler/stablehlo/function_text.h"
#include "compiler/stablehlo/mlir_types_text.h"
#include "compiler/stablehlo/refusals.h"

namespace kiln::stablehlo::convert_internal {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

namespace {

constexpr int kMaxRegionDepth = 200;

bool IsReturn(std::string_view name) {
  return name == "func.return" || name == "return" || name == "stablehlo.return" || name == "mhlo.return";
}

}  // namespace

Converter::Converter(const MlirModule& module, const ConvertOptions& options)
    : mlir_(module), options_(options) {}

Error Converter::OpError(const Operation& op, std::string message) const {
  return InvalidArgumentError(std::string(op.name) + ": " + message)
      .At({.file = options_.filename, .line = op.pos.line, .column = op.pos.column})
      .WithReason("stablehlo_convert_error");
}

Error Converter::Unsupported(const Operation& op, std::string message) const {
  Error e = OpError(op, std::move(message));
  e.code = ErrorCode::kUnimplemented;
  return e;
}

Result<Shape> Converter::ShapeOf(TypeId type, const Operation* op) const {
  const TypeInfo& t = types()[type];
  auto fail = [&](std::string message) -> Error {
    if (op != nullptr) return OpError(*op, message);
    return InvalidArgumentError(message).WithReason("stablehlo_convert_error");
  };
  if (t.kind == TypeKind::kOpaque) return fail("type " + t.unsupported_element + " has no HLO shape");
  if (!t.unsupported_element.empty()) {
    return fail("element type " + t.unsupported_element + " has no HLO counterpart");
  }
  switch (t.kind) {
    case TypeKind::kTensor: {
      if (t.unranked) return fail("unranked " + types().ToString(type) + " has no HLO shape");
      const hlo::PrimitiveType element =
          quantized_as_expressed_ && t.quant >= 0 ? types().quant(t.quant).expressed : t.element;
      Shape s(element, t.dims);
      std::vector<int64_t> dims = t.dims;
      bool dynamic = false;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] != kDynamic) continue;
        dynamic = true;
        if (!t.bounds.empty() && t.bounds[i] != kDynamic) dims[i] = t.bounds[i];
        else dims[i] = hlo::kUnboundedDim;
      }
      if (!dynamic) return s;
      Shape d(element, dims);
      for (size_t i = 0; i < t.dims.size(); ++i) {
        if (t.dims[i] == kDynamic) d.set_dynamic_dimension(static_cast<int64_t>(i), true);
      }
      return d;
    }
    case TypeKind::kScalar:
      return Shape(quantized_as_expressed_ && t.quant >= 0 ? types().quant(t.quant).expressed : t.element, {});
    case TypeKind::kToken:
      return Shape::Token();
    case TypeKind::kBuffer: {
      KILN_ASSIGN_OR_RETURN(Shape contents, ShapeOf(t.members.at(0), op));
      return Shape::Buffer(std::move(contents));
    }
    case TypeKind::kTuple: {
      std::vector<Shape> elements;
      for (TypeId m : t.members) {
        KILN_ASSIGN_OR_RETURN(Shape e, ShapeOf(m, op));
        elements.push_back(std::move(e));
      }
      return Shape::Tuple(std::move(elements));
    }
    default:
      return fail("type " + types().ToString(type) + " has no HLO shape");
  }
}

Result<Shape> Converter::ResultShape(const Operation& op, size_t i) const {
  if (i >= op.results.size()) return OpError(op, "expected at least " + std::to_string(i + 1) + " results");
  return ShapeOf(mlir_.value_type(op.results[i]), &op);
}

Result<Shape> Converter::ResultsShape(const Operation& op) const {
  if (op.results.size() == 1) return ResultShape(op);
  std::vector<Shape> shapes;
  for (size_t i = 0; i < op.results.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape s, ResultShape(op, i));
    shapes.push_back(std::move(s));
  }
  return Shape::Tuple(std::move(shapes));
}

std::vector<Instruction*> Converter::Operands(const Operation& op, size_t first, size_t count) const {
  std::vector<Instruction*> out;
  for (size_t i = first; i < op.operands.size() && out.size() < count; ++i) out.push_back(values_[op.operands[i]]);
  return out;
}

Status Converter::SetResults(const Operation& op, Instruction* result) {
  if (op.results.size() == 1) {
    values_[op.results[0]] = result;
    return Ok();
  }
  if (!result->shape().IsTuple() ||
      result->shape().tuple_shapes().size() != op.results.size()) {
    return OpError(op, "internal: expected a tuple of " + std::to_string(op.results.size()) + " results");
  }
  for (size_t i = 0; i < op.results.size(); ++i) {
    values_[op.results[i]] = emit().GetTupleElement(result, static_cast<int64_t>(i));
  }
  return Ok();
}

void Converter::PushEmitter(hlo::Computation* computation) {
  emitters_.push_back(std::make_unique<HloEmitter>(module_.get(), computation, &names_));
}

void Converter::PopEmitter() { emitters_.pop_back(); }

hlo::Computation* Converter::AddComputation(std::unique_ptr<hlo::Computation> computation) {
  return module_->AddComputation(std::move(computation), /*is_entry=*/false);
}

void Converter::IndexDefinitions(const Region& region) {
  for (const auto& block : region.blocks) {
    for (const Operation* op : block->ops) {
      for (ValueId r : op->results) defining_[r] = op;
      for (const Region& inner : op->regions) IndexDefinitions(inner);
    }
  }
}

Status Converter::ConvertOp(const Operation& op) {
  OpHandler handler = FindOpHandler(op.name);
  if (handler == nullptr) return Unsupported(op, "op is not supported");
  if (!quantized_as_expressed_ && HasQuantizedTypes(*this, op)) return ConvertDequantizeOpQuantize(*this, op, handler);
  return handler(*this, op);
}

Result<std::vector<Instruction*>> Converter::ConvertBlock(const Block& block) {
  for (const Operation* op : block.ops) {
    if (IsReturn(op->name)) {
      std::vector<Instruction*> results;
      for (ValueId v : op->operands) {
        if (values_[v] == nullptr) return OpError(*op, "returns a value that was not converted");
        results.push_back(values_[v]);
      }
      return results;
    }
    for (ValueId v : op->operands) {
      if (values_[v] == nullptr) return OpError(*op, "reads a value that was not converted");
    }
    KILN_RETURN_IF_ERROR(ConvertOp(*op));
    for (ValueId r : op->results) {
      if (values_[r] == nullptr) return OpError(*op, "internal: a result was not converted");
    }
  }
  return InvalidArgumentError("a block ends without a return").WithReason("stablehlo_convert_error");
}

std::vector<ValueId> Converter::Captures(const Region& region) const {
  std::unordered_set<ValueId> defined;
  std::unordered_set<ValueId> seen;
  std::vector<ValueId> out;
  // Iterative walk over nested regions.
  std::vector<const Region*> stack = {&region};
  std::vector<const Operation*> ops;
  while (!stack.empty()) {
    const Region* r = stack.back();
    stack.pop_back();
    for (const auto& block : r->blocks) {
      for (ValueId a : block->args) defined.insert(a);
      for (const Operation* op : block->ops) {
        ops.push_back(op);
        for (ValueId v : op->results) defined.insert(v);
        for (const Region& inner : op->regions) stack.push_back(&inner);
      }
    }
  }
  for (const Operation* op : ops) {
    for (ValueId v : op->operands) {
      if (defined.contains(v) || !seen.insert(v).second) continue;
      const Operation* def = DefiningOp(v);
      if (def != nullptr && def->name == "stablehlo.constant" && def->regions.empty()) continue;
      out.push_back(v);
    }
  }
  return out;
}

Result<Converter::RegionComputation> Converter::ConvertRegion(const Region& region, std::string_view name,
                                                              RegionArgs args, const Operation& owner,
                                                              const std::vector<ValueId>* captures_override) {
  if (region.blocks.size() != 1) return Unsupported(owner, "regions of several blocks are not supported");
  if (++depth_ > kMaxRegionDepth) return OpError(owner, "regions nest too deeply");
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{depth_};
  const Block& block = *region.blocks[0];
  RegionComputation out;
  out.captures = captures_override != nullptr ? *captures_override : Captures(region);
  if (args == RegionArgs::kScalars && !out.captures.empty()) {
    return Unsupported(owner, "a " + std::string(name) + " body may read only its arguments and constants");
  }
  if (args == RegionArgs::kBranch && !block.args.empty()) {
    return Unsupported(owner, "branch regions take no arguments");
  }
  auto computation = std::make_unique<hlo::Computation>(names_.Next(name));
  // What the captured values and re-made constants map to outside, restored
  // afterwards.
  std::vector<std::pair<ValueId, Instruction*>> saved;
  for (ValueId v : out.captures) {
    if (values_[v] == nullptr) return OpError(owner, "a region reads a value that is not defined before it");
    saved.emplace_back(v, values_[v]);
  }
  PushEmitter(computation.get());
  auto body = [&]() -> Result<std::vector<Instruction*>> {
    if (args == RegionArgs::kScalars) {
      for (size_t i = 0; i < block.args.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(Shape s, ShapeOf(mlir_.value_type(block.args[i]), &owner));
        values_[block.args[i]] =
            emit().Parameter(static_cast<int64_t>(i), std::move(s), "Arg_" + std::to_string(i));
      }
    } else {
      std::vector<Shape> elements;
      const bool has_state = args != RegionArgs::kBranch;
      if (has_state) {
        for (ValueId a : block.args) {
          KILN_ASSIGN_OR_RETURN(Shape s, ShapeOf(mlir_.value_type(a), &owner));
          elements.push_back(std::move(s));
        }
      }
      for (const auto& [v, outer] : saved) elements.push_back(outer->shape());
      Instruction* param = emit().Parameter(0, Shape::Tuple(std::move(elements)), "arg_tuple");
      int64_t index = 0;
      if (has_state) {
        for (ValueId a : block.args) values_[a] = emit().GetTupleElement(param, index++);
      }
      for (ValueId v : out.captures) values_[v] = emit().GetTupleElement(param, index++);
    }
    // Constants defined outside the region (converted already) and read in
    // it are made again inside.
    std::unordered_set<ValueId> done;
    std::vector<const Region*> stack = {&region};
    while (!stack.empty()) {
      const Region* r = stack.back();
      stack.pop_back();
      for (const auto& b : r->blocks) {
        for (const Operation* op : b->ops) {
          for (const Region& inner : op->regions) stack.push_back(&inner);
          for (ValueId v : op->operands) {
            const Operation* def = DefiningOp(v);
            if (def == nullptr || def->name != "stablehlo.constant" || values_[v] == nullptr) continue;
            if (!done.insert(v).second) continue;
            if (std::find(out.captures.begin(), out.captures.end(), v) != out.captures.end()) continue;
            saved.emplace_back(v, values_[v]);
            KILN_RETURN_IF_ERROR(ConvertOp(*def));
          }
        }
      }
    }
    return ConvertBlock(block);
  };
  Result<std::vector<Instruction*>> results = body();
  if (results) {
    if (args == RegionArgs::kTuple) {
      std::vector<Instruction*> state = *results;
      for (ValueId v : out.captures) state.push_back(values_[v]);
      computation->set_root(emit().Tuple(state));
    } else if (results->size() == 1) {
      computation->set_root((*results)[0]);
    } else {
      computation->set_root(emit().Tuple(*results));
    }
  }
  PopEmitter();
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) values_[it->first] = it->second;
  if (!results) return std::unexpected(results.error());
  out.computation = AddComputation(std::move(computation));
  return out;
}

Result<hlo::Computation*> Converter::FunctionComputation(std::string_view name, const Operation& at) {
  auto it = functions_.find(name);
  if (it == functions_.end()) return OpError(at, "calls undefined function @" + std::string(name));
  const Function* fn = it->second;
  auto done = converted_.find(fn);
  if (done != converted_.end()) return done->second;
  if (in_progress_.contains(fn)) return Unsupported(at, "recursive call to @" + std::string(name));
  if (fn->body.blocks.empty()) return OpError(at, "calls @" + std::string(name) + ", which has no body");
  if (++depth_ > kMaxRegionDepth) return OpError(at, "calls nest too deeply");
  in_progress_.insert(fn);
  Result<hlo::Computation*> c = ConvertFunction(*fn, false);
  in_progress_.erase(fn);
  --depth_;
  if (c) converted_[fn] = *c;
  return c;
}

Result<hlo::Computation*> Converter::ConvertFunction(const Function& fn, bool is_entry) {
  const Block& block = *fn.body.blocks[0];
  if (fn.body.blocks.size() != 1) {
    return InvalidArgumentError("@" + fn.name + ": functions of several blocks are not supported")
        .At({.file = options_.filename, .line = fn.pos.line, .column = fn.pos.column});
  }
  auto computation = std::make_unique<hlo::Computation>(is_entry ? NameGen::Sanitized(fn.name) : names_.Next(fn.name));
  PushEmitter(computation.get());
  Status params = [&]() -> Status {
    for (size_t i = 0; i < block.args.size(); ++i) {
      Result<Shape> s = ShapeOf(mlir_.value_type(block.args[i]), nullptr);
      if (!s) return s.error().WithContext("@" + fn.name + " argument " + std::to_string(i));
      values_[block.args[i]] = emit().Parameter(static_cast<int64_t>(i), std::move(*s), "Arg_" + std::to_string(i));
    }
    return Ok();
  }();
  Result<std::vector<Instruction*>> results =
      params ? ConvertBlock(block) : Result<std::vector<Instruction*>>(std::unexpected(params.error()));
  if (results) {
    if (results->size() == 1) {
      computation->set_root((*results)[0]);
    } else {
      computation->set_root(emit().Tuple(*results));
    }
  }
  PopEmitter();
  if (!results) return std::unexpected(results.error());
  if (is_entry) return module_->AddComputation(std::move(computation), /*is_entry=*/true);
  return AddComputation(std::move(computation));
}

Result<hlo::Computation*> Converter::SynthesizeEntry(const std::vector<const Function*>& functions) {
  // Callees first. A function that does not convert (an element type HLO
  // lacks, a call to nothing) is kept as an opaque call holding its
  // canonical text, so that the module still has one key covering it; the
  // compiler refuses such calls (refusals.h) with the reason kept beside.
  std::vector<hlo::Computation*> callees;
  std::vector<std::string> opaque_reasons;
  Operation at;
  for (const Function* fn : functions) {
    at.pos = fn->pos;
    at.name = "func.func";
    Result<hlo::Computation*> c = FunctionComputation(fn->name, at);
    callees.push_back(c ? *c : nullptr);
    opaque_reasons.push_back(c ? std::string() : c.error().ToString());
  }
  auto entry = std::make_unique<hlo::Computation>("main");
  PushEmitter(entry.get());
  std::vector<Instruction*> results;
  int64_t param = 0;
  auto parameter = [&](const Shape& shape) {
    const std::string name = "Arg_" + std::to_string(param);
    return emit().Parameter(param++, shape, name);
  };
  for (size_t f = 0; f < functions.size(); ++f) {
    const Function& fn = *functions[f];
    std::vector<Instruction*> args;
    if (hlo::Computation* callee = callees[f]) {
      for (const Instruction* p : callee->parameters()) args.push_back(parameter(p->shape()));
      Instruction* call = emit().Add(Opcode::kCall, callee->root()->shape(), args, "call");
      call->AddAttribute(hlo::Attribute::Calls("to_apply", callee));
      results.push_back(call);
      continue;
    }
    // Arguments and results whose types have no HLO shape are left out.
    for (TypeId t : fn.arg_types) {
      if (Result<Shape> s = ShapeOf(t, nullptr)) args.push_back(parameter(*s));
    }
    std::vector<Shape> shapes;
    for (TypeId t : fn.result_types) {
      if (Result<Shape> s = ShapeOf(t, nullptr)) shapes.push_back(*s);
    }
    Instruction* call = emit().Add(Opcode::kCustomCall, Shape::Tuple(std::move(shapes)), args, "opaque_function");
    HloEmitter::SetAttr(call, "custom_call_target", QuotedHloString(kOpaqueFunctionTarget));
    HloEmitter::SetRawAttr(call, "backend_config", QuotedHloString(CanonicalFunctionText(mlir_, fn)));
    HloEmitter::SetRawAttr(call, "metadata", "{op_name=" + QuotedHloString("@" + fn.name + ": " + opaque_reasons[f]) + "}");
    results.push_back(call);
  }
  entry->set_root(emit().Tuple(results));
  PopEmitter();
  return module_->AddComputation(std::move(entry), /*is_entry=*/true);
}

Result<std::unique_ptr<hlo::Module>> Converter::Run() {
  module_ = std::make_unique<hlo::Module>(mlir_.name.empty() ? "module" : NameGen::Sanitized(mlir_.name));
  values_.assign(mlir_.value_count(), nullptr);
  defining_.assign(mlir_.value_count(), nullptr);
  const Function* main = nullptr;
  std::vector<const Function*> publics;
  for (const auto& fn : mlir_.functions) {
    if (!functions_.emplace(fn->name, fn.get()).second) {
      return InvalidArgumentError("function @" + fn->name + " is defined twice")
          .At({.file = options_.filename, .line = fn->pos.line, .column = fn->pos.column})
          .WithReason("stablehlo_convert_error");
    }
    IndexDefinitions(fn->body);
    if (fn->name == "main") main = fn.get();
    if (fn->is_public && !fn->body.blocks.empty()) publics.push_back(fn.get());
  }
  if (main == nullptr && publics.size() == 1) main = publics[0];
  if (main != nullptr) {
    if (main->body.blocks.empty()) return InvalidArgumentError("@" + main->name + " has no body");
    in_progress_.insert(main);
    KILN_ASSIGN_OR_RETURN(hlo::Computation * entry, ConvertFunction(*main, /*is_entry=*/true));
    (void)entry;
  } else {
    if (publics.empty()) return InvalidArgumentError("the module has no public function with a body");
    KILN_ASSIGN_OR_RETURN(hlo::Computation * entry, SynthesizeEntry(publics));
    (void)entry;
  }
  KILN_RETURN_IF_ERROR(ApplyModuleAttributes());
  return std::move(module_);
}

}  // namespace kiln::stablehlo::convert_internal

namespace kiln::stablehlo {

Result<std::unique_ptr<hlo::Module>> ConvertToHlo(const MlirModule& module, const ConvertOptions& options) {
  convert_internal::Converter converter(module, options);
  return converter.Run();
}

}  // namespace kiln::stablehlo
