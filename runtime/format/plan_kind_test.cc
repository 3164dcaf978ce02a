#include "runtime/format/plan_kind.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

// The names are hashed into keys and stored in executables and the cache:
// they are spelled out here so a rename fails a test.
TEST(PlanKindTest, NamesAreFixedAndParseBack) {
  const std::pair<PlanKind, std::string_view> kinds[] = {
      {PlanKind::kNone, "none"},
      {PlanKind::kHeuristic, "heuristic"},
      {PlanKind::kGiven, "given"},
      {PlanKind::kTuned, "tuned"},
  };
  for (const auto& [kind, name] : kinds) {
    EXPECT_EQ(PlanKindName(kind), name);
    auto parsed = ParsePlanKind(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(*parsed, kind);
  }
}

TEST(PlanKindTest, RejectsOtherNamesNamingTheChoices) {
  for (std::string_view name : {"", "Heuristic", "fused", "none "}) {
    auto parsed = ParsePlanKind(name);
    ASSERT_FALSE(parsed) << name;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("expected none, heuristic, given or tuned"), std::string::npos)
        << parsed.error().message;
  }
}

}  // namespace
}  // namespace kiln::runtime
