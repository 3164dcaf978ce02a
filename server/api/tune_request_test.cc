#include "server/api/tune_request.h"

#include <gtest/gtest.h>

namespace kiln::api {
namespace {

std::string Reason(std::string_view body) {
  Result<TuneRequest> parsed = ParseTuneRequest(body);
  if (parsed) return "ok";
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << parsed.error().ToString();
  return std::string(parsed.error().reason());
}

TEST(TuneRequestTest, ModuleChipBudgetAndSeed) {
  auto parsed = ParseTuneRequest(
      R"({"hlo": "HloModule m", "chip": "V6E", "max_trials": 12, "seed": 9, "options": {"scoped_vmem_bytes": 0}})");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->hlo, "HloModule m");
  EXPECT_EQ(parsed->options.chip, "v6e");
  EXPECT_EQ(parsed->budget.max_trials, 12);
  EXPECT_EQ(parsed->budget.max_seconds, 0) << "only the budget given applies";
  EXPECT_EQ(parsed->budget.seed, 9u);
  EXPECT_FALSE(parsed->key);
}

TEST(TuneRequestTest, DefaultsAndKeyAlone) {
  auto parsed = ParseTuneRequest(R"({"key": "8509a329c0908e1bde360d54663719a7"})");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_FALSE(parsed->hlo);
  EXPECT_EQ(parsed->key->Hex(), "8509a329c0908e1bde360d54663719a7");
  EXPECT_EQ(parsed->options.chip, "v5e");
  EXPECT_EQ(parsed->budget.max_trials, kDefaultTuneTrials);
  EXPECT_EQ(parsed->budget.max_seconds, kDefaultTuneSeconds);
}

TEST(TuneRequestTest, BadBudgetsChipsKeysAndFieldsHaveTheirReasons) {
  EXPECT_EQ(Reason(R"({"hlo": "x", "max_trials": 0})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "max_trials": -3})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "max_trials": 2.5})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "max_trials": 1000000000})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "time_budget_s": 0})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "time_budget_s": -1})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "time_budget_s": 1e12})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "time_budget_s": "30s"})"), "invalid_budget");
  EXPECT_EQ(Reason(R"({"hlo": "x", "chip": "h100"})"), "unknown_chip");
  EXPECT_EQ(Reason(R"({"key": "XYZ"})"), "invalid_key");
  EXPECT_EQ(Reason(R"({"hlo": "x", "options": {"plan": "none"}})"), "invalid_options");
  EXPECT_EQ(Reason(R"({"hlo": "x", "options": {"scoped_vmem_bytes": 1099511627776}})"), "invalid_options");
  EXPECT_EQ(Reason(R"({"hlo": "x", "budget": 3})"), "invalid_json");
  EXPECT_EQ(Reason(R"({"chip": "v5e"})"), "invalid_json");
  EXPECT_EQ(Reason(R"([1, 2])"), "invalid_json");
  EXPECT_EQ(Reason("{"), "invalid_json");
  EXPECT_EQ(Reason(R"({"hlo": "x", "seed": -1})"), "invalid_json");
}

}  // namespace
}  // namespace kiln::api
