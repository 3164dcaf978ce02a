#include "compiler/passes/loop_state_layout.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/op_attributes.h"
#include "compiler/passes/layout_assignment.h"
#include "compiler/passes/layout_groups.h"

namespace kiln::passes {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

// One state element of one loop and the layout it takes.
struct Choice {
  Instruction* loop = nullptr;
  int64_t index = 0;
  std::vector<int64_t> layout;
};

bool IsTupleElement(const Instruction& instr, const Instruction& tuple, int64_t index) {
  if (instr.opcode() != Opcode::kGetTupleElement || instr.operand_count() != 1 ||
      instr.operand(0) != &tuple) {
    return false;
  }
  Result<int64_t> i = hlo::GetTupleIndex(instr);
  return i && *i == index;
}

// Whether `user` reads its operand `value` in any layout: an array
// computation, a reduction, or a dynamic update of it.
bool TakesAnyLayout(const Instruction& user) {
  return ReadsAnyLayout(user.opcode()) || user.opcode() == Opcode::kDynamicUpdateSlice;
}

// Whether `value` appears among `tuple`'s operands only at `indices`.
bool OnlyAt(const Instruction& tuple, const Instruction* value, const std::vector<int64_t>& indices) {
  for (int64_t i = 0; i < tuple.operand_count(); ++i) {
    if (tuple.operand(i) == value && std::find(indices.begin(), indices.end(), i) == indices.end())
      return false;
  }
  return true;
}

// Whether every user of `value` takes any layout, except `tuple`, which may
// read it at `indices` alone.
bool ReadFreely(const Instruction& value, const Instruction* tuple, const std::vector<int64_t>& indices) {
  return std::all_of(value.users().begin(), value.users().end(), [&](const Instruction* user) {
    if (user == tuple) return OnlyAt(*tuple, &value, indices);
    return TakesAnyLayout(*user);
  });
}

// Whether `value` may simply be given another layout: an array op's result
// with the default layout, read freely (tuple: at `indices`).
bool MayTakeLayout(const Instruction& value, const Instruction* tuple, const std::vector<int64_t>& indices) {
  if (!IsLaidOutArray(value.shape()) || !value.shape().has_default_layout()) return false;
  if (!TakesAnyLayout(value) || value.opcode() == Opcode::kParameter) return false;
  return ReadFreely(value, tuple, indices);
}

// Whether the parameter of `computation` (a loop body or condition) is
// read only through get-tuple-elements, and element `index` only freely
// (`root`: the body's root tuple may pass it back at the same index).
bool StateReadFreely(const Computation& computation, int64_t index, const Instruction* root) {
  if (computation.parameter_count() != 1) return false;
  const Instruction& param = *computation.parameters().front();
  if (&param == computation.root()) return false;
  for (const Instruction* user : param.users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return false;
    if (!IsTupleElement(*user, param, index)) continue;
    if (user == computation.root() || !ReadFreely(*user, root, {index})) return false;
  }
  return true;
}

Computation* Called(const Instruction& loop, std::string_view name) {
  Result<const Computation*> called = hlo::GetCalledComputation(loop, name);
  if (!called) return nullptr;
  for (Computation* c : loop.called_computations()) {
    if (c == *called) return c;
  }
  return nullptr;
}

// The state elements of `loop` that may take a denser layout.
std::vector<Choice> Choose(Instruction& loop, const Computation& parent,
                           const std::unordered_map<const Computation*, int>& callers) {
  std::vector<Choice> out;
  Computation* body = Called(loop, "body");
  Computation* condition = Called(loop, "condition");
  if (body == nullptr || condition == nullptr || callers.at(body) != 1 || callers.at(condition) != 1)
    return out;
  const Instruction* init = loop.operand_count() == 1 ? loop.operand(0) : nullptr;
  const Instruction* root = body->root();
  if (!loop.shape().IsTuple() || init == nullptr || init->opcode() != Opcode::kTuple ||
      init->users().size() != 1 || root == nullptr || root->opcode() != Opcode::kTuple ||
      &loop == parent.root()) {
    return out;
  }
  for (const Instruction* user : loop.users()) {
    if (user->opcode() != Opcode::kGetTupleElement || user == parent.root()) return out;
  }
  const std::vector<hlo::Shape>& state = loop.shape().tuple_shapes();
  for (int64_t i = 0; i < static_cast<int64_t>(state.size()); ++i) {
    const hlo::Shape& element = state[i];
    if (!IsLaidOutArray(element) || !element.has_default_layout()) continue;
    std::optional<std::vector<int64_t>> layout = DenserMinorToMajor(element);
    if (!layout) continue;
    if (!StateReadFreely(*body, i, root) || !StateReadFreely(*condition, i, nullptr)) continue;
    const Instruction* next = root->operand(i);
    const bool passed_back = IsTupleElement(*next, *body->parameters().front(), i);
    if (!passed_back && !MayTakeLayout(*next, root, {i})) continue;
    out.push_back({&loop, i, std::move(*layout)});
  }
  return out;
}

hlo::Shape WithLayout(hlo::Shape shape, const std::vector<int64_t>& layout) {
  shape.mutable_layout().minor_to_major = layout;
  return shape;
}

void SetElementLayout(Instruction& tuple_valued, int64_t index, const std::vector<int64_t>& layout) {
  hlo::Shape shape = tuple_valued.shape();
  shape.mutable_tuple_shapes()[index].mutable_layout().minor_to_major = layout;
  tuple_valued.set_shape(std::move(shape));
}

void SetLayout(Instruction& value, const std::vector<int64_t>& layout) {
  value.set_shape(WithLayout(value.shape(), layout));
}

// Names for inserted copies, unique in their computation.
class CopyNames {
 public:
  std::string Make(const Computation& computation, std::string_view base) {
    std::unordered_set<std::string>& taken = taken_[&computation];
    if (taken.empty()) {
      for (const auto& instr : computation.instructions()) taken.emplace(instr->name());
    }
    std::string name(base);
    for (int k = 1; taken.contains(name); ++k) name = std::string(base) + "." + std::to_string(k);
    taken.insert(name);
    return name;
  }

