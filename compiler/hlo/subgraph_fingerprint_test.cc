#include "compiler/hlo/subgraph_fingerprint.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/fingerprint_test_util.h"
#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

// A parsed module and the subgraph of its entry named by instruction names.
struct Subgraph {
  std::unique_ptr<Module> module;
  std::vector<int64_t> instructions;
  std::vector<int64_t> roots;
};

int64_t IndexOf(const Computation& comp, std::string_view name) {
  for (const auto& instr : comp.instructions()) {
    if (instr->name() == name) return instr->index_in_parent();
  }
  ADD_FAILURE() << "no instruction %" << name;
  return -1;
}

Subgraph Make(std::string_view text, const std::vector<std::string>& members, const std::vector<std::string>& roots) {
  Subgraph out;
  auto parsed = ParseModule(text, "test.hlo");
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().ToString()) << "\n" << text;
  if (!parsed) return out;
  out.module = std::move(*parsed);
  const Computation& entry = *out.module->entry();
  for (const std::string& name : members) out.instructions.push_back(IndexOf(entry, name));
  for (const std::string& name : roots) out.roots.push_back(IndexOf(entry, name));
  return out;
}

Hash128 Key(const Subgraph& s) {
  if (s.module == nullptr) return {};
  auto key = FingerprintSubgraph(*s.module->entry(), s.instructions, s.roots);
  EXPECT_TRUE(key) << key.error().ToString();
  return key.value_or(Hash128{});
}

Hash128 KeyOf(std::string_view text, const std::vector<std::string>& members, const std::vector<std::string>& roots) {
  return Key(Make(text, members, roots));
}

// The kernel {a, e, m}: m = (p0 + p1)^e * p1, written out at m.
constexpr std::string_view kKernelModule = R"(
HloModule base
ENTRY main {
  p0 = f32[8,128]{1,0} parameter(0)
  p1 = f32[8,128]{1,0} parameter(1)
  a = f32[8,128]{1,0} add(p0, p1)
  e = f32[8,128]{1,0} exponential(a)
  ROOT m = f32[8,128]{1,0} multiply(e, p1)
}
)";
const std::vector<std::string> kMembers = {"a", "e", "m"};

TEST(SubgraphFingerprintTest, SameSubgraphInAnotherModuleHasTheSameKey) {
  // Other names, other positions, inputs computed by other instructions,
  // unrelated work around it, members listed in another order.
  constexpr std::string_view kOther = R"(
HloModule other
ENTRY entry {
  q = f32[8,128]{1,0} parameter(0)
  r = s32[4]{0} parameter(1)
  unrelated = s32[4]{0} negate(r)
  x = f32[8,128]{1,0} sine(q)
  y = f32[8,128]{1,0} cosine(q)
  sum = f32[8,128]{1,0} add(x, y)
  ex = f32[8,128]{1,0} exponential(sum)
  prod = f32[8,128]{1,0} multiply(ex, y)
  after = f32[8,128]{1,0} negate(prod)
  ROOT t = (f32[8,128]{1,0}, s32[4]{0}) tuple(after, unrelated)
}
)";
  const Hash128 base = KeyOf(kKernelModule, kMembers, {"m"});
  EXPECT_EQ(base, KeyOf(kOther, {"prod", "sum", "ex"}, {"prod"}));
  EXPECT_NE(base, Hash128{});
}

TEST(SubgraphFingerprintTest, ChangesOutsideTheSubgraphDoNotChangeTheKey) {
  std::string outside_changed(kKernelModule);
  outside_changed.replace(outside_changed.find("ROOT m"), 6, "m");
  outside_changed.replace(outside_changed.rfind('}'), 1, "  ROOT n = f32[8,128]{1,0} negate(m)\n}");
  EXPECT_EQ(KeyOf(kKernelModule, kMembers, {"m"}), KeyOf(outside_changed, kMembers, {"m"}));
}

TEST(SubgraphFingerprintTest, ShapeLayoutConstantAndAttributeChangeTheKey) {
  const Hash128 base = KeyOf(kKernelModule, kMembers, {"m"});
  auto with = [](std::string from, std::string_view to_replace, std::string_view replacement) {
    for (size_t at = from.find(to_replace); at != std::string::npos; at = from.find(to_replace, at)) {
      from.replace(at, to_replace.size(), replacement);
      at += replacement.size();
    }
    return from;
  };
  const std::string text(kKernelModule);
  EXPECT_NE(base, KeyOf(with(text, "f32[8,128]", "f32[16,128]"), kMembers, {"m"}));
  EXPECT_NE(base, KeyOf(with(text, "f32[8,128]", "bf16[8,128]"), kMembers, {"m"}));
  EXPECT_NE(base, KeyOf(with(text, "{1,0}", "{0,1}"), kMembers, {"m"}));
  // Only an input's layout changes (it is computed outside): still another key.
  EXPECT_NE(base, KeyOf(with(text, "p0 = f32[8,128]{1,0}", "p0 = f32[8,128]{0,1}"), kMembers, {"m"}));

  constexpr std::string_view kCompare = R"(
HloModule cmp
ENTRY main {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  c = pred[8]{0} compare(p0, p1), direction=LT
  ROOT s = f32[8]{0} select(c, p0, p1)
}
)";
  const std::string compare(kCompare);
  const Hash128 lt = KeyOf(compare, {"c", "s"}, {"s"});
  EXPECT_NE(lt, KeyOf(with(compare, "direction=LT", "direction=GT"), {"c", "s"}, {"s"}));

  constexpr std::string_view kConstant = R"(
