// The check.* custom calls (check_calls.h): the StableHLO interpreter's
// tolerances, and what a recorder keeps.
#include "runtime/eval/check_calls.h"

#include <gtest/gtest.h>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::Lit;
using testing::OneOp;


// Runs one check of `target` on (actual, expected) and returns whether it
// passed; `config` is its backend_config.
struct Checked {
  bool ran = false;
  bool passed = false;
  std::string message;
};

Checked RunCheck(std::string_view type, std::string_view target, std::string_view config, std::string_view actual,
                 std::string_view expected) {
  std::string op = "custom-call(a, e), custom_call_target=\"" + std::string(target) + "\", custom_call_has_side_effect=true";
  if (!config.empty()) op += ", backend_config=\"" + std::string(config) + "\"";
  op += ", metadata={source_line=17}";
  const std::string result = target == "check.eq" ? "pred[]" : "()";
  const std::string params = std::string(type) + " a, " + std::string(type) + " e";
  CheckRecorder recorder;
  EvalOptions options;
  options.checks = &recorder;
  Result<hlo::Literal> out = testing::Run(OneOp(params, result, op), {Lit(actual), Lit(expected)}, options);
  Checked c;
  c.ran = out.has_value();
  if (!out) c.message = out.error().ToString();
  c.passed = recorder.passed() == 1 && recorder.failed() == 0;
  if (recorder.failed() == 1) {
    c.message = recorder.failures()[0].message;
    EXPECT_EQ(recorder.failures()[0].line, 17);
    EXPECT_EQ(recorder.failures()[0].check, target);
  }
  if (target == "check.eq" && out) EXPECT_EQ(out->ToString(), c.passed ? "pred[] true" : "pred[] false");
  return c;
}

TEST(CheckCallsTest, ExpectEqIsExactAndTakesNanForNan) {
  EXPECT_TRUE(RunCheck("f32[3]", "check.expect_eq", "", "f32[3] {1, 2, nan}", "f32[3] {1, 2, nan}").passed);
  Checked off = RunCheck("f32[3]", "check.expect_eq", "", "f32[3] {1, 2, 3}", "f32[3] {1, 2.0000002, 3}");
  EXPECT_TRUE(off.ran);
  EXPECT_FALSE(off.passed);
  EXPECT_NE(off.message.find("[1]"), std::string::npos) << off.message;
  EXPECT_FALSE(RunCheck("s32[2]", "check.expect_eq", "", "s32[2] {1, 2}", "s32[2] {1, 3}").passed);
  EXPECT_TRUE(RunCheck("s32[2]", "check.expect_eq", "", "s32[2] {1, -3}", "s32[2] {1, -3}").passed);
}

TEST(CheckCallsTest, ExpectCloseCountsUlpsWithinTheRange) {
  // 1 and the next float up differ by one ULP; the default range is [0, 3].
  EXPECT_TRUE(RunCheck("f32[1]", "check.expect_close", "", "f32[1] {1}", "f32[1] {1.0000001}").passed);
  EXPECT_FALSE(RunCheck("f32[1]", "check.expect_close", "", "f32[1] {1}", "f32[1] {1.000001}").passed);
  EXPECT_TRUE(RunCheck("f32[1]", "check.expect_close", "min_ulp=0 max_ulp=10", "f32[1] {1}", "f32[1] {1.000001}")
                  .passed);
  // A minimum above zero refuses identical values.
  EXPECT_FALSE(RunCheck("f32[1]", "check.expect_close", "min_ulp=1 max_ulp=3", "f32[1] {1}", "f32[1] {1}").passed);
  // Across zero the distances add up.
  EXPECT_TRUE(RunCheck("f32[2]", "check.expect_close", "", "f32[2] {0, -0}", "f32[2] {-0, 0}").passed);
  EXPECT_FALSE(RunCheck("f32[1]", "check.expect_close", "", "f32[1] {1}", "f32[1] {inf}").passed);
}

