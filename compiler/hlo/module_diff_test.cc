// DiffModules: the instructions that differ between a cached module and the
// one sent now.
#include "compiler/hlo/module_diff.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto module = ParseModule(text, "test.hlo");
  EXPECT_TRUE(module) << module.error().ToString();
  return std::move(*module);
}

std::string Step(const std::string& learning_rate, const std::string& extra = "") {
  return R"(HloModule step

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  w = f32[16,128] parameter(0)
  g = f32[16,128] parameter(1)
  lr = f32[] constant()" + learning_rate + R"(), metadata={op_name="lr"}
  lrb = f32[16,128] broadcast(lr), dimensions={}
  scaled = f32[16,128] multiply(g, lrb)
)" + extra + R"(  ROOT updated = f32[16,128] subtract(w, scaled)
}
)";
}

TEST(ModuleDiffTest, SameModulesHaveNoChanges) {
  auto a = Parse(Step("0.001"));
  auto b = Parse(Step("0.001"));
  ModuleDiff diff = DiffModules(*a, *b);
  EXPECT_EQ(diff.total_changes, 0u);
  EXPECT_TRUE(diff.changes.empty());
}

TEST(ModuleDiffTest, ChangedConstantIsNamedWithBothValuesAndItsLine) {
  auto cached = Parse(Step("0.001"));
  auto current = Parse(Step("0.002"));
  ModuleDiff diff = DiffModules(*cached, *current);
  ASSERT_EQ(diff.total_changes, 1u);
  const InstructionChange& change = diff.changes[0];
  EXPECT_EQ(change.kind, InstructionChange::Kind::kChanged);
  EXPECT_EQ(change.computation, "main");
  EXPECT_EQ(change.instruction, "lr");
  EXPECT_EQ(change.line, 12);
  EXPECT_EQ(change.cached_line, 12);
  EXPECT_TRUE(change.value_only);
  EXPECT_NE(change.cached.find("0.001"), std::string::npos) << change.cached;
  EXPECT_NE(change.current.find("0.002"), std::string::npos) << change.current;
  // Metadata is not part of what is compared or shown.
  EXPECT_EQ(change.current.find("metadata"), std::string::npos) << change.current;
}

TEST(ModuleDiffTest, MetadataAloneIsNoChange) {
  std::string other = Step("0.001");
  other.replace(other.find("op_name=\"lr\""), 12, "op_name=\"zz\"");
  auto cached = Parse(Step("0.001"));
  auto current = Parse(other);
  EXPECT_EQ(DiffModules(*cached, *current).total_changes, 0u);
}

TEST(ModuleDiffTest, AddedAndRemovedInstructions) {
  auto cached = Parse(Step("0.001"));
  auto current = Parse(Step("0.001", "  clipped = f32[16,128] negate(scaled)\n"));
  ModuleDiff diff = DiffModules(*cached, *current);
  ASSERT_EQ(diff.total_changes, 1u);
  EXPECT_EQ(diff.changes[0].kind, InstructionChange::Kind::kAdded);
  EXPECT_EQ(diff.changes[0].instruction, "clipped");
  EXPECT_EQ(diff.changes[0].line, 15);
  ModuleDiff back = DiffModules(*current, *cached);
  ASSERT_EQ(back.total_changes, 1u);
  EXPECT_EQ(back.changes[0].kind, InstructionChange::Kind::kRemoved);
  EXPECT_EQ(back.changes[0].cached_line, 15);
}

TEST(ModuleDiffTest, ChangedShapeIsNotValueOnlyAndChangesAreCapped) {
  std::string wide = Step("0.001");
  for (size_t at = wide.find("16,128"); at != std::string::npos; at = wide.find("16,128", at)) {
    wide.replace(at, 6, "32,128");
  }
  auto cached = Parse(Step("0.001"));
  auto current = Parse(wide);
  ModuleDiff diff = DiffModules(*cached, *current, /*max_changes=*/2);
  EXPECT_EQ(diff.total_changes, 5u);  // w, g, lrb, scaled, updated
  ASSERT_EQ(diff.changes.size(), 2u);
  EXPECT_EQ(diff.changes[0].instruction, "w");
  EXPECT_FALSE(diff.changes[0].value_only);
}

TEST(ModuleDiffTest, LongConstantsAreCut) {
  auto cached = Parse(Step("0.001"));
  auto current = Parse(Step("0.002"));
  ModuleDiff diff = DiffModules(*cached, *current, 10, /*max_text=*/12);
  ASSERT_EQ(diff.changes.size(), 1u);
  EXPECT_EQ(diff.changes[0].current.size(), 15u);
  EXPECT_TRUE(diff.changes[0].current.ends_with("..."));
}

}  // namespace
}  // namespace kiln::hlo
