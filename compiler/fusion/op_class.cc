#include "compiler/fusion/op_class.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "compiler/hlo/op_attributes.h"
#include "compiler/hlo/opcode.h"
#include "compiler/passes/layout_bitcasts.h"
#include "runtime/chip/op_kinds.h"

namespace kiln::fusion {

using hlo::Opcode;

bool IsExpensive(const hlo::Instruction& instr) {
  switch (ClassOf(instr)) {
    case OpClass::kReduce:
    case OpClass::kContraction:
    case OpClass::kWindow:
    case OpClass::kOpaque:
      return true;
    case OpClass::kElementwise:
      break;
    default:
      return false;
  }
  return runtime::VectorOpKindOf(instr.opcode()) != runtime::VectorOpKind::kSimple;
}

bool FeedsContractionBlocks(const hlo::Instruction& producer) {
  switch (ClassOf(producer)) {
    case OpClass::kElementwise:
    case OpClass::kBroadcast:
    case OpClass::kDataMovement:
      return true;
    default:
      return false;
  }
}

bool ChangesMemoryOrder(const hlo::Instruction& instr) {
  if (instr.opcode() != Opcode::kCopy && instr.opcode() != Opcode::kTranspose) return false;
  return !passes::IsPhysicalNoOp(instr);
}

bool SameExtents(const hlo::Shape& a, const hlo::Shape& b) {
  return a.IsArray() && b.IsArray() && a.dimensions() == b.dimensions() && a.dynamic_mask() == b.dynamic_mask();
}

bool IsWideningConvert(const hlo::Instruction& instr) {
  return instr.opcode() == Opcode::kConvert && instr.operand_count() == 1 && instr.shape().IsArray() &&
         ShapeBytes(instr.operand(0)->shape()) <= ShapeBytes(instr.shape());
}

bool IsReductionEpilogue(const hlo::Instruction& reduce, const hlo::Instruction& consumer) {
  return ClassOf(reduce) == OpClass::kReduce && ClassOf(consumer) == OpClass::kElementwise &&
         SameExtents(consumer.shape(), reduce.shape());
}

bool IsWindowEpilogue(const hlo::Instruction& window, const hlo::Instruction& consumer) {
  return ClassOf(window) == OpClass::kWindow && ClassOf(consumer) == OpClass::kElementwise &&
         SameExtents(consumer.shape(), window.shape());
}

bool SameReductionSpace(const hlo::Instruction& a, const hlo::Instruction& b) {
  if (ClassOf(a) != OpClass::kReduce || ClassOf(b) != OpClass::kReduce || a.operand_count() < 1 ||
      b.operand_count() < 1 || !SameExtents(a.operand(0)->shape(), b.operand(0)->shape())) {
    return false;
  }
  Result<std::vector<int64_t>> da = hlo::GetDimensions(a);
  Result<std::vector<int64_t>> db = hlo::GetDimensions(b);
  if (!da || !db) return false;
  std::sort(da->begin(), da->end());
  std::sort(db->begin(), db->end());
  return *da == *db;
}

int64_t OperandReuse(const hlo::Instruction& consumer, int64_t operand_index) {
  if (consumer.opcode() != Opcode::kBroadcast) return 1;
  int64_t in = consumer.operand(operand_index)->shape().ElementCount();
  int64_t out = consumer.shape().ElementCount();
  if (in <= 0 || out <= in) return 1;
  return out / in;
}

GemmDims GemmOf(const hlo::Instruction& op) {
  GemmDims g;
  const hlo::Shape& out = op.shape();
  if (!out.IsArray() || op.operand_count() != 2) return g;
  int64_t out_elements = std::max<int64_t>(out.ElementCount(), 1);
  if (op.opcode() == Opcode::kDot) {
    Result<hlo::DotDimensionNumbers> dnums = hlo::GetDotDimensionNumbers(op);
    const hlo::Shape& lhs = op.operand(0)->shape();
    if (!dnums || !lhs.IsArray()) return g;
    for (int64_t d : dnums->lhs_batch_dimensions) {
      if (d >= 0 && d < lhs.rank()) g.batch *= std::max<int64_t>(lhs.dimensions(d), 1);
    }
    for (int64_t d : dnums->lhs_contracting_dimensions) {
      if (d >= 0 && d < lhs.rank()) g.k *= std::max<int64_t>(lhs.dimensions(d), 1);
    }
    int64_t lhs_elements = std::max<int64_t>(lhs.ElementCount(), 1);
    g.m = std::max<int64_t>(lhs_elements / (g.batch * g.k), 1);
    g.n = std::max<int64_t>(out_elements / (g.batch * g.m), 1);
    return g;
  }
  if (op.opcode() == Opcode::kConvolution) {
    Result<hlo::ConvolutionDimensionNumbers> dnums = hlo::GetConvolutionDimensionNumbers(op);
    if (dnums && dnums->output_feature_dimension >= 0 &&
        dnums->output_feature_dimension < out.rank()) {
      g.n = std::max<int64_t>(out.dimensions(dnums->output_feature_dimension), 1);
    }
    g.m = std::max<int64_t>(out_elements / g.n, 1);
    g.k = std::max<int64_t>(std::max<int64_t>(op.operand(1)->shape().ElementCount(), 1) / g.n, 1);
  }
  return g;
}

std::string Describe(const hlo::Instruction& instr) {
  return "%" + std::string(instr.name()) + " (" + instr.OpcodeText() + ")";
}

int64_t ShapeBytes(const hlo::Shape& shape) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) {
      int64_t bytes = ShapeBytes(element);
      if (total > kMax - bytes) return kMax;
      total += bytes;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t bytes = hlo::HostByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) {
    d = std::max<int64_t>(d, d == hlo::kUnboundedDim ? 1 : 0);
    if (d != 0 && bytes > kMax / d) return kMax;
    bytes *= d;
  }
  return bytes;
}

void CollectSourceIds(const hlo::Instruction* value, const std::vector<int64_t>& id_of,
                      bool follow_control, std::vector<int64_t>& out) {
  if (int64_t direct = id_of[value->index_in_parent()]; direct >= 0) {
    out.push_back(direct);
    return;
  }
  std::vector<const hlo::Instruction*> stack = {value};
  std::unordered_set<const hlo::Instruction*> seen;
  while (!stack.empty()) {
    const hlo::Instruction* v = stack.back();
    stack.pop_back();
    if (!seen.insert(v).second) continue;
    if (int64_t id = id_of[v->index_in_parent()]; id >= 0) {
      out.push_back(id);
      continue;
    }
    if (!IsFreeInstruction(*v)) continue;
    if (v->opcode() == hlo::Opcode::kGetTupleElement && v->operand_count() == 1 &&
        v->operand(0)->opcode() == hlo::Opcode::kTuple) {
      Result<int64_t> index = hlo::GetTupleIndex(*v);
      const hlo::Instruction* tuple = v->operand(0);
      if (index && *index >= 0 && *index < tuple->operand_count()) {
        stack.push_back(tuple->operand(*index));
        continue;
      }
    }
    for (const hlo::Instruction* operand : v->operands()) stack.push_back(operand);
    if (follow_control) {
      for (const hlo::Instruction* pred : v->control_predecessors()) stack.push_back(pred);
    }
  }
}

}  // namespace kiln::fusion
