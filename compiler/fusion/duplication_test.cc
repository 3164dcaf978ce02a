// How often the heuristic copies a cheap producer into the kernels that
// read it (PlannerOptions::max_duplication) before writing it once instead.
#include <gtest/gtest.h>

#include <string>

#include "compiler/fusion/planner_test_fixture.h"

namespace kiln::fusion {
namespace {

using testing::PlannerTest;

// c = op(x) read by ten loop kernels k0..k9 (each adds a parameter), all
// returned; x is of `type`, c is f32.
std::string TenReaders(const std::string& op, const std::string& type) {
  std::string text = "HloModule m\nENTRY e {\n  x = " + type + "[64,128] parameter(0)\n";
  std::string tuple_shape, tuple_args;
  for (int i = 0; i < 10; ++i) {
    const std::string k = std::to_string(i);
    text += "  p" + k + " = f32[64,128] parameter(" + std::to_string(i + 1) + ")\n";
    tuple_shape += std::string(i ? ", " : "") + "f32[64,128]";
    tuple_args += std::string(i ? ", " : "") + "k" + k;
  }
  text += "  c = f32[64,128] " + op + "(x)\n";
  for (int i = 0; i < 10; ++i) {
    const std::string k = std::to_string(i);
    text += "  k" + k + " = f32[64,128] add(c, p" + k + ")\n";
  }
  return text + "  ROOT t = (" + tuple_shape + ") tuple(" + tuple_args + ")\n}\n";
}

// A negate read by ten kernels is more copies than the limit: it is
// written once and read back by each.
TEST_F(PlannerTest, AProducerWithMoreReadersThanTheLimitIsWrittenOnce) {
  Plan(TenReaders("negate", "f32"));
  for (int i = 0; i < 10; ++i) {
    ExpectRefused("c", "k" + std::to_string(i), DecisionKind::kProfitability,
                  "producer %c has 10 consumers: copying it into each kernel would bloat them (limit 8)");
  }
}

// A bf16 -> f32 convert is cheaper to recompute in every reader (each loads
// the bf16 source) than to write in f32 and read back: no limit.
TEST_F(PlannerTest, AWideningConvertIsRecomputedInEveryReader) {
  Plan(TenReaders("convert", "bf16"));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(Edge("c", "k" + std::to_string(i))->fused) << i;
}

}  // namespace
}  // namespace kiln::fusion
