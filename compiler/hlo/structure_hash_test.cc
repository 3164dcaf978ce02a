#include "compiler/hlo/structure_hash.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/hlo/parser.h"

namespace kiln::hlo {
namespace {

Hash128 Of(const std::string& text) {
  Result<std::unique_ptr<Module>> module = ParseModule(text, "test.hlo");
  EXPECT_TRUE(module) << module.error().ToString();
  return module ? StructureHash(**module) : Hash128{};
}

std::string Step(int batch, const std::string& lr, const std::string& name = "main") {
  const std::string shape = "f32[" + std::to_string(batch) + ",128]";
  return "HloModule " + name + "\nENTRY e {\n  w = " + shape + " parameter(0)\n  lr = f32[] constant(" + lr +
         ")\n  b = " + shape + " broadcast(lr), dimensions={}\n  ROOT m = " + shape + " multiply(w, b)\n}\n";
}

TEST(StructureHashTest, ShapesConstantsAndNamesLeaveItAlone) {
  const Hash128 base = Of(Step(8, "0.1"));
  EXPECT_EQ(Of(Step(16, "0.1")), base);
  EXPECT_EQ(Of(Step(8, "0.01")), base);
  EXPECT_EQ(Of(Step(32, "3", "other_name")), base);
}

TEST(StructureHashTest, AnotherGraphIsAnotherStructure) {
  const Hash128 base = Of(Step(8, "0.1"));
  std::string added = Step(8, "0.1");
  added.replace(added.find("multiply"), 8, "add");
  EXPECT_NE(Of(added), base);
  // Operand order is part of the graph.
  const std::string swapped = "HloModule main\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                              "  ROOT s = f32[4] subtract(b, a)\n}\n";
  const std::string straight = "HloModule main\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                               "  ROOT s = f32[4] subtract(a, b)\n}\n";
  EXPECT_NE(Of(swapped), Of(straight));
}

TEST(StructureHashTest, AChainOfAHundredThousandOpsNeedsNoDeepStack) {
  std::string text = "HloModule chain\nENTRY e {\n  x0 = f32[2] parameter(0)\n";
  for (int i = 1; i <= 100'000; ++i) {
    text += std::string(i == 100'000 ? "  ROOT" : " ") + " x" + std::to_string(i) + " = f32[2] negate(x" +
            std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  EXPECT_NE(Of(text), Hash128{});
}

}  // namespace
}  // namespace kiln::hlo
