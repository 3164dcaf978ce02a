#include "compiler/hlo/fingerprinter.h"

#include <algorithm>
#include <memory>
#include <string>

namespace kiln::hlo::fingerprint_internal {
namespace {

// Attributes that carry an id whose number is arbitrary: only their
// presence counts.
constexpr std::string_view kChannelId = "channel_id";

// On a module larger than the cache the fingerprint is bound by cache
// misses: hashing an instruction reads its whole object and the heap blocks
// it points to, at addresses the hardware prefetcher cannot predict. So the
// walk over a computation asks for them ahead of use: objects
// kPrefetchDistance instructions ahead; the blocks they point to (found
// through the object) half as far ahead; and, for an instruction that calls
// computations, the first objects of each callee, which are hashed next and
// which the callee's own walk would ask for too late.
//
// The helpers are always inlined: GCC deems a function that only prefetches
// free of effects and deletes calls to it.
constexpr size_t kPrefetchDistance = 6;
constexpr size_t kCacheLineBytes = 64;

[[gnu::always_inline]] inline void PrefetchObject(const Instruction& instr) {
  const char* bytes = reinterpret_cast<const char*>(&instr);
  for (size_t offset = 0; offset < sizeof(Instruction); offset += kCacheLineBytes) {
    __builtin_prefetch(bytes + offset);
  }
}

[[gnu::always_inline]] inline void PrefetchPointees(const Instruction& instr) {
  __builtin_prefetch(instr.shape().dimensions().data());
  __builtin_prefetch(instr.shape().layout().minor_to_major.data());
  __builtin_prefetch(instr.operands().data());
  __builtin_prefetch(instr.attributes().data());
  for (const Computation* callee : instr.called_computations()) {
    const auto& body = callee->instructions();
    for (size_t i = 0; i < body.size() && i < kPrefetchDistance; ++i) PrefetchObject(*body[i]);
  }
}

// Called before hashing instrs[i].
[[gnu::always_inline]] inline void PrefetchAhead(
    const std::vector<InstructionPtr>& instrs, size_t i) {
  if (i + kPrefetchDistance < instrs.size()) PrefetchObject(*instrs[i + kPrefetchDistance]);
  if (i + kPrefetchDistance / 2 < instrs.size()) {
    PrefetchPointees(*instrs[i + kPrefetchDistance / 2]);
  }
}

}  // namespace

Result<const Computation*> Fingerprinter::UnhashedCallee(const Computation& caller,
                                                         const Instruction& instr) {
  for (const Computation* callee : instr.called_computations()) {
    auto it = computation_hashes_.find(callee);
    if (it == computation_hashes_.end()) return callee;
    if (it->second.done) continue;
    if (callee == &caller) return InvalidArgumentError("computation %" + caller.name() + " calls itself");
    return InvalidArgumentError("call graph is cyclic: computation %" + caller.name() + " calls %" + callee->name() +
                                ", which calls it back");
  }
  return nullptr;
}

void Fingerprinter::HashAttributes(const Instruction& instr, size_t index, ChannelList* channels) {
  sorted_attrs_.clear();
  bool seen_channel_id = false;
  for (const Attribute& a : instr.attributes()) {
    if (!seen_channel_id && a.name == kChannelId) {  // as Instruction::AttributeText finds it
      seen_channel_id = true;
      if (channels != nullptr && (a.kind == Attribute::Kind::kText || a.kind == Attribute::Kind::kRaw)) {
        channels->emplace_back(a.value, index);
      }
    }
    // Ordering edges are folded in by FoldOrderingAndChannels.
    if (a.kind == Attribute::Kind::kInstructions) continue;
    if (!IsNonSemanticAttribute(a.name)) sorted_attrs_.push_back(&a);
  }
  std::sort(sorted_attrs_.begin(), sorted_attrs_.end(),
            [](const Attribute* a, const Attribute* b) { return a->name < b->name; });
  w_.U64(sorted_attrs_.size());
  for (const Attribute* a : sorted_attrs_) {
    w_.Bytes(a->name);
    w_.U64(static_cast<uint64_t>(a->kind));
    switch (a->kind) {
      case Attribute::Kind::kText:
        if (a->name != kChannelId) w_.Bytes(a->value);
        break;
      case Attribute::Kind::kRaw:
        w_.BytesWithoutSpace(a->value);
        break;
      case Attribute::Kind::kComputations:
        w_.U64(a->computations.size());
        for (const Computation* c : a->computations) w_.Hash(computation_hashes_.at(c).hash);
        break;
      case Attribute::Kind::kInstructions:
        break;
    }
  }
}

// Pass 1 for one instruction: its content and its operands' hashes; operands
// precede users in the list. Also records what later steps need from it.
Status Fingerprinter::HashInstruction(const Computation& comp, size_t index,
                                      ComputationScan& scan) {
  const Instruction& instr = *comp.instructions()[index];
  const auto& operands = instr.operands();
  for (const Instruction* op : operands) {
    const int64_t j = op->index_in_parent();
    if (op->parent() != &comp || j < 0 || static_cast<size_t>(j) >= index) {
      return InvalidArgumentError("instruction %" + std::string(instr.name()) + " in %" + comp.name() +
                                  " uses an operand that is not defined before it");
    }
  }
  scan.hashes[index] = InstructionHash(
      'I', instr, [&](size_t i) { return scan.hashes[operands[i]->index_in_parent()]; }, index, &scan.channels);

  if (!instr.control_predecessors().empty()) scan.has_control_edges = true;
  if (instr.users().empty() && &instr != comp.root() && instr.opcode() != Opcode::kParameter) {
    scan.leaves.push_back(index);
  }
  return Ok();
}

// Pass 2 of a computation's hash. Control predecessors and channel ids
// relate instructions that need not be operand-connected, so they are folded
// in after every instruction's content hash is known: an instruction with
// control predecessors adds their content hashes (as a set, so textual order
// does not matter); one sharing a channel id with others adds a label made
// of the content hashes of the whole group (so which send pairs with which
// recv counts, but not the id's number). Changes then propagate to users.
void Fingerprinter::FoldOrderingAndChannels(const Computation& comp, ComputationScan& scan) {
  std::vector<Hash128>& hashes = scan.hashes;
  const size_t n = hashes.size();
  // Groups of instructions with equal channel ids, each in index order.
  std::sort(scan.channels.begin(), scan.channels.end());
  std::vector<std::pair<size_t, Hash128>> labels;  // (instruction index, group label)
  for (size_t begin = 0, end = 0; begin < scan.channels.size(); begin = end) {
    end = begin + 1;
    while (end < scan.channels.size() && scan.channels[end].first == scan.channels[begin].first) {
      ++end;
    }
    if (end - begin < 2) continue;
    scratch_.clear();
    for (size_t k = begin; k < end; ++k) scratch_.push_back(hashes[scan.channels[k].second]);
    std::sort(scratch_.begin(), scratch_.end());
    w_.Clear();
    w_.Tag('G');
    for (const Hash128& h : scratch_) w_.Hash(h);
    const Hash128 label = w_.Finish();
    for (size_t k = begin; k < end; ++k) labels.emplace_back(scan.channels[k].second, label);
  }
  if (!scan.has_control_edges && labels.empty()) return;
  std::sort(labels.begin(), labels.end());
  auto next_label = labels.begin();

  const auto& instrs = comp.instructions();
  const std::vector<Hash128> content = hashes;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& instr = *instrs[i];
    const Hash128* label = nullptr;
    if (next_label != labels.end() && next_label->first == i) label = &(next_label++)->second;
    bool changed = !instr.control_predecessors().empty() || label != nullptr;
    for (const Instruction* op : instr.operands()) {
      if (hashes[op->index_in_parent()] != content[op->index_in_parent()]) changed = true;
    }
    if (!changed) continue;
    w_.Clear();
    w_.Tag('K');
    w_.Hash(content[i]);
    for (const Instruction* op : instr.operands()) w_.Hash(hashes[op->index_in_parent()]);
    scratch_.clear();
    for (const Instruction* p : instr.control_predecessors()) {
      scratch_.push_back(content[p->index_in_parent()]);
    }
    std::sort(scratch_.begin(), scratch_.end());
    w_.U64(scratch_.size());
    for (const Hash128& h : scratch_) w_.Hash(h);
    w_.U64(label != nullptr);
    if (label != nullptr) w_.Hash(*label);
    hashes[i] = w_.Finish();
  }
}