TEST(CheckCallsTest, AlmostEqUsesTheToleranceAndTheSign) {
  EXPECT_TRUE(RunCheck("f32[1]", "check.expect_almost_eq", "", "f32[1] {1}", "f32[1] {1.0009}").passed);
  EXPECT_FALSE(RunCheck("f32[1]", "check.expect_almost_eq", "", "f32[1] {1}", "f32[1] {1.002}").passed);
  EXPECT_TRUE(RunCheck("f32[1]", "check.expect_almost_eq", "tolerance=0.01", "f32[1] {1}", "f32[1] {1.002}").passed);
  EXPECT_FALSE(RunCheck("f32[1]", "check.expect_almost_eq", "", "f32[1] {0.0001}", "f32[1] {-0.0001}").passed);
  EXPECT_TRUE(RunCheck("c64[1]", "check.expect_almost_eq", "", "c64[1] {(1, 2)}", "c64[1] {(1, 2.0005)}").passed);
  EXPECT_FALSE(RunCheck("c64[1]", "check.expect_almost_eq", "", "c64[1] {(1, 2)}", "c64[1] {(1, 2.5)}").passed);
}

TEST(CheckCallsTest, EqReturnsItsOutcome) {
  EXPECT_TRUE(RunCheck("f32[2]", "check.eq", "", "f32[2] {1, 2}", "f32[2] {1, 2.00001}").passed);
  EXPECT_FALSE(RunCheck("f32[2]", "check.eq", "", "f32[2] {1, 2}", "f32[2] {1, 2.5}").passed);
  EXPECT_FALSE(RunCheck("s8[2]", "check.eq", "", "s8[2] {1, 2}", "s8[2] {1, 3}").passed);
}

TEST(CheckCallsTest, MismatchedOperandsAreAnError) {
  const std::string text =
      OneOp("f32[2] a, f32[3] e", "()",
            "custom-call(a, e), custom_call_target=\"check.expect_eq\", custom_call_has_side_effect=true");
  Result<hlo::Literal> out = testing::Run(text, {Lit("f32[2] {1, 2}"), Lit("f32[3] {1, 2, 3}")});
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().ToString().find("check.expect_eq compares"), std::string::npos) << out.error().ToString();
}

// A run refused up front for what the evaluator cannot compute
// (CheckEvaluable) must not refuse the checks it evaluates.
TEST(CheckCallsTest, ChecksAreEvaluableAndAVendorCallIsNot) {
  auto module_of = [](std::string_view target) {
    return hlo::ParseModule(OneOp("f32[2] a, f32[2] e", "()",
                                  "custom-call(a, e), custom_call_target=\"" + std::string(target) +
                                      "\", custom_call_has_side_effect=true"));
  };
  for (std::string_view check : {"check.expect_eq", "check.expect_almost_eq", "check.expect_close"}) {
    auto module = module_of(check);
    ASSERT_TRUE(module) << module.error();
    EXPECT_TRUE(CheckEvaluable(**module)) << check;
  }
  auto vendor = module_of("AwsNeuronGelu");
  ASSERT_TRUE(vendor) << vendor.error();
  Status refused = CheckEvaluable(**vendor);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().ToString().find("AwsNeuronGelu"), std::string::npos) << refused.error();
}

TEST(CheckCallsTest, RecorderKeepsABoundedListOfFailures) {
  CheckRecorder recorder;
  for (size_t i = 0; i < CheckRecorder::kMaxKeptFailures + 5; ++i) recorder.Record({"check.eq", "c", 1, false, "m"});
  recorder.Record({"check.eq", "c", 1, true, ""});
  EXPECT_EQ(recorder.failed(), static_cast<int64_t>(CheckRecorder::kMaxKeptFailures + 5));
  EXPECT_EQ(recorder.passed(), 1);
  EXPECT_EQ(recorder.failures().size(), CheckRecorder::kMaxKeptFailures);
}

}  // namespace
}  // namespace kiln::runtime
