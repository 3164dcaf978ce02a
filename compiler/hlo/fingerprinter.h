// The canonicalizer behind every fingerprint: how one instruction and one
// computation are hashed.
//
// FingerprintModule (fingerprint.h) hashes a whole module with it, and
// FingerprintSubgraph (subgraph_fingerprint.h) one kernel's instructions, so
// both see an instruction's content the same way: opcode, shape with its
// layout, parameter number, literal, semantic attributes sorted by name
// (channel ids by presence only) and called computations by their hashes.
// The byte streams are a contract (cache keys are their hashes): changing
// what a value writes changes keys.
//
// Internal to the fingerprint. A Fingerprinter reads the module only and
// memoizes computation hashes; it is not thread-safe: use one per thread.
#pragma once

#include <cstddef>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/fingerprint.h"
#include "compiler/hlo/fingerprint_writer.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo::fingerprint_internal {

// (channel_id text, instruction index) of every instruction with one.
using ChannelList = std::vector<std::pair<std::string_view, size_t>>;

// What one walk over a computation's instructions learns. On large modules
// the fingerprint is bound by cache misses on instructions, so everything
// later steps need is gathered in that single walk rather than walking the
// instructions again.
struct ComputationScan {
  std::vector<Hash128> hashes;  // by index_in_parent
  // Instructions nobody uses other than the root and parameters.
  std::vector<size_t> leaves;
  ChannelList channels;
  bool has_control_edges = false;
};

class Fingerprinter {
 public:
  Fingerprinter() = default;

  // Hashes `comp` and, first, every computation it calls. Fails on a
  // computation without a root or a cyclic call graph.
  Result<Hash128> ComputationHash(const Computation* comp);
  // Hashes every computation `instr` calls (so InstructionHash may run).
  Status HashCallees(const Instruction& instr);
  // The hash of a computation hashed so far, or nullptr. After
  // ComputationHash(entry) these are exactly the computations the entry
  // reaches.
  const Hash128* FindComputationHash(const Computation* comp) const {
    auto it = computation_hashes_.find(comp);
    return it != computation_hashes_.end() && it->second.done ? &it->second.hash : nullptr;
  }
  Hash128 ShapeHash(const Shape& s) {
    w_.Clear();
    w_.Shape(s);
    return w_.Finish();
  }
  Hash128 ModuleConfigHash(const Module& module);

  // The hash of `instr` under `tag`: its content, `operand_hash(i)` for each
  // operand i in order, then its semantic attributes. Its callees must be
  // hashed (HashCallees). When `channels` is given, an instruction with a
  // channel id is added to it under `index`.
  template <typename OperandHash>
  Hash128 InstructionHash(char tag, const Instruction& instr, OperandHash&& operand_hash, size_t index = 0,
                          ChannelList* channels = nullptr) {
    w_.Clear();
    w_.Tag(tag);
    w_.U64(static_cast<uint64_t>(instr.opcode()));
    w_.Bytes(instr.async_wrapped_opcode());
    w_.Shape(instr.shape());
    w_.I64(instr.parameter_number());
    if (instr.literal() != nullptr) w_.Literal(*instr.literal());
    const size_t operand_count = instr.operands().size();
    w_.U64(operand_count);
    for (size_t i = 0; i < operand_count; ++i) w_.Hash(operand_hash(i));
    HashAttributes(instr, index, channels);
    return w_.Finish();
  }

 private:
  struct Memo {
    Hash128 hash;
    bool done = false;  // false while its callees are being hashed
  };

  // A computation being hashed: how far its walk has come. Callees are
  // hashed before the instruction calling them by pushing a frame for each,
  // so the walk over the call graph uses no recursion, however deep.
  struct Frame {
    const Computation* comp;
    ComputationScan scan;
    size_t next = 0;  // the instruction to hash next
  };

  // Pushes a frame for `comp`, marked in progress (a call back to it is a
  // cycle).
  Status Begin(const Computation* comp);
  // The first callee of `instr` not hashed yet, or nullptr; fails on a call
  // back to a computation in progress.
  Result<const Computation*> UnhashedCallee(const Computation& caller, const Instruction& instr);
  // Folds a frame whose instructions are all hashed into its computation's
  // hash.
  void Finish(Frame& frame);
  Status HashInstruction(const Computation& comp, size_t index, ComputationScan& scan);
  void HashAttributes(const Instruction& instr, size_t index, ChannelList* channels);
  void FoldOrderingAndChannels(const Computation& comp, ComputationScan& scan);

  HashWriter w_;
  std::unordered_map<const Computation*, Memo> computation_hashes_;
  std::vector<const Attribute*> sorted_attrs_;
  std::vector<Hash128> scratch_;
  std::vector<Frame> frames_;
};

}  // namespace kiln::hlo::fingerprint_internal