Status Fingerprinter::HashCallees(const Instruction& instr) {
  for (const Computation* callee : instr.called_computations()) {
    KILN_RETURN_IF_ERROR(ComputationHash(callee));
  }
  return Ok();
}

Status Fingerprinter::Begin(const Computation* comp) {
  if (comp->root() == nullptr) return InvalidArgumentError("computation %" + comp->name() + " has no root");
  computation_hashes_[comp];  // not done yet: a call back to it is a cycle
  Frame& frame = frames_.emplace_back(Frame{comp, {}, 0});
  frame.scan.hashes.resize(comp->instructions().size());
  return Ok();
}

Result<Hash128> Fingerprinter::ComputationHash(const Computation* comp) {
  if (const Hash128* h = FindComputationHash(comp)) return *h;
  frames_.clear();
  KILN_RETURN_IF_ERROR(Begin(comp));
  while (!frames_.empty()) {
    Frame& frame = frames_.back();
    const auto& instrs = frame.comp->instructions();
    const Computation* callee = nullptr;
    for (; frame.next < instrs.size(); ++frame.next) {
      PrefetchAhead(instrs, frame.next);
      const Instruction& instr = *instrs[frame.next];
      // Callees first: hashing one reuses w_, so it happens before this
      // instruction's stream starts.
      if (!instr.called_computations().empty()) {
        KILN_ASSIGN_OR_RETURN(callee, UnhashedCallee(*frame.comp, instr));
        if (callee != nullptr) break;
      }
      KILN_RETURN_IF_ERROR(HashInstruction(*frame.comp, frame.next, frame.scan));
    }
    if (callee != nullptr) {
      KILN_RETURN_IF_ERROR(Begin(callee));  // `frame` moves; it resumes at this instruction
      continue;
    }
    Finish(frame);
    frames_.pop_back();
  }
  return computation_hashes_.at(comp).hash;
}

