#include "compiler/hlo/module_equal.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kiln::hlo {
namespace {

constexpr size_t kMaxShownText = 80;

// Excerpt of `text` around byte `at`, at most kMaxShownText long.
std::string Excerpt(std::string_view text, size_t at) {
  size_t begin = at > kMaxShownText / 4 ? at - kMaxShownText / 4 : 0;
  std::string out = begin > 0 ? "..." : "";
  out += text.substr(begin, kMaxShownText);
  if (begin + kMaxShownText < text.size()) out += "...";
  return out;
}

// "<a> vs <b>", both cut to the neighbourhood of their first difference.
std::string TextPair(std::string_view a, std::string_view b) {
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  return Excerpt(a, at) + " vs " + Excerpt(b, at);
}

std::string ShowShape(const Shape& s) { return s.ToString(/*print_default_layout=*/false); }

// "f32[2] vs f32[3]"; notes when the text hides the difference (for example
// the dynamic flag of an unbounded dimension).
std::string ShapePair(const Shape& a, const Shape& b) {
  std::string sa = ShowShape(a);
  std::string sb = ShowShape(b);
  std::string out = sa + " vs " + sb;
  if (sa == sb) out += " (equal text, different fields)";
  return out;
}

const char* KindName(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::kText: return "text";
    case Attribute::Kind::kRaw: return "raw";
    case Attribute::Kind::kComputations: return "computations";
    case Attribute::Kind::kInstructions: return "instructions";
  }
  return "?";
}

std::string JoinComputationNames(std::span<Computation* const> v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ", ";
    out += v[i] == nullptr ? "<null>" : "%" + v[i]->name();
  }
  return out + "}";
}

std::string JoinInstructionNames(std::span<Instruction* const> v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ", ";
    out += v[i] == nullptr ? "<null>" : "%" + std::string(v[i]->name());
  }
  return out + "}";
}

// Position of each instruction within its computation.
using IndexMap = std::unordered_map<const Instruction*, int64_t>;

IndexMap IndexInstructions(const Computation& c) {
  IndexMap m;
  m.reserve(c.instructions().size());
  for (size_t i = 0; i < c.instructions().size(); ++i) {
    m.emplace(c.instructions()[i].get(), static_cast<int64_t>(i));
  }
  return m;
}

int64_t IndexOf(const IndexMap& m, const Instruction* instr) {
  auto it = m.find(instr);
  return it == m.end() ? -1 : it->second;
}

int64_t ComputationIndex(const Module& m, const Computation* c) {
  for (size_t i = 0; i < m.computations().size(); ++i) {
    if (m.computations()[i].get() == c) return static_cast<int64_t>(i);
  }
  return -1;
}

// Compares and records the first difference. Each Compare* returns false
// once a difference is found; the message gets the location prefix.
class Comparer {
 public:
  explicit Comparer(std::string* why) : why_(why) {}

  bool Modules(const Module& a, const Module& b);

 private:
  bool Fail(std::string_view where, std::string_view what) {
    if (why_ != nullptr) {
      *why_ = std::string(where);
      if (!where.empty()) *why_ += ": ";
      *why_ += what;
    }
    return false;
  }

  bool Attributes(std::string_view where, std::span<const Attribute> a,
                  std::span<const Attribute> b);
  bool OneAttribute(std::string_view where, const Attribute& a, const Attribute& b);
  bool Computations(const Computation& a, const Computation& b, size_t index);
  bool Instructions(std::string_view where, const Instruction& a, const IndexMap& ia,
                    const Instruction& b, const IndexMap& ib);

  std::string* why_;
};

