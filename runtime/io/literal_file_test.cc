#include "runtime/io/literal_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/hlo/parser.h"

namespace kiln::runtime::io {
namespace {

TEST(LiteralFileTest, ParsesParamsResultCompareAndErrorSpec) {
  auto file = ParseLiteralFile(
      "# a comment\n"
      "param.1 = s32[2] {0, 2}\n"
      "\n"
      "param.0 = s32[3,3] {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}\r\n"
      "result = (f32[] 1.5, pred[] true)\n"
      "compare = equal\n"
      "error_spec = rel=1e-05 abs=0.0001\n",
      "x.txt");
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->params.size(), 2u);
  EXPECT_EQ(file->params.at(1).ToString(), "s32[2] {0, 2}");
  ASSERT_TRUE(file->result);
  EXPECT_TRUE(file->result->shape().IsTuple());
  EXPECT_EQ(file->compare, CompareMode::kEqual);
  ASSERT_TRUE(file->error_spec);
  EXPECT_DOUBLE_EQ(file->error_spec->abs, 1e-4);
  EXPECT_DOUBLE_EQ(file->error_spec->rel, 1e-5);
  auto args = file->Arguments();
  ASSERT_TRUE(args) << args.error().message;
  ASSERT_EQ(args->size(), 2u);
  EXPECT_EQ((*args)[0].shape().dimensions(), (std::vector<int64_t>{3, 3}));
}

TEST(LiteralFileTest, DefaultsWhenOnlyResultIsGiven) {
  auto file = ParseLiteralFile("result = f32[3] {2, 4, 6}\n");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_TRUE(file->params.empty());
  EXPECT_EQ(file->compare, CompareMode::kNear);
  EXPECT_FALSE(file->error_spec);
  EXPECT_TRUE(file->Arguments()->empty());
}

TEST(LiteralFileTest, ArgumentsReportsAGap) {
  auto file = ParseLiteralFile("param.0 = s32[] 1\nparam.2 = s32[] 3\n");
  ASSERT_TRUE(file) << file.error().message;
  auto args = file->Arguments();
  ASSERT_FALSE(args);
  EXPECT_NE(args.error().message.find("param.1 is missing"), std::string::npos)
      << args.error().message;
}

struct BadCase {
  const char* text;
  const char* message;  // expected substring, after "f.txt:<line>: "
  int line;
};

TEST(LiteralFileTest, ErrorsNameFileLineAndReason) {
  const BadCase cases[] = {
      {"param.0 = s32[2] {1}\n", "bad literal for param.0", 1},
      {"# c\nresult s32[] 1\n", "expected \"name = value\"", 2},
      {"foo = s32[] 1\n", "unknown name \"foo\"", 1},
      {"param.x = s32[] 1\n", "unknown name \"param.x\"", 1},
      {"param.0 = s32[] 1\nparam.0 = s32[] 2\n", "param.0 given twice", 2},
      {"result = s32[] 1\nresult = s32[] 2\n", "result given twice", 2},
      {"compare = close\n", "compare must be \"equal\" or \"near\"", 1},
      {"error_spec = abs=1\n", "bad error_spec", 1},
      {"error_spec = abs=1 rel=x\n", "bad error_spec", 1},
      {"error_spec = abs=-1 rel=1\n", "bad error_spec", 1},
      {"error_spec = abs=1 abs=2 rel=1\n", "given twice", 1},
  };
  for (const BadCase& c : cases) {
    auto file = ParseLiteralFile(c.text, "f.txt");
    ASSERT_FALSE(file) << c.text;
    EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(file.error().where().file, "f.txt");
    EXPECT_EQ(file.error().where().line, c.line);
    std::string prefix = "f.txt:" + std::to_string(c.line) + ": ";
    EXPECT_TRUE(file.error().ToString().starts_with(prefix)) << file.error();
    EXPECT_NE(file.error().message.find(c.message), std::string::npos) << file.error();
  }
}

TEST(LiteralFileTest, EveryCorpusSidecarParses) {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(KILN_CORPUS_DIR) / "hlo")) {
    std::string path = entry.path().string();
    if (!path.ends_with(".expected.txt")) continue;
    ++count;
    auto file = ReadLiteralFile(path);
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_TRUE(file->result) << path;
    EXPECT_TRUE(file->Arguments()) << path;
  }
  EXPECT_EQ(count, 62);
}

TEST(LiteralFileTest, MissingFileNamesThePath) {
  auto file = ReadLiteralFile("/nonexistent/x.txt");
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("/nonexistent/x.txt"), std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime::io
