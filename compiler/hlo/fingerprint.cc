#include "compiler/hlo/fingerprint.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kiln::hlo {
namespace {

// Accumulates a length-delimited byte encoding, then hashes it. Reused
// across instructions so the buffer is allocated once.
class HashWriter {
 public:
  void Clear() { buf_.clear(); }
  void Tag(char c) { buf_.push_back(c); }
  void U64(uint64_t v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Bytes(std::string_view s) {
    U64(s.size());
    buf_.append(s);
  }
  void Hash(const Hash128& h) {
    U64(h.high);
    U64(h.low);
  }
  void Shape(const hlo::Shape& s);
  Hash128 Finish() const {
    XXH128_hash_t h = XXH3_128bits(buf_.data(), buf_.size());
    return {h.high64, h.low64};
  }

 private:
  std::string buf_;
};

void HashWriter::Shape(const hlo::Shape& s) {
  Tag('S');
  U64(static_cast<uint64_t>(s.element_type()));
  if (s.IsTuple() || s.IsBuffer()) {
    U64(s.tuple_shapes().size());
    for (const hlo::Shape& e : s.tuple_shapes()) Shape(e);
    return;
  }
  U64(s.dimensions().size());
  for (int64_t d : s.dimensions()) I64(d);
  U64(s.dynamic_mask());
  if (!s.IsArray()) return;
  const Layout& l = s.layout();
  U64(l.minor_to_major.size());
  for (int64_t d : l.minor_to_major) I64(d);
  U64(l.tiles.size());
  for (const auto& tile : l.tiles) {
    U64(tile.size());
    for (int64_t d : tile) I64(d);
  }
  I64(l.tail_padding_alignment);
  I64(l.element_size_bits);
  I64(l.memory_space);
  Bytes(l.other);
}

// Raw attribute text with whitespace outside strings removed, so JSON and
// dictionary values hash the same however they were spaced.
std::string StripSpace(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  bool in_string = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < raw.size()) {
        out.push_back(raw[++i]);
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out.push_back(c);
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      out.push_back(c);
    }
  }
  return out;
}

void HashLiteral(HashWriter& w, const Literal& lit) {
  w.Tag('L');
  w.Shape(lit.shape());
  w.U64(lit.elided());
  w.U64(lit.tuple_elements().size());
  for (const Literal& e : lit.tuple_elements()) HashLiteral(w, e);
  std::string_view bytes(reinterpret_cast<const char*>(lit.data().data()), lit.data().size());
  w.Bytes(bytes);
}

// Attributes that carry an id whose number is arbitrary: only their
// presence counts.
bool IsRenumberableId(std::string_view name) { return name == "channel_id"; }

class Fingerprinter {
 public:
  explicit Fingerprinter(const Module& module) : module_(module) {}

  Result<Hash128> ComputationHash(const Computation* comp);
  Hash128 ShapeHash(const Shape& s) {
    w_.Clear();
    w_.Shape(s);
    return w_.Finish();
  }
  Hash128 ModuleConfigHash();

 private:
  void HashAttributes(const Instruction& instr);
  void FoldOrderingAndChannels(const Computation& comp, std::vector<Hash128>& hashes);

  const Module& module_;
  HashWriter w_;
  std::unordered_map<const Computation*, Hash128> computation_hashes_;
  std::vector<const Attribute*> sorted_attrs_;
  std::vector<Hash128> scratch_;
  int depth_guard_ = 0;
};

void Fingerprinter::HashAttributes(const Instruction& instr) {
  sorted_attrs_.clear();
  for (const Attribute& a : instr.attributes()) {
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
        if (!IsRenumberableId(a->name)) w_.Bytes(a->value);
        break;
      case Attribute::Kind::kRaw:
        w_.Bytes(StripSpace(a->value));
        break;
      case Attribute::Kind::kComputations:
        w_.U64(a->computations.size());
        for (const Computation* c : a->computations) w_.Hash(computation_hashes_.at(c));
        break;
      case Attribute::Kind::kInstructions:
        break;
    }
  }
}