bool Comparer::Modules(const Module& a, const Module& b) {
  if (a.name() != b.name()) return Fail("", "module name " + a.name() + " vs " + b.name());
  if (!Attributes("module header", a.attributes(), b.attributes())) return false;

  const auto& la = a.entry_layout();
  const auto& lb = b.entry_layout();
  if (la.has_value() != lb.has_value()) {
    return Fail("module header", std::string("entry_computation_layout ") +
                                     (la ? "present" : "absent") + " vs " + (lb ? "present" : "absent"));
  }
  if (la) {
    if (la->parameters.size() != lb->parameters.size()) {
      return Fail("entry_computation_layout", std::to_string(la->parameters.size()) + " vs " +
                                                  std::to_string(lb->parameters.size()) +
                                                  " parameters");
    }
    for (size_t i = 0; i < la->parameters.size(); ++i) {
      if (!(la->parameters[i] == lb->parameters[i])) {
        return Fail("entry_computation_layout",
                    "parameter " + std::to_string(i) + " " + ShapePair(la->parameters[i], lb->parameters[i]));
      }
    }
    if (!(la->result == lb->result)) {
      return Fail("entry_computation_layout", "result " + ShapePair(la->result, lb->result));
    }
  }

  if (a.computations().size() != b.computations().size()) {
    return Fail("", std::to_string(a.computations().size()) + " vs " +
                        std::to_string(b.computations().size()) + " computations");
  }
  int64_t ea = ComputationIndex(a, a.entry());
  int64_t eb = ComputationIndex(b, b.entry());
  if (ea != eb) {
    return Fail("", "entry computation is number " + std::to_string(ea) + " vs " +
                        std::to_string(eb));
  }
  for (size_t i = 0; i < a.computations().size(); ++i) {
    if (!Computations(*a.computations()[i], *b.computations()[i], i)) return false;
  }
  return true;
}

bool Comparer::Attributes(std::string_view where, std::span<const Attribute> a,
                          std::span<const Attribute> b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (!OneAttribute(where, a[i], b[i])) return false;
  }
  if (a.size() != b.size()) {
    const Attribute& extra = a.size() > b.size() ? a[n] : b[n];
    return Fail(where, std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
                           " attributes (first extra: " + std::string(extra.name) + " on the " +
                           (a.size() > b.size() ? "left" : "right") + ")");
  }
  return true;
}

bool Comparer::OneAttribute(std::string_view where, const Attribute& a, const Attribute& b) {
  if (a.name != b.name) {
    return Fail(where, "attribute " + std::string(a.name) + " vs " + std::string(b.name));
  }
  std::string label = "attribute " + std::string(a.name) + " ";
  if (a.kind != b.kind) {
    return Fail(where, label + "kind " + KindName(a.kind) + " vs " + KindName(b.kind));
  }
  if (a.value != b.value) {
    return Fail(where, label + TextPair(a.value, b.value));
  }
  if (a.braced != b.braced) {
    return Fail(where, label + (a.braced ? "braced" : "not braced") + " vs " +
                           (b.braced ? "braced" : "not braced"));
  }
  bool same_computations = a.computations.size() == b.computations.size();
  for (size_t i = 0; same_computations && i < a.computations.size(); ++i) {
    const Computation* ca = a.computations[i];
    const Computation* cb = b.computations[i];
    same_computations = (ca == nullptr) == (cb == nullptr) &&
                        (ca == nullptr || ca->name() == cb->name());
  }
  if (!same_computations) {
    return Fail(where, label + JoinComputationNames(a.computations) + " vs " +
                           JoinComputationNames(b.computations));
  }
  bool same_instructions = a.instructions.size() == b.instructions.size();
  for (size_t i = 0; same_instructions && i < a.instructions.size(); ++i) {
    const Instruction* xa = a.instructions[i];
    const Instruction* xb = b.instructions[i];
    same_instructions = (xa == nullptr) == (xb == nullptr) &&
                        (xa == nullptr || xa->name() == xb->name());
  }
  if (!same_instructions) {
    return Fail(where, label + JoinInstructionNames(a.instructions) + " vs " +
                           JoinInstructionNames(b.instructions));
  }
  return true;
}