 private:
  std::unordered_map<const Computation*, std::unordered_set<std::string>> taken_;
};

Instruction* AddCopy(Computation& computation, Instruction& value, hlo::Shape shape, std::string name) {
  auto copy = Instruction::Create(Opcode::kCopy, std::move(shape), {&value}, name);
  copy->set_source_line(value.source_line());
  return computation.AddInstruction(std::move(copy));
}

// Whether `user` of the loop result element in `layout` reads it as laid
// out: it takes any layout, or it is the init tuple of a loop that chose
// the same layout wherever it holds the value.
bool ReadsAsLaidOut(const Instruction& user, const Instruction& value, const std::vector<int64_t>& layout,
                    const std::unordered_map<const Instruction*, std::vector<Choice>>& chosen) {
  if (TakesAnyLayout(user)) return true;
  if (user.opcode() != Opcode::kTuple || user.users().size() != 1) return false;
  auto it = chosen.find(user.users().front());
  if (it == chosen.end()) return false;
  for (int64_t i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) != &value) continue;
    const bool same = std::any_of(it->second.begin(), it->second.end(),
                                  [&](const Choice& c) { return c.index == i && c.layout == layout; });
    if (!same) return false;
  }
  return true;
}

Status Apply(const Choice& choice, Computation& parent,
             const std::unordered_map<const Instruction*, std::vector<Choice>>& chosen, CopyNames& names) {
  Instruction& loop = *choice.loop;
  // The loop's elements that take this layout: an init value it starts
  // several of them from takes it once.
  std::vector<int64_t> alike;
  for (const Choice& c : chosen.at(&loop)) {
    if (c.layout == choice.layout) alike.push_back(c.index);
  }
  const int64_t i = choice.index;
  const std::vector<int64_t>& layout = choice.layout;
  const hlo::Shape original = loop.shape().tuple_shapes(i);
  // The body and condition: parameter, the element's reads, the root.
  for (std::string_view role : {"body", "condition"}) {
    Computation* c = Called(loop, role);
    Instruction& param = *c->parameters().front();
    SetElementLayout(param, i, layout);
    for (Instruction* user : param.users()) {
      if (IsTupleElement(*user, param, i)) SetLayout(*user, layout);
    }
    if (role == "body") {
      Instruction& root = *c->root();
      Instruction* next = root.operand(i);
      if (!IsTupleElement(*next, param, i)) SetLayout(*next, layout);
      SetElementLayout(root, i, layout);
    }
  }
  // The init: its element in the layout, by itself or through a copy.
  Instruction& init = *loop.operand(0);
  Instruction* first = init.operand(i);
  if (first->shape().layout().minor_to_major != layout) {
    if (MayTakeLayout(*first, &init, alike)) {
      SetLayout(*first, layout);
    } else {
      Instruction* copy = AddCopy(parent, *first, WithLayout(original, layout),
                                  names.Make(parent, std::string(first->name()) + ".loop_layout"));
      KILN_RETURN_IF_ERROR(init.ReplaceOperandWith(i, copy));
    }
  }
  SetElementLayout(init, i, layout);
  SetElementLayout(loop, i, layout);
  // The result: read as laid out, or through a copy back.
  std::vector<Instruction*> results;
  for (Instruction* user : loop.users()) {
    if (IsTupleElement(*user, loop, i)) results.push_back(user);
  }
  for (Instruction* result : results) {
    SetLayout(*result, layout);
    std::vector<Instruction*> others;
    for (Instruction* user : result->users()) {
      if (!ReadsAsLaidOut(*user, *result, layout, chosen)) others.push_back(user);
    }
    if (others.empty()) continue;
    Instruction* back =
        AddCopy(parent, *result, original, names.Make(parent, std::string(result->name()) + ".as_written"));
    for (Instruction* user : others) {
      for (int64_t k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) == result) KILN_RETURN_IF_ERROR(user->ReplaceOperandWith(k, back));
      }
    }
  }
  return Ok();
}

}  // namespace

