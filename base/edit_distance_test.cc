#include "base/edit_distance.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("f32", "f32"), 0u);
  EXPECT_EQ(EditDistance("f33", "f32"), 1u);     // one substitution
  EXPECT_EQ(EditDistance("bf16", "f16"), 1u);    // one deletion
  EXPECT_EQ(EditDistance("s3", "s32"), 1u);      // one insertion
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "pred"), 4u);
  EXPECT_EQ(EditDistance("abc", "cba"), EditDistance("cba", "abc"));
}

TEST(EditDistanceTest, CaseCountsUnlessIgnored) {
  EXPECT_EQ(EditDistance("Chip", "chip"), 1u);
  EXPECT_EQ(EditDistance("Chip", "chip", LetterCase::kIgnored), 0u);
  EXPECT_EQ(EditDistance("PLAN", "plans", LetterCase::kIgnored), 1u);
}

}  // namespace
}  // namespace kiln