bool Comparer::Computations(const Computation& a, const Computation& b, size_t index) {
  std::string where = "computation " + std::to_string(index) + " (%" + a.name() + ")";
  if (a.name() != b.name()) return Fail(where, "name %" + a.name() + " vs %" + b.name());
  where = "computation %" + a.name();
  if (a.is_entry() != b.is_entry()) {
    return Fail(where, std::string(a.is_entry() ? "ENTRY" : "not ENTRY") + " vs " +
                           (b.is_entry() ? "ENTRY" : "not ENTRY"));
  }
  if (a.execution_thread() != b.execution_thread()) {
    return Fail(where, "execution_thread \"" + a.execution_thread() + "\" vs \"" +
                           b.execution_thread() + "\"");
  }
  IndexMap ia = IndexInstructions(a);
  IndexMap ib = IndexInstructions(b);
  size_t n = std::min(a.instructions().size(), b.instructions().size());
  for (size_t i = 0; i < n; ++i) {
    const Instruction& xa = *a.instructions()[i];
    const Instruction& xb = *b.instructions()[i];
    std::string iwhere = where + " instruction " + std::to_string(i) + " (%" + std::string(xa.name()) + ")";
    if (!Instructions(iwhere, xa, ia, xb, ib)) return false;
  }
  if (a.instructions().size() != b.instructions().size()) {
    const auto& longer = a.instructions().size() > b.instructions().size() ? a : b;
    return Fail(where, std::to_string(a.instructions().size()) + " vs " +
                           std::to_string(b.instructions().size()) + " instructions (first extra: %" +
                           std::string(longer.instructions()[n]->name()) + ")");
  }
  int64_t ra = a.root() == nullptr ? -1 : IndexOf(ia, a.root());
  int64_t rb = b.root() == nullptr ? -1 : IndexOf(ib, b.root());
  if (ra != rb) {
    auto show = [](const Computation& c, int64_t r) {
      return r < 0 ? std::string("none")
                   : "instruction " + std::to_string(r) + " (%" + std::string(c.root()->name()) + ")";
    };
    return Fail(where, "root " + show(a, ra) + " vs " + show(b, rb));
  }
  return true;
}

bool Comparer::Instructions(std::string_view where, const Instruction& a, const IndexMap& ia,
                            const Instruction& b, const IndexMap& ib) {
  if (a.name() != b.name())
    return Fail(where, "name %" + std::string(a.name()) + " vs %" + std::string(b.name()));
  if (a.opcode() != b.opcode() || a.async_wrapped_opcode() != b.async_wrapped_opcode()) {
    return Fail(where, "opcode " + a.OpcodeText() + " vs " + b.OpcodeText());
  }
  if (!(a.shape() == b.shape())) return Fail(where, "shape " + ShapePair(a.shape(), b.shape()));
  if (a.operand_count() != b.operand_count()) {
    return Fail(where, std::to_string(a.operand_count()) + " vs " +
                           std::to_string(b.operand_count()) + " operands");
  }
  for (int64_t i = 0; i < a.operand_count(); ++i) {
    const Instruction* oa = a.operand(i);
    const Instruction* ob = b.operand(i);
    int64_t pa = IndexOf(ia, oa);
    int64_t pb = IndexOf(ib, ob);
    // Operands outside the computation (malformed IR) compare by name.
    bool same = pa == pb && (pa >= 0 || oa->name() == ob->name());
    if (!same) {
      return Fail(where, "operand " + std::to_string(i) + " is instruction " + std::to_string(pa) + " (%" +
                             std::string(oa->name()) + ") vs instruction " + std::to_string(pb) + " (%" +
                             std::string(ob->name()) + ")");
    }
  }
  if (!Attributes(where, a.attributes(), b.attributes())) return false;
  if (a.parameter_number() != b.parameter_number()) {
    return Fail(where, "parameter number " + std::to_string(a.parameter_number()) + " vs " +
                           std::to_string(b.parameter_number()));
  }
  const Literal* la = a.literal();
  const Literal* lb = b.literal();
  if ((la == nullptr) != (lb == nullptr)) {
    return Fail(where, std::string("literal ") + (la ? "present" : "absent") + " vs " +
                           (lb ? "present" : "absent"));
  }
  if (la != nullptr && !(*la == *lb)) {
    std::string ta = la->ToString();
    std::string tb = lb->ToString();
    std::string what = "literal " + TextPair(ta, tb);
    if (ta == tb) what += " (equal text, different bits)";
    return Fail(where, what);
  }
  return true;
}

}  // namespace

bool ModulesEqual(const Module& a, const Module& b, std::string* why) {
  if (why != nullptr) why->clear();
  return Comparer(why).Modules(a, b);
}

}  // namespace kiln::hlo