Result<bool> AssignLoopStateLayouts(hlo::Module& module) {
  std::unordered_map<const Computation*, int> callers;
  std::unordered_set<const Computation*> fusion_bodies;
  for (const auto& computation : module.computations()) {
    callers.try_emplace(computation.get(), 0);
    for (const auto& instr : computation->instructions()) {
      for (const Computation* called : instr->called_computations()) {
        ++callers[called];
        if (instr->opcode() == Opcode::kFusion) fusion_bodies.insert(called);
      }
    }
  }
  // Decide on the module as written, then apply callers first (the entry
  // before the bodies it runs) and each computation's loops in order, so a
  // loop whose init is an earlier loop's result finds it laid out.
  std::unordered_map<const Instruction*, std::vector<Choice>> chosen;
  std::vector<std::pair<Computation*, std::vector<Choice>>> order;
  for (auto it = module.computations().rbegin(); it != module.computations().rend(); ++it) {
    Computation& computation = **it;
    if (fusion_bodies.contains(&computation)) continue;
    std::vector<Choice> choices;
    for (const auto& instr : computation.instructions()) {
      if (instr->opcode() != Opcode::kWhile) continue;
      std::vector<Choice> mine = Choose(*instr, computation, callers);
      if (mine.empty()) continue;
      chosen[instr.get()] = mine;
      choices.insert(choices.end(), mine.begin(), mine.end());
    }
    if (!choices.empty()) order.emplace_back(&computation, std::move(choices));
  }
  CopyNames names;
  for (auto& [computation, choices] : order) {
    for (const Choice& choice : choices) KILN_RETURN_IF_ERROR(Apply(choice, *computation, chosen, names));
  }
  return !order.empty();
}

}  // namespace kiln::passes
