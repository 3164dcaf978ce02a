// Every module of the StableHLO corpus converts to a module that verifies,
// and its key does not change when its SSA values are renamed, when
// locations are added to it, or when it is printed as HLO text and parsed
// back (`kiln parse --print-hlo`). The corpus is walked in interleaved
// shards, one ctest entry each.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <unordered_map>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/stablehlo/stablehlo_test_corpus.h"

namespace kiln::stablehlo {
namespace {

using testing::Files;
using testing::KeyOf;

constexpr int kShards = 4;

// Every %name becomes %vN (in order of first appearance); result indices
// (%0#1) keep their index.
std::string RenameValues(const std::string& text) {
  static const std::regex kValue(R"(%[A-Za-z0-9_$.\-]+)");
  std::unordered_map<std::string, std::string> names;
  std::string out;
  auto it = std::sregex_iterator(text.begin(), text.end(), kValue);
  size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(text, last, static_cast<size_t>(m.position()) - last);
    auto [entry, added] = names.try_emplace(m.str(), "%v" + std::to_string(names.size()));
    out += entry->second;
    last = static_cast<size_t>(m.position() + m.length());
  }
  out.append(text, last, std::string::npos);
  return out;
}

// A location after every op and at the end of every function, half of them
// through #loc aliases defined at the end of the file.
std::string AddLocations(const std::string& text) {
  std::string out;
  size_t start = 0;
  int n = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    std::string trimmed = line.substr(0, line.find_last_not_of(" \t") + 1);
    const size_t first = trimmed.find_first_not_of(' ');
    const std::string head = first == std::string::npos ? "" : trimmed.substr(first);
    // The op ends here unless a region follows on the next line (while,
    // reduce with a reducer).
    size_t next_end = text.find('\n', end + 1);
    std::string next = end < text.size() ? text.substr(end + 1, next_end == std::string::npos ? std::string::npos
                                                                                                : next_end - end - 1)
                                         : std::string();
    next.erase(0, next.find_first_not_of(' '));
    // A line of a multi-line attribute dictionary (`name = #attr<...>`)
    // does not end an op.
    const size_t ident_end = head.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789");
    const bool attribute_line = ident_end != 0 && ident_end != std::string::npos &&
                                head.compare(ident_end, 3, " = ") == 0;
    const bool op_start = (head.starts_with("%") && head.find(" = ") != std::string::npos &&
                           head.find(" = ") == head.find(' ')) ||
                          head.starts_with("\"") || head.starts_with("}") || head.starts_with("stablehlo.") ||
                          head.starts_with("func.return") || head.starts_with("return") ||
                          head.starts_with("check.") || head.starts_with("chlo.");
    const bool op_line = !trimmed.empty() && !attribute_line && op_start && (trimmed.back() == '>' || trimmed.back() == ')') &&
                         !head.starts_with("//") && !head.starts_with("func.func") && !head.starts_with("module") &&
                         !head.starts_with("^") && !next.starts_with("cond") && !next.starts_with("tensor") && !next.starts_with("{") && !next.starts_with(":") && !next.starts_with("reducer") &&
                         trimmed.find("stablehlo.while(") == std::string::npos;
    const bool function_end = head == "}" && line.find_first_not_of(' ') == 2;
    if (op_line || function_end) {
      ++n;
      trimmed += n % 2 == 0 ? " loc(#loc" + std::to_string(n % 7) + ")"
                            : " loc(\"jax/file.py\":" + std::to_string(n) + ":" + std::to_string(n % 80) + ")";
    }
    out += (op_line || function_end) ? trimmed : line;
    out += '\n';
    start = end + 1;
  }
  for (int i = 0; i < 7; ++i) {
    out += "#loc" + std::to_string(i) + " = loc(\"f.py\":" + std::to_string(i + 1) + ":3 to :9)\n";
  }
  return out;
}

class StablehloCorpusKeyTest : public ::testing::TestWithParam<int> {};

TEST_P(StablehloCorpusKeyTest, KeysSurviveRenamingLocationsAndPrinting) {
  std::vector<std::filesystem::path> files = Files("jax");
  ASSERT_GE(files.size(), testing::kMinJaxModules) << "corpus missing at " << testing::StablehloRoot();
  for (const char* folder : {"dynamic", "quantized", "vhlo"}) {
    for (auto& f : Files(folder)) files.push_back(f);
  }
  int converted = 0;
  std::vector<std::string> failures;
  for (size_t i = static_cast<size_t>(GetParam()); i < files.size(); i += kShards) {
    const std::string name = files[i].parent_path().filename().string() + "/" + files[i].filename().string();
    const std::string text = hlo::testing::ReadTextFile(files[i]);
    Result<hlo::Hash128> key = KeyOf(text, name);
    if (!key) {
      // Only the quantized and dynamic programs may be refused (quant and
      // shape refinement have their own tests); every other must convert.
      if (name.starts_with("jax/") || name.starts_with("vhlo/")) failures.push_back(name + ": " + key.error().ToString());
      continue;
    }
    ++converted;
    auto module = ParseAnyModule(text, name);
    ASSERT_TRUE(module);
    auto reparsed = hlo::ParseModule(hlo::PrintModule(**module), name);
    if (!reparsed) {
      failures.push_back(name + ": printed HLO does not parse: " + reparsed.error().ToString());
      continue;
    }
    auto printed_key = hlo::FingerprintModule(**reparsed, {});
    if (!printed_key || printed_key->key != *key) failures.push_back(name + ": printed HLO has another key");
    Result<hlo::Hash128> renamed = KeyOf(RenameValues(text), name);
    if (!renamed || *renamed != *key) {
      failures.push_back(name + ": renamed values change the key" +
                         (renamed ? std::string() : ": " + renamed.error().ToString()));
    }
    Result<hlo::Hash128> located = KeyOf(AddLocations(text), name);
    if (!located || *located != *key) {
      failures.push_back(name + ": locations change the key" +
                         (located ? std::string() : ": " + located.error().ToString()));
    }
  }
  EXPECT_GT(converted, 400);
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Shards, StablehloCorpusKeyTest, ::testing::Range(0, kShards));

TEST(StablehloKeyTest, AttributeOrderAndSpellingDoNotChangeTheKey) {
  const char* a = R"(
    func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
      %0 = "stablehlo.compare"(%x, %y) {comparison_direction = #stablehlo<comparison_direction LT>,
                                        compare_type = #stablehlo<comparison_type FLOAT>}
          : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      return %0 : tensor<4xi1>
    })";
  const char* b = R"(
    func.func @main(%p: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xi1> {
      %r = stablehlo.compare LT, %p, %q, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      return %r : tensor<4xi1>
    })";
  const char* c = R"(
    func.func @main(%p: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xi1> {
      %r = stablehlo.compare GT, %p, %q, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      return %r : tensor<4xi1>
    })";
  auto ka = KeyOf(a), kb = KeyOf(b), kc = KeyOf(c);
  ASSERT_TRUE(ka && kb && kc);
  EXPECT_EQ(*ka, *kb);
  EXPECT_NE(*ka, *kc);
}

}  // namespace
}  // namespace kiln::stablehlo
