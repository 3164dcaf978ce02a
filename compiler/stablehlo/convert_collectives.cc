// Collectives, device ids, tokens and host communication (op_handlers.h).
#include "compiler/stablehlo/op_handlers.h"

namespace kiln::stablehlo::convert_internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// {{0,1},{2,3}} from a dense NxM (or flat) attribute.
std::string GroupsText(const Converter& c, const Attr* a) {
  if (a == nullptr) return "{}";
  std::vector<int64_t> values = IntListOf(c.types(), a);
  int64_t cols = static_cast<int64_t>(values.size());
  if (a->kind == Attr::Kind::kDense && a->type != kNoType && c.types()[a->type].dims.size() == 2) {
    cols = c.types()[a->type].dims[1];
  }
  if (values.empty() || cols <= 0) return "{}";
  std::string out = "{";
  for (size_t i = 0; i < values.size(); i += static_cast<size_t>(cols)) {
    if (i > 0) out += ',';
    out += '{';
    for (size_t j = i; j < i + static_cast<size_t>(cols) && j < values.size(); ++j) {
      if (j > i) out += ',';
      out += std::to_string(values[j]);
    }
    out += '}';
  }
  out += '}';
  return out;
}

void SetChannel(const Converter& c, Instruction* instr, const Operation& op) {
  const Attr* handle = op.FindAttr("channel_handle");
  if (handle == nullptr) handle = op.FindAttr("channel_id");
  if (handle == nullptr) return;
  const Attr* id = handle->kind == Attr::Kind::kStruct ? handle->Field("handle") : handle;
  std::vector<int64_t> v = IntListOf(c.types(), id);
  if (v.size() == 1 && v[0] > 0) HloEmitter::SetAttr(instr, "channel_id", std::to_string(v[0]));
}

}  // namespace

Status ConvertCollective(Converter& c, const Operation& op) {
  const std::string_view name = OpShortName(op.name);
  if (op.operands.empty()) return c.OpError(op, "expected operands");
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultsShape(op));
  Opcode opcode = Opcode::kAllReduce;
  if (name == "all_gather") opcode = Opcode::kAllGather;
  if (name == "reduce_scatter") opcode = Opcode::kReduceScatter;
  if (name == "all_to_all") opcode = Opcode::kAllToAll;
  if (name == "collective_permute") opcode = Opcode::kCollectivePermute;
  if (name == "collective_broadcast") opcode = Opcode::kCollectiveBroadcast;
  hlo::Computation* body = nullptr;
  if (opcode == Opcode::kAllReduce || opcode == Opcode::kReduceScatter) {
    if (op.regions.empty()) return c.OpError(op, "missing its computation");
    KILN_ASSIGN_OR_RETURN(Converter::RegionComputation r,
                          c.ConvertRegion(op.regions[0], "reduction", Converter::RegionArgs::kScalars, op));
    body = r.computation;
  }
  if (opcode == Opcode::kAllToAll) {
    KILN_ASSIGN_OR_RETURN(int64_t split, IntAttrValue(c, op, "split_dimension", 0));
    KILN_ASSIGN_OR_RETURN(int64_t concat, IntAttrValue(c, op, "concat_dimension", 0));
    if (split != concat || op.operands.size() != 1) return ConvertAsOpaqueCustomCall(c, op);
  }
  Instruction* instr = c.emit().Add(opcode, std::move(shape), c.Operands(op));
  if (opcode == Opcode::kCollectivePermute) {
    HloEmitter::SetAttr(instr, "source_target_pairs", GroupsText(c, op.FindAttr("source_target_pairs")));
  } else {
    HloEmitter::SetAttr(instr, "replica_groups", GroupsText(c, op.FindAttr("replica_groups")));
  }
  if (opcode == Opcode::kAllGather) {
    KILN_ASSIGN_OR_RETURN(int64_t d, IntAttrValue(c, op, "all_gather_dim"));
    HloEmitter::SetAttr(instr, "dimensions", "{" + std::to_string(d) + "}");
  }
  if (opcode == Opcode::kReduceScatter) {
    KILN_ASSIGN_OR_RETURN(int64_t d, IntAttrValue(c, op, "scatter_dimension"));
    HloEmitter::SetAttr(instr, "dimensions", "{" + std::to_string(d) + "}");
  }
  if (opcode == Opcode::kAllToAll) {
    KILN_ASSIGN_OR_RETURN(int64_t d, IntAttrValue(c, op, "split_dimension", 0));
    HloEmitter::SetAttr(instr, "dimensions", "{" + std::to_string(d) + "}");
  }
  SetChannel(c, instr, op);
  if (BoolAttrValue(op, "use_global_device_ids")) HloEmitter::SetAttr(instr, "use_global_device_ids", "true");
  if (body != nullptr) instr->AddAttribute(hlo::Attribute::Calls("to_apply", body));
  return c.SetResults(op, instr);
}