HloModule k
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  k = f32[4]{0} constant({1, 2, 3, 4})
  ROOT m = f32[4]{0} multiply(p0, k)
}
)";
  const std::string constant(kConstant);
  EXPECT_NE(KeyOf(constant, {"k", "m"}, {"m"}), KeyOf(with(constant, "{1, 2, 3, 4}", "{1, 2, 3, 5}"), {"k", "m"}, {"m"}));
}

TEST(SubgraphFingerprintTest, CalledComputationsCountByContent) {
  constexpr std::string_view kReduce = R"(
HloModule r
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  z = f32[] constant(0)
  e = f32[8,128]{1,0} exponential(p)
  ROOT r = f32[8]{0} reduce(e, z), dimensions={1}, to_apply=add
}
)";
  const std::string text(kReduce);
  const Hash128 sum = KeyOf(text, {"e", "r"}, {"r"});
  std::string with_max = text;
  with_max.replace(with_max.find("to_apply=add"), 12, "to_apply=max");
  EXPECT_NE(sum, KeyOf(with_max, {"e", "r"}, {"r"}));
  std::string renamed = text;
  renamed.replace(renamed.find("add {"), 5, "plus {");
  renamed.replace(renamed.find("to_apply=add"), 12, "to_apply=plus");
  EXPECT_EQ(sum, KeyOf(renamed, {"e", "r"}, {"r"}));
}

TEST(SubgraphFingerprintTest, EdgesInputsAndRootsChangeTheKey) {
  const Hash128 base = KeyOf(kKernelModule, kMembers, {"m"});
  // m reads p0 instead of p1: the same shapes, another input sharing.
  std::string other_input(kKernelModule);
  other_input.replace(other_input.find("multiply(e, p1)"), 15, "multiply(e, p0)");
  EXPECT_NE(base, KeyOf(other_input, kMembers, {"m"}));
  // m reads a instead of e: another edge inside.
  std::string other_edge(kKernelModule);
  other_edge.replace(other_edge.find("multiply(e, p1)"), 15, "multiply(a, p1)");
  EXPECT_NE(base, KeyOf(other_edge, kMembers, {"m"}));
  // Operand order of a non-commutative use counts.
  std::string swapped(kKernelModule);
  swapped.replace(swapped.find("multiply(e, p1)"), 15, "multiply(p1, e)");
  EXPECT_NE(base, KeyOf(swapped, kMembers, {"m"}));
  // One input read twice vs two inputs.
  constexpr std::string_view kTwice = R"(
HloModule t
ENTRY main {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  ROOT a = f32[8]{0} add(p0, p1)
}
)";
  std::string twice(kTwice);
  const Hash128 two_inputs = KeyOf(twice, {"a"}, {"a"});
  twice.replace(twice.find("add(p0, p1)"), 11, "add(p0, p0)");
  EXPECT_NE(two_inputs, KeyOf(twice, {"a"}, {"a"}));
  // Another root written out, or another instruction in the subgraph.
  EXPECT_NE(base, KeyOf(kKernelModule, kMembers, {"e", "m"}));
  EXPECT_NE(base, KeyOf(kKernelModule, {"e", "m"}, {"m"}));
}

TEST(SubgraphFingerprintTest, BadIndicesAreErrors) {
  Subgraph s = Make(kKernelModule, kMembers, {"m"});
  ASSERT_NE(s.module, nullptr);
  const Computation& entry = *s.module->entry();
  const int64_t a = IndexOf(entry, "a");
  const int64_t m = IndexOf(entry, "m");
  const int64_t e = IndexOf(entry, "e");
  auto error = [&](std::vector<int64_t> members, std::vector<int64_t> roots) {
    auto key = FingerprintSubgraph(entry, members, roots);
    EXPECT_FALSE(key);
    return key ? std::string() : key.error().message;
  };
  EXPECT_NE(error({}, {}).find("empty"), std::string::npos);
  EXPECT_NE(error({a, 99}, {a}).find("99 of %main is out of range"), std::string::npos);
  EXPECT_NE(error({a, -1}, {a}).find("out of range"), std::string::npos);
  EXPECT_NE(error({a, e, a}, {e}).find("listed twice"), std::string::npos);
  EXPECT_NE(error({a, e}, {m}).find("not in the subgraph"), std::string::npos);
  EXPECT_NE(error({a, e}, {e, e}).find("root listed twice"), std::string::npos);
}

}  // namespace
}  // namespace kiln::hlo
