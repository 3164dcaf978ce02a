#include "base/edit_distance.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(ClosestWordTest, SuggestsOnlyNearWords) {
  const std::vector<std::string> commands = {"parse", "fingerprint", "compile", "run", "tune", "inspect"};
  EXPECT_EQ(ClosestWord("fingerprnt", commands), "fingerprint");
  EXPECT_EQ(ClosestWord("Compile", commands), "compile");
  EXPECT_EQ(ClosestWord("rnu", commands), std::nullopt);  // two edits of a three-letter word
  EXPECT_EQ(ClosestWord("serve", commands), std::nullopt);
  EXPECT_EQ(ClosestWord("tune", std::vector<std::string>{}), std::nullopt);
}

}  // namespace
}  // namespace kiln
