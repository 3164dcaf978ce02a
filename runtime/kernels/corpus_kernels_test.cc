// Runs the corpus modules whose expectation files test one heavy op (the
// entry root is a kernel of this library applied to parameters) and compares
// with the transcribed results.

#include <complex>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "compiler/hlo/test_corpus.h"
#include "runtime/kernels/test_eval_context.h"

namespace kiln::runtime {
namespace {

struct Expectation {
  std::map<int64_t, hlo::Literal> params;
  hlo::Literal result;
  bool near = false;
  double abs = 1e-5, rel = 1e-5;
};

std::optional<Expectation> ReadExpectation(const std::filesystem::path& path) {
  Expectation e;
  std::istringstream in(hlo::testing::ReadTextFile(path));
  std::string line;
  bool has_result = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 3);
    if (key.rfind("param.", 0) == 0) {
      auto lit = hlo::ParseLiteral(value);
      if (!lit) return std::nullopt;
      e.params[std::stoll(key.substr(6))] = std::move(*lit);
    } else if (key == "result") {
      auto lit = hlo::ParseLiteral(value);
      if (!lit) return std::nullopt;
      e.result = std::move(*lit);
      has_result = true;
    } else if (key == "compare") {
      e.near = value == "near";
    } else if (key == "error_spec") {
      std::sscanf(value.c_str(), "abs=%lf rel=%lf", &e.abs, &e.rel);
    }
  }
  if (!has_result) return std::nullopt;
  return e;
}

::testing::AssertionResult Matches(const hlo::Literal& got, const hlo::Literal& want,
                                   const Expectation& e) {
  if (!got.shape().Compatible(want.shape())) {
    return ::testing::AssertionFailure()
           << "shape " << got.shape().ToString() << " vs " << want.shape().ToString();
  }
  if (got.shape().IsTuple()) {
    for (size_t i = 0; i < got.tuple_elements().size(); ++i) {
      auto r = Matches(got.tuple_elements()[i], want.tuple_elements()[i], e);
      if (!r) return r;
    }
    return ::testing::AssertionSuccess();
  }
  if (!e.near) {
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << got.ToString() << " vs " << want.ToString();
  }
  for (int64_t i = 0; i < got.element_count(); ++i) {
    auto a = GetElementAs<std::complex<double>>(got, i);
    auto b = GetElementAs<std::complex<double>>(want, i);
    if (std::abs(a - b) > e.abs + e.rel * std::abs(b)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got.ToString() << " vs " << want.ToString();
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(CorpusKernelsTest, ExpectationsOfSingleHeavyOpModules) {
  std::map<std::string, int> ran;
  for (const auto& path : hlo::testing::CorpusModules()) {
    std::filesystem::path expected = path;
    expected.replace_extension(".expected.txt");
    if (!std::filesystem::exists(expected)) continue;
    auto module = hlo::ParseModule(hlo::testing::ReadTextFile(path));
    ASSERT_TRUE(module) << path << ": " << module.error().message;
    const hlo::Instruction& root = *(*module)->entry()->root();
    KernelFn kernel = FindHeavyKernel(root.opcode());
    if (kernel == nullptr) continue;
    auto e = ReadExpectation(expected);
    ASSERT_TRUE(e.has_value()) << expected;
    std::vector<const hlo::Literal*> args;
    for (const hlo::Instruction* op : root.operands()) {
      if (op->opcode() == hlo::Opcode::kConstant) {
        args.push_back(op->literal());
      } else if (op->opcode() == hlo::Opcode::kParameter &&
                 e->params.count(op->parameter_number())) {
        args.push_back(&e->params[op->parameter_number()]);
      } else {
        break;
      }
    }
    if (static_cast<int64_t>(args.size()) != root.operand_count()) continue;
    testing::ScalarTestContext ctx;
    auto got = kernel(root, args, ctx);
    ASSERT_TRUE(got) << path << ": " << got.error().message;
    EXPECT_TRUE(Matches(*got, e->result, *e)) << path.filename();
    ++ran[root.OpcodeText()];
  }
  for (const auto& [op, count] : ran) std::printf("  %s: %d modules\n", op.c_str(), count);
  EXPECT_GE(ran["gather"], 7);
  EXPECT_GE(ran["scatter"], 11);
  EXPECT_GE(ran["reduce"], 2);
  EXPECT_GE(ran["fft"], 21);
}

}  // namespace
}  // namespace kiln::runtime
