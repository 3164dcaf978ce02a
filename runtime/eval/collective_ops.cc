// The collectives: all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute, collective-broadcast and their -start/-done forms.
//
// On one chip (EvalOptions::slice unset) the chip is replica 0 of partition
// 0 and the only member of every group, so a collective passes its operand
// through (collective-permute yields zeros unless the chip sends to itself);
// a result shape that implies more participants is an error. On a slice the
// device swaps its operands with its group through the SliceRendezvous and
// computes the result from every member's values, as XLA defines each op.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/collective_groups.h"
#include "runtime/eval/instruction_error.h"
#include "runtime/eval/interpreter.h"
#include "runtime/eval/slice_rendezvous.h"
#include "runtime/kernels/combiner.h"
#include "runtime/kernels/element_access.h"

namespace kiln::runtime {
namespace {

using hlo::Instruction;
using hlo::Literal;
using hlo::Opcode;

bool IsStart(Opcode op) {
  return op == Opcode::kAllReduceStart || op == Opcode::kAllGatherStart ||
         op == Opcode::kCollectivePermuteStart;
}
bool IsDone(Opcode op) {
  return op == Opcode::kAllReduceDone || op == Opcode::kAllGatherDone ||
         op == Opcode::kCollectivePermuteDone;
}

bool SameShape(const Value& v, const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    if (!v.is_tuple() || v.elements().size() != shape.tuple_shapes().size()) return false;
    for (size_t i = 0; i < v.elements().size(); ++i) {
      if (!SameShape(v.elements()[i], shape.tuple_shapes(i))) return false;
    }
    return true;
  }
  return !v.is_tuple() && !v.empty() && v.array().shape().dimensions() == shape.dimensions() &&
         v.array().shape().element_type() == shape.element_type();
}

// The results as one value: the array itself, or a tuple of several.
Value Combined(std::vector<Value> results) {
  if (results.size() == 1) return std::move(results[0]);
  return Value::Tuple(std::move(results));
}

int64_t Product(std::span<const int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// Element counts before `dim` and bytes of one index of `dim` (the
// elements after it): an array is `outer` runs of extent(dim) * `row` bytes.
struct Runs {
  int64_t outer = 1;
  int64_t row = 0;
};
Runs RunsAround(const hlo::Shape& shape, int64_t dim) {
  auto dims = shape.dimensions();
  return {Product(std::span(dims).first(dim)),
          Product(std::span(dims).subspan(dim + 1)) * hlo::HostByteWidth(shape.element_type())};
}

// `parts` (equal shapes) placed one after another along `dim`.
Literal ConcatAlong(std::span<const Literal* const> parts, int64_t dim) {
  std::vector<int64_t> dims(parts[0]->shape().dimensions().begin(), parts[0]->shape().dimensions().end());
  dims[dim] *= static_cast<int64_t>(parts.size());
  Literal out = Literal::Uninitialized(hlo::Shape(parts[0]->shape().element_type(), dims));
  const Runs runs = RunsAround(parts[0]->shape(), dim);
  const int64_t chunk = parts[0]->shape().dimensions(dim) * runs.row;
  uint8_t* dst = out.mutable_data().data();
  for (int64_t o = 0; o < runs.outer; ++o) {
    for (const Literal* part : parts) {
      if (chunk > 0) std::memcpy(dst, part->data().data() + o * chunk, chunk);
      dst += chunk;
    }
  }
  return out;
}

// Block `index` of `count` equal blocks of `lit` along `dim`.
Literal BlockAlong(const Literal& lit, int64_t dim, int64_t index, int64_t count) {
  std::vector<int64_t> dims(lit.shape().dimensions().begin(), lit.shape().dimensions().end());
  const int64_t full = dims[dim];
  dims[dim] = full / count;
  Literal out = Literal::Uninitialized(hlo::Shape(lit.shape().element_type(), dims));
  const Runs runs = RunsAround(lit.shape(), dim);
  const int64_t chunk = dims[dim] * runs.row;
  for (int64_t o = 0; o < runs.outer; ++o) {
    if (chunk > 0) {
      std::memcpy(out.mutable_data().data() + o * chunk, lit.data().data() + (o * full + index * dims[dim]) * runs.row,
                  chunk);
    }
  }
  return out;
}

// The reduction of `parts` (equal shapes) with `instr`'s to_apply, in group
// order. A group of one is the value itself.
Result<Literal> ReduceParts(const Instruction& instr, std::span<const Literal* const> parts, EvalContext& ctx) {
  if (parts.size() == 1) return *parts[0];
  KILN_ASSIGN_OR_RETURN(const hlo::Computation* to_apply, hlo::GetCalledComputation(instr, "to_apply"));
  Result<Combiner> created = Combiner::Create(*to_apply, 1, ctx);
  if (!created)
    return std::unexpected(created.error().WithContext("instruction %" + std::string(instr.name())));
  Combiner& combiner = *created;
  const hlo::Shape& shape = parts[0]->shape();
  const int64_t count = shape.ElementCount();
  KILN_RETURN_IF_ERROR(ctx.Charge(count * static_cast<int64_t>(parts.size())));
  const hlo::PrimitiveType reducer_type = combiner.scratch(0).shape().element_type();
  if (combiner.kind() != ReducerKind::kGeneral && shape.element_type() == reducer_type) {
    return VisitComputeType(reducer_type, [&]<typename T>(T) {
      std::vector<T> acc = ElementsAs<T>(*parts[0]);
      for (size_t m = 1; m < parts.size(); ++m) {
        const std::vector<T> in = ElementsAs<T>(*parts[m]);
        for (int64_t i = 0; i < count; ++i) acc[i] = ApplyReducer<T>(combiner.kind(), acc[i], in[i]);
      }
      Literal out = Literal::Uninitialized(shape);
      StoreElements<T>(acc, out);
      return out;
    });
  }
  Literal acc(hlo::Shape(reducer_type, shape.dimensions()));
  for (int64_t i = 0; i < count; ++i) ConvertElement(*parts[0], i, acc, i);
  Literal* accs[] = {&acc};
  for (size_t m = 1; m < parts.size(); ++m) {
    const Literal* inputs[] = {parts[m]};
    for (int64_t i = 0; i < count; ++i) {
      if (Status status = combiner.Combine(accs, i, inputs, i); !status) {
        return std::unexpected(status.error().WithContext("instruction %" + std::string(instr.name())));
      }
    }
  }
  if (reducer_type == shape.element_type()) return acc;
  Literal out(shape);
  for (int64_t i = 0; i < count; ++i) ConvertElement(acc, i, out, i);
  return out;
}

// Operand k of every member, in group order.
std::vector<const Literal*> Column(std::span<const Contribution> all, size_t k) {
  std::vector<const Literal*> out;
  for (const Contribution& c : all) out.push_back(&(*c)[k]);
  return out;
}

// An asynchronous start's tuple: (operand, result, zeroed context...).
Value StartTuple(const Instruction& instr, const Value& operand, Value result) {
  std::vector<Value> parts = {operand, std::move(result)};
  for (size_t i = 2; i < instr.shape().tuple_shapes().size(); ++i) {
    parts.push_back(ZeroValue(instr.shape().tuple_shapes(i)));
  }
  return Value::Tuple(std::move(parts));
}

std::string GroupSize(size_t n) { return std::to_string(n) + " device" + (n == 1 ? "" : "s"); }

}  // namespace

Result<Value> Interpreter::EvalCollective(const Instruction& instr, std::span<const Value> operands) {
  const Opcode op = instr.opcode();
  if (operands.empty()) return std::unexpected(InstrError(instr, "needs an operand"));
  if (IsDone(op)) {
    // A start whose shape is the result's (all-reduce-start of several
    // operands) is passed through; a (operand, result, ...) start gives its
    // result element.
    if (!operands[0].is_tuple() || instr.operand(0)->shape().Compatible(instr.shape())) {
      return operands[0];
    }
    if (operands[0].elements().size() < 2) {
      return std::unexpected(InstrError(instr, "start value has no result element"));
    }
    return operands[0].elements()[1];
  }
  if (op == Opcode::kRaggedAllToAll) {
    return std::unexpected(UnsupportedOpError(instr, "unsupported op ragged-all-to-all"));
  }
  // An asynchronous start written with a tuple shape holds (operand, result,
  // ...); otherwise its shape is the result's.
  const bool tuple_start = IsStart(op) && instr.shape().IsTuple() &&
                           !(op == Opcode::kAllReduceStart && operands.size() > 1);
  const hlo::Shape& result_shape = tuple_start ? instr.shape().tuple_shapes(1) : instr.shape();

  if (options_.slice == nullptr) return EvalCollectiveOnOneChip(instr, operands, result_shape, tuple_start);

  // This device's operands, copied into what it brings to the exchange.
  auto mine = std::make_shared<std::vector<Literal>>();
  for (const Value& v : operands) {
    if (v.is_tuple() || v.empty()) return std::unexpected(InstrError(instr, "operands must be arrays"));
    mine->push_back(v.array());
  }
  const hlo::SliceDevice& device = options_.slice->device;
  const bool permute = op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart;
  std::vector<int64_t> group;
  hlo::PermuteRoute route;
  if (permute) {
    KILN_ASSIGN_OR_RETURN(route, hlo::CollectivePermuteRoute(instr, device));
    group = route.domain;
  } else {
    KILN_ASSIGN_OR_RETURN(group, hlo::CollectiveGroup(instr, device));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Contribution> all,
                        options_.slice->rendezvous->Exchange(device.id(), group, instr.name(), mine,
                                                             options_.interrupt));
  const size_t position = std::find(group.begin(), group.end(), device.id()) - group.begin();
  for (const Contribution& c : all) {
    bool same = c->size() == mine->size();
    for (size_t k = 0; same && k < mine->size(); ++k) same = (*c)[k].shape() == (*mine)[k].shape();
    if (!same) return std::unexpected(InstrError(instr, "the devices of its group bring operands of different shapes"));
  }

  const int64_t n = static_cast<int64_t>(all.size());
  std::vector<Value> results;
  switch (op) {
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      results.push_back(route.source_index >= 0 ? Value::Own(Literal((*all[route.source_index])[0]))
                                                : ZeroValue(result_shape));
      break;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      for (size_t k = 0; k < mine->size(); ++k) {
        KILN_ASSIGN_OR_RETURN(Literal reduced, ReduceParts(instr, Column(all, k), *this));
        results.push_back(Value::Own(std::move(reduced)));
      }
      break;
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter: {
      KILN_ASSIGN_OR_RETURN(int64_t dim, hlo::GetSingleDimension(instr));
      for (size_t k = 0; k < mine->size(); ++k) {
        const hlo::Shape& shape = (*mine)[k].shape();
        if (dim < 0 || dim >= shape.rank()) {
          return std::unexpected(InstrError(instr, "dimensions={" + std::to_string(dim) + "} is outside the operand's rank " +
                                                       std::to_string(shape.rank())));
        }
        std::vector<const Literal*> column = Column(all, k);
        if (op != Opcode::kReduceScatter) {
          results.push_back(Value::Own(ConcatAlong(column, dim)));
          continue;
        }
        if (shape.dimensions(dim) % n != 0) {
          return std::unexpected(InstrError(instr, "dimension " + std::to_string(dim) + " of size " +
                                                       std::to_string(shape.dimensions(dim)) +
                                                       " does not split over " + GroupSize(n)));
        }
        KILN_ASSIGN_OR_RETURN(Literal reduced, ReduceParts(instr, column, *this));
        results.push_back(Value::Own(BlockAlong(reduced, dim, static_cast<int64_t>(position), n)));
      }
      break;
    }
    case Opcode::kAllToAll: {
      const bool split_form = instr.FindAttribute("dimensions") != nullptr;
      if (!split_form) {
        // Tuple form: operand j goes to member j.
        if (static_cast<int64_t>(mine->size()) != n) {
          return std::unexpected(InstrError(instr, std::to_string(mine->size()) + " operands for a group of " +
                                                       GroupSize(n) + " (one per member)"));
        }
        for (int64_t m = 0; m < n; ++m) results.push_back(Value::Own(Literal((*all[m])[position])));
        break;
      }
      KILN_ASSIGN_OR_RETURN(int64_t dim, hlo::GetSingleDimension(instr));
      const hlo::Shape& shape = (*mine)[0].shape();
      if (mine->size() != 1 || dim < 0 || dim >= shape.rank() || shape.dimensions(dim) % n != 0) {
        return std::unexpected(InstrError(instr, "takes one operand whose dimension " + std::to_string(dim) +
                                                     " splits into " + GroupSize(n)));
      }
      // Block j of member m's operand goes to member j; this device's
      // result is block `position` of every member, in member order.
      std::vector<Literal> blocks;
      for (int64_t m = 0; m < n; ++m) blocks.push_back(BlockAlong((*all[m])[0], dim, static_cast<int64_t>(position), n));
      std::vector<const Literal*> ptrs;
      for (const Literal& b : blocks) ptrs.push_back(&b);
      results.push_back(Value::Own(ConcatAlong(ptrs, dim)));
      break;
    }
    default:
      // collective-broadcast: the first member's value.
      for (size_t k = 0; k < mine->size(); ++k) results.push_back(Value::Own(Literal((*all[0])[k])));
      break;
  }
  Value result = Combined(std::move(results));
  if (!SameShape(result, result_shape)) {
    return std::unexpected(InstrError(instr, "result shape " + result_shape.ToString() + " does not follow from " +
                                                 GroupSize(n) + " of operand " +
                                                 (*mine)[0].shape().ToString()));
  }
  return tuple_start ? StartTuple(instr, operands[0], std::move(result)) : result;
}

Result<Value> Interpreter::EvalCollectiveOnOneChip(const Instruction& instr, std::span<const Value> operands,
                                                   const hlo::Shape& result_shape, bool tuple_start) {
  Value result;
  if (instr.opcode() == Opcode::kCollectivePermute || instr.opcode() == Opcode::kCollectivePermuteStart) {
    KILN_ASSIGN_OR_RETURN(auto pairs, hlo::GetSourceTargetPairs(instr));
    bool receives = false;
    for (auto [source, target] : pairs) receives |= source == 0 && target == 0;
    result = receives ? operands[0] : ZeroValue(result_shape);
  } else {
    // Over a group of one, every other collective is the identity.
    result = Combined({operands.begin(), operands.end()});
  }
  if (!SameShape(result, result_shape)) {
    return std::unexpected(UnsupportedOpError(
        instr, "unsupported multi-participant " + instr.OpcodeText() + ": result shape " + result_shape.ToString() +
                   " implies more than one participant, and a simulated chip runs one replica (run it on a "
                   "slice of chips)"));
  }
  return tuple_start ? StartTuple(instr, operands[0], std::move(result)) : result;
}

}  // namespace kiln::runtime