void Fingerprinter::Finish(Frame& frame) {
  const Computation* comp = frame.comp;
  ComputationScan& scan = frame.scan;
  FoldOrderingAndChannels(*comp, scan);
  // The computation: its parameters in order, its root, and every other
  // instruction nobody uses (side effects, dead code), as a sorted set.
  scratch_.clear();
  for (size_t i : scan.leaves) scratch_.push_back(scan.hashes[i]);
  std::sort(scratch_.begin(), scratch_.end());
  w_.Clear();
  w_.Tag('C');
  w_.U64(comp->parameters().size());
  for (const Instruction* p : comp->parameters()) {
    w_.Hash(p != nullptr ? scan.hashes[p->index_in_parent()] : Hash128{});
  }
  w_.Hash(scan.hashes[comp->root()->index_in_parent()]);
  w_.U64(scratch_.size());
  for (const Hash128& h : scratch_) w_.Hash(h);
  w_.Bytes(comp->execution_thread());
  computation_hashes_[comp] = {w_.Finish(), true};
}

Hash128 Fingerprinter::ModuleConfigHash(const Module& module) {
  w_.Clear();
  w_.Tag('M');
  if (const auto& layout = module.entry_layout()) {
    w_.Tag('E');
    w_.U64(layout->parameters.size());
    for (const Shape& s : layout->parameters) w_.Shape(s);
    w_.Shape(layout->result);
  }
  std::vector<const Attribute*> attrs;
  for (const Attribute& a : module.attributes()) {
    if (!IsNonSemanticAttribute(a.name)) attrs.push_back(&a);
  }
  std::sort(attrs.begin(), attrs.end(),
            [](const Attribute* a, const Attribute* b) { return a->name < b->name; });
  for (const Attribute* a : attrs) {
    w_.Bytes(a->name);
    if (a->kind == Attribute::Kind::kRaw) {
      w_.BytesWithoutSpace(a->value);
    } else {
      w_.Bytes(a->value);
    }
  }
  return w_.Finish();
}

}  // namespace kiln::hlo::fingerprint_internal