// Pass 2 of a computation's hash. Control predecessors and channel ids
// relate instructions that need not be operand-connected, so they are folded
// in after every instruction's content hash is known: an instruction with
// control predecessors adds their content hashes (as a set, so textual order
// does not matter); one sharing a channel id with others adds a label made
// of the content hashes of the whole group (so which send pairs with which
// recv counts, but not the id's number). Changes then propagate to users.
void Fingerprinter::FoldOrderingAndChannels(const Computation& comp,
                                            std::vector<Hash128>& hashes) {
  const auto& instrs = comp.instructions();
  const size_t n = instrs.size();
  std::unordered_map<std::string, std::vector<size_t>> channels;
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    if (!instrs[i]->control_predecessors().empty()) any = true;
    if (const std::string* id = instrs[i]->AttributeText("channel_id")) channels[*id].push_back(i);
  }
  std::vector<std::optional<Hash128>> labels(n);
  for (const auto& [id, members] : channels) {
    if (members.size() < 2) continue;
    any = true;
    scratch_.clear();
    for (size_t i : members) scratch_.push_back(hashes[i]);
    std::sort(scratch_.begin(), scratch_.end());
    w_.Clear();
    w_.Tag('G');
    for (const Hash128& h : scratch_) w_.Hash(h);
    Hash128 label = w_.Finish();
    for (size_t i : members) labels[i] = label;
  }
  if (!any) return;
  const std::vector<Hash128> content = hashes;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& instr = *instrs[i];
    bool changed = !instr.control_predecessors().empty() || labels[i].has_value();
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
    w_.U64(labels[i].has_value());
    if (labels[i]) w_.Hash(*labels[i]);
    hashes[i] = w_.Finish();
  }
}

Result<Hash128> Fingerprinter::ComputationHash(const Computation* comp) {
  if (auto it = computation_hashes_.find(comp); it != computation_hashes_.end()) return it->second;
  if (comp->root() == nullptr) return MakeError("computation %" + comp->name() + " has no root");
  // Callees first; the module lists them before callers, but do not rely on
  // it beyond a recursion bound.
  for (const auto& instr : comp->instructions()) {
    for (const Computation* callee : instr->called_computations()) {
      if (!computation_hashes_.contains(callee)) {
        if (callee == comp) return MakeError("computation %" + comp->name() + " calls itself");
        if (++depth_guard_ > 10000) return MakeError("call graph too deep or cyclic");
        KILN_RETURN_IF_ERROR(ComputationHash(callee));
        --depth_guard_;
      }
    }
  }
  const auto& instrs = comp->instructions();
  const size_t n = instrs.size();
  // Pass 1: content and operands; operands precede users in the list.
  std::vector<Hash128> hashes(n);
  for (size_t i = 0; i < n; ++i) {
    const Instruction& instr = *instrs[i];
    w_.Clear();
    w_.Tag('I');
    w_.U64(static_cast<uint64_t>(instr.opcode()));
    w_.Bytes(instr.async_wrapped_opcode());
    w_.Shape(instr.shape());
    w_.I64(instr.parameter_number());
    if (instr.literal() != nullptr) HashLiteral(w_, *instr.literal());
    w_.U64(instr.operands().size());
    for (const Instruction* op : instr.operands()) {
      int64_t j = op->index_in_parent();
      if (op->parent() != comp || j < 0 || static_cast<size_t>(j) >= i) {
        return MakeError("instruction %" + instr.name() + " in %" + comp->name() +
                         " uses an operand that is not defined before it");
      }
      w_.Hash(hashes[j]);
    }
    HashAttributes(instr);
    hashes[i] = w_.Finish();
  }
  FoldOrderingAndChannels(*comp, hashes);
  // The computation: its parameters in order, its root, and every other
  // instruction nobody uses (side effects, dead code), as a sorted set.
  std::vector<Hash128> leaves;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& instr = *instrs[i];
    if (instr.users().empty() && &instr != comp->root() &&
        instr.opcode() != Opcode::kParameter) {
      leaves.push_back(hashes[i]);
    }
  }
  std::sort(leaves.begin(), leaves.end());
  w_.Clear();
  w_.Tag('C');
  w_.U64(comp->parameters().size());
  for (const Instruction* p : comp->parameters()) {
    w_.Hash(p != nullptr ? hashes[p->index_in_parent()] : Hash128{});
  }
  w_.Hash(hashes[comp->root()->index_in_parent()]);
  w_.U64(leaves.size());
  for (const Hash128& h : leaves) w_.Hash(h);
  w_.Bytes(comp->execution_thread());
  Hash128 result = w_.Finish();
  computation_hashes_[comp] = result;
  return result;
}

