#include "compiler/buffers/in_place.h"

#include <algorithm>
#include <vector>

#include "compiler/fusion/op_class.h"

namespace kiln::buffers {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The values a result may be made in place of: a while's initial loop
// state (each element of its tuple), a dynamic-update-slice's array.
std::vector<const Instruction*> InPlaceOperands(const Instruction& result) {
  if (result.operand_count() == 0) return {};
  const Instruction* operand = result.operand(0);
  if (result.opcode() == Opcode::kDynamicUpdateSlice) return {operand};
  if (result.opcode() != Opcode::kWhile) return {};
  if (operand->opcode() != Opcode::kTuple) return {operand};
  std::vector<const Instruction*> elements;
  for (const Instruction* element : operand->operands()) elements.push_back(element);
  return elements;
}

// Indices of a while's state elements its body passes through unchanged
// (the body's root tuple returns get-tuple-element(parameter, i) at i): the
// loop only reads them. Empty when the body is not of that form.
std::vector<int64_t> LoopInvariantElements(const Instruction& loop) {
  std::vector<int64_t> invariant;
  if (loop.opcode() != Opcode::kWhile || loop.operand_count() != 1) return invariant;
  const hlo::Computation* body = nullptr;
  for (const hlo::Attribute& attr : loop.attributes()) {
    if (attr.name == "body" && attr.computations.size() == 1) body = attr.computations[0];
  }
  if (body == nullptr || body->root() == nullptr || body->root()->opcode() != Opcode::kTuple ||
      body->parameter_count() != 1) {
    return invariant;
  }
  const Instruction* state = body->parameters()[0];
  const Instruction* root = body->root();
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    const Instruction* element = root->operand(i);
    if (element->opcode() != Opcode::kGetTupleElement || element->operand(0) != state) continue;
    const hlo::Attribute* index = element->FindAttribute("index");
    if (index == nullptr) continue;
    Result<int64_t> at = hlo::DecodeInt(index->value);
    if (at && *at == i) invariant.push_back(i);
  }
  return invariant;
}

// Each value's memory as pieces (buffers): its own allocation at first,
// then the pieces it takes over from values that die into it. A piece
// given away is split off its donor's and lives as long as its new owner.
class Sharing {
 public:
  explicit Sharing(BufferAssignment& out) : out_(out), pieces_(out.buffers.size()) {
    for (size_t b = 0; b < out.buffers.size(); ++b) pieces_[b] = {static_cast<int64_t>(b)};
  }

  // `donor`, dying at `result`'s kernel, gives up to `bytes` of its memory
  // to `result`, which allocates that much less of its own.
  void Give(int64_t donor, int64_t result, int64_t bytes) {
    int64_t remaining = std::min(bytes, out_.buffers[result].bytes);
    std::vector<int64_t>& from = pieces_[donor];
    while (remaining > 0 && !from.empty()) {
      const int64_t piece = from.back();
      int64_t moved = piece;
      if (out_.buffers[piece].bytes > remaining) {  // split off what is given
        Buffer part = out_.buffers[piece];
        part.bytes = remaining;
        part.shared_bytes = 0;
        out_.buffers[piece].bytes -= remaining;
        moved = static_cast<int64_t>(out_.buffers.size());
        out_.buffers.push_back(part);
      } else {
        from.pop_back();
      }
      const int64_t given = out_.buffers[moved].bytes;
      out_.buffers[moved].last_use = out_.buffers[result].last_use;
      out_.buffers[result].bytes -= given;
      out_.buffers[result].shared_bytes += given;
      remaining -= given;
      pieces_[result].push_back(moved);
    }
  }

 private:
  BufferAssignment& out_;
  std::vector<std::vector<int64_t>> pieces_;  // value's buffer -> buffers holding its memory
};

}  // namespace

void ShareDyingOperands(const hlo::Computation& computation, const fusion::FusionPlan& plan, BufferAssignment& out) {
  const auto& instrs = computation.instructions();
  Sharing sharing(out);
  std::vector<int64_t> sources;
  for (const fusion::Kernel& kernel : plan.kernels) {
    for (int64_t r : kernel.roots) {
      const int64_t result = out.buffer_of[r];
      if (result < 0) continue;
      const std::vector<const Instruction*> operands = InPlaceOperands(*instrs[r]);
      std::vector<bool> invariant(operands.size(), false);
      if (instrs[r]->opcode() == Opcode::kWhile && instrs[r]->operand(0)->opcode() == Opcode::kTuple) {
        for (int64_t i : LoopInvariantElements(*instrs[r])) {
          if (i < static_cast<int64_t>(invariant.size())) invariant[i] = true;
        }
      }
      for (size_t i = 0; i < operands.size(); ++i) {
        const Instruction* operand = operands[i];
        sources.clear();
        fusion::CollectSourceIds(operand, out.buffer_of, /*follow_control=*/false, sources);
        if (sources.size() != 1 || sources[0] == result) continue;
        Buffer& donor = out.buffers[sources[0]];
        const int64_t bytes = fusion::ShapeBytes(operand->shape());
        if (donor.kind == Buffer::Kind::kTemporary && donor.last_use == kernel.id) {
          sharing.Give(sources[0], result, bytes);
        } else if (invariant[i]) {
          // A loop-carried value the body only reads stays where its initial
          // value lies, which then lives as long as either is read.
          Buffer& state = out.buffers[result];
          const int64_t shared = std::min(bytes, state.bytes);
          if (donor.kind == Buffer::Kind::kTemporary || donor.kind == Buffer::Kind::kOutput) {
            donor.last_use = std::max(donor.last_use, state.last_use);
          }
          state.bytes -= shared;
          state.shared_bytes += shared;
        }
      }
    }
  }
}

void WriteOutputsInPlace(const hlo::Computation& computation, std::span<const OutputAlias> aliases,
                         BufferAssignment& out) {
  const Instruction* root = computation.root();
  if (root == nullptr) return;
  std::vector<char> used(out.buffers.size(), 0);
  std::vector<int64_t> sources;
  for (const OutputAlias& alias : aliases) {
    if (!alias.parameter_index.empty() || alias.output_index.size() > 1) continue;
    if (alias.parameter >= static_cast<int64_t>(computation.parameters().size())) continue;
    const Instruction* result = root;
    if (alias.output_index.size() == 1) {
      if (root->opcode() != Opcode::kTuple || alias.output_index[0] >= root->operand_count()) continue;
      result = root->operand(alias.output_index[0]);
    }
    const Instruction* parameter = nullptr;
    for (const Instruction* p : computation.parameters()) {
      if (p->parameter_number() == alias.parameter) parameter = p;
    }
    if (parameter == nullptr) continue;
    sources.clear();
    fusion::CollectSourceIds(result, out.buffer_of, /*follow_control=*/false, sources);
    if (sources.size() != 1 || used[sources[0]]) continue;
    Buffer& written = out.buffers[sources[0]];
    if (written.kind != Buffer::Kind::kOutput) continue;
    if (written.bytes + written.shared_bytes > fusion::ShapeBytes(parameter->shape())) continue;
    used[sources[0]] = 1;
    written.shared_bytes += written.bytes;
    written.bytes = 0;
  }
}

}  // namespace kiln::buffers