Status ConvertReplicaOrPartitionId(Converter& c, const Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, c.ResultShape(op));
  const Opcode opcode = OpShortName(op.name) == "replica_id" ? Opcode::kReplicaId : Opcode::kPartitionId;
  Instruction* id = c.emit().Add(opcode, Shape(hlo::PrimitiveType::kU32, {}), {});
  return c.SetResults(op, c.emit().Convert(id, shape.element_type()));
}

Status ConvertAfterAll(Converter& c, const Operation& op) {
  return c.SetResults(op, c.emit().Add(Opcode::kAfterAll, Shape::Token(), c.Operands(op), "after-all"));
}

Status ConvertInfeed(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.results.empty()) return c.OpError(op, "expected a token");
  std::vector<Shape> data;
  for (size_t i = 0; i + 1 < op.results.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape s, c.ResultShape(op, i));
    data.push_back(std::move(s));
  }
  Instruction* infeed = c.emit().Add(Opcode::kInfeed, Shape::Tuple({Shape::Tuple(data), Shape::Token()}),
                                     c.Operands(op), "infeed");
  const Attr* config = op.FindAttr("infeed_config");
  HloEmitter::SetAttr(infeed, "infeed_config",
                      "\"" + std::string(config != nullptr ? std::string_view(config->text) : "") + "\"");
  Instruction* values = c.emit().GetTupleElement(infeed, 0);
  for (size_t i = 0; i + 1 < op.results.size(); ++i) {
    c.SetValue(op.results[i], c.emit().GetTupleElement(values, static_cast<int64_t>(i)));
  }
  c.SetValue(op.results.back(), c.emit().GetTupleElement(infeed, 1));
  return Ok();
}

Status ConvertOutfeed(Converter& c, const Operation& op) {
  if (op.operands.empty()) return c.OpError(op, "expected a token");
  std::vector<Instruction*> inputs = c.Operands(op, 0, op.operands.size() - 1);
  Instruction* tuple = c.emit().Tuple(inputs);
  Instruction* out = c.emit().Add(Opcode::kOutfeed, Shape::Token(), {tuple, c.Operand(op, op.operands.size() - 1)},
                                  "outfeed");
  HloEmitter::SetAttr(out, "outfeed_shape", tuple->shape().ToString(true));
  const Attr* config = op.FindAttr("outfeed_config");
  HloEmitter::SetAttr(out, "outfeed_config",
                      "\"" + std::string(config != nullptr ? std::string_view(config->text) : "") + "\"");
  return c.SetResults(op, out);
}

Status ConvertSend(Converter& c, const Operation& op) {
  if (op.operands.empty()) return c.OpError(op, "expected a token");
  std::vector<Instruction*> inputs = c.Operands(op, 0, op.operands.size() - 1);
  Instruction* data = inputs.size() == 1 ? inputs[0] : c.emit().Tuple(inputs);
  Instruction* token = c.Operand(op, op.operands.size() - 1);
  Shape send_shape = Shape::Tuple({data->shape(), Shape(hlo::PrimitiveType::kU32, {}), Shape::Token()});
  Instruction* send = c.emit().Add(Opcode::kSend, send_shape, {data, token}, "send");
  SetChannel(c, send, op);
  if (BoolAttrValue(op, "is_host_transfer")) HloEmitter::SetAttr(send, "is_host_transfer", "true");
  Instruction* done = c.emit().Add(Opcode::kSendDone, Shape::Token(), {send}, "send-done");
  SetChannel(c, done, op);
  if (BoolAttrValue(op, "is_host_transfer")) HloEmitter::SetAttr(done, "is_host_transfer", "true");
  return c.SetResults(op, done);
}

Status ConvertRecv(Converter& c, const Operation& op) {
  if (op.operands.size() != 1 || op.results.empty()) return c.OpError(op, "expected a token");
  std::vector<Shape> data;
  for (size_t i = 0; i + 1 < op.results.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape s, c.ResultShape(op, i));
    data.push_back(std::move(s));
  }
  Shape data_shape = data.size() == 1 ? data[0] : Shape::Tuple(data);
  Instruction* recv = c.emit().Add(
      Opcode::kRecv, Shape::Tuple({data_shape, Shape(hlo::PrimitiveType::kU32, {}), Shape::Token()}),
      c.Operands(op), "recv");
  SetChannel(c, recv, op);
  if (BoolAttrValue(op, "is_host_transfer")) HloEmitter::SetAttr(recv, "is_host_transfer", "true");
  Instruction* done = c.emit().Add(Opcode::kRecvDone, Shape::Tuple({data_shape, Shape::Token()}), {recv}, "recv-done");
  SetChannel(c, done, op);
  if (BoolAttrValue(op, "is_host_transfer")) HloEmitter::SetAttr(done, "is_host_transfer", "true");
  Instruction* values = c.emit().GetTupleElement(done, 0);
  if (data.size() == 1) {
    c.SetValue(op.results[0], values);
  } else {
    for (size_t i = 0; i < data.size(); ++i) {
      c.SetValue(op.results[i], c.emit().GetTupleElement(values, static_cast<int64_t>(i)));
    }
  }
  c.SetValue(op.results.back(), c.emit().GetTupleElement(done, 1));
  return Ok();
}

}  // namespace kiln::stablehlo::convert_internal