Hash128 Fingerprinter::ModuleConfigHash() {
  w_.Clear();
  w_.Tag('M');
  if (const auto& layout = module_.entry_layout()) {
    w_.Tag('E');
    w_.U64(layout->parameters.size());
    for (const Shape& s : layout->parameters) w_.Shape(s);
    w_.Shape(layout->result);
  }
  std::vector<const Attribute*> attrs;
  for (const Attribute& a : module_.attributes()) {
    if (!IsNonSemanticAttribute(a.name)) attrs.push_back(&a);
  }
  std::sort(attrs.begin(), attrs.end(),
            [](const Attribute* a, const Attribute* b) { return a->name < b->name; });
  for (const Attribute* a : attrs) {
    w_.Bytes(a->name);
    w_.Bytes(a->kind == Attribute::Kind::kRaw ? StripSpace(a->value) : a->value);
  }
  return w_.Finish();
}

Hash128 HashString(char tag, std::string_view s) {
  HashWriter w;
  w.Tag(tag);
  w.Bytes(s);
  return w.Finish();
}

}  // namespace

std::string Hash128::Hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(high >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(low >> (4 * i)) & 0xf];
  }
  return out;
}

Result<Fingerprint> FingerprintModule(const Module& module, const FingerprintOptions& options) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return MakeError("module " + module.name() + " has no entry computation");
  Fingerprinter fp(module);
  Fingerprint out;
  KILN_ASSIGN_OR_RETURN(out.entry_body, fp.ComputationHash(entry));
  // Reachable callees in module order, for explanations. Computations the
  // entry never reaches do not change the program and are not hashed.
  std::vector<const Computation*> stack = {entry};
  std::unordered_map<const Computation*, bool> seen = {{entry, true}};
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    for (const auto& instr : c->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        if (seen.emplace(callee, true).second) {
          stack.push_back(callee);
        }
      }
    }
  }
  for (const auto& comp : module.computations()) {
    if (seen.contains(comp.get()) && comp.get() != entry) {
      KILN_ASSIGN_OR_RETURN(Hash128 h, fp.ComputationHash(comp.get()));
      out.called_computations.push_back({comp->name(), h});
    }
  }
  for (const Instruction* p : entry->parameters()) {
    Shape shape = p != nullptr ? p->shape() : Shape();
    out.parameter_shapes.push_back(fp.ShapeHash(shape));
    out.parameter_shape_text.push_back(shape.ToString(/*print_default_layout=*/false));
  }
  out.module_config = fp.ModuleConfigHash();
  out.options = HashString('O', options.compile_options);
  out.target = HashString('T', options.chip);

  HashWriter w;
  w.Tag('K');
  w.U64(out.format_version);
  w.Hash(out.entry_body);
  w.Hash(out.module_config);
  w.Hash(out.options);
  w.Hash(out.target);
  out.key = w.Finish();
  return out;
}

}  // namespace kiln::hlo
