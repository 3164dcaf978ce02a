// `kiln` on StableHLO modules end to end: the key of MLIR text and of the
// HLO `kiln parse --print-hlo` prints for it, errors with line:col, and
// `kiln run` counting the check dialect's outcomes on the compiled program.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/kiln_run_fixture.h"
#include "tests/stablehlo_test_modules.h"

namespace {

using kiln::testing::RunKiln;
using kiln::testing::RunResult;
using kiln::testing::kJaxAdd;

// A scratch directory and file writer (kiln_run_fixture.h).
class KilnStablehloCliTest : public kiln::testing::KilnRunTest {};


// The same program in the generic form, other value names, no locations.
constexpr const char* kGenericAdd = R"(module {
  func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %sum = "stablehlo.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %product = "stablehlo.multiply"(%sum, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%product) : (tensor<4xf32>) -> ()
  }
}
)";

std::string Key(const RunResult& r) { return r.out.substr(0, 32); }

TEST_F(KilnStablehloCliTest, TextFormsAndPrintedHloShareOneKey) {
  const std::string pretty = Write("pretty.mlir", kJaxAdd);
  const RunResult a = RunKiln("fingerprint " + pretty);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const RunResult b = RunKiln("fingerprint " + Write("generic.mlir", kGenericAdd));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(Key(a), Key(b));
  const RunResult printed = RunKiln("parse --print-hlo " + pretty);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("HloModule"), std::string::npos) << printed.out;
  // The printed HLO has the key of its source, whatever its file is named.
  const RunResult c = RunKiln("fingerprint " + Write("printed.txt", printed.out));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(Key(a), Key(c));
  // Another program has another key.
  std::string other = kGenericAdd;
  other.replace(other.find("\"stablehlo.multiply\""), 20, "\"stablehlo.subtract\"");
  const RunResult d = RunKiln("fingerprint " + Write("other.mlir", other));
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(Key(a), Key(d));
}

TEST_F(KilnStablehloCliTest, ErrorsNameLineAndColumnOfTheMlirText) {
  const std::string bad = Write("bad.mlir",
                                "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                                "  %0 = stablehlo.add %a, %nope : tensor<4xf32>\n"
                                "  return %0 : tensor<4xf32>\n}\n");
  const RunResult r = RunKiln("parse " + bad);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(bad + ":2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("%nope"), std::string::npos) << r.err;
}

constexpr const char* kChecks = R"(func.func @main() {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = stablehlo.add %x, %x : tensor<2xf32>
  "check.expect_eq_const"(%y) <{value = dense<[2.0, 4.0]> : tensor<2xf32>}> : (tensor<2xf32>) -> ()
  stablehlo.custom_call @check.expect_close(%y, %x) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  func.return
}
)";

TEST_F(KilnStablehloCliTest, RunCountsChecksAndFailsNamingTheFailedOne) {
  const std::string path = Write("checks.mlir", kChecks);
  const RunResult r = RunKiln("run --json " + path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("check.expect_close at line 5"), std::string::npos) << r.err;
  const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.out;
  EXPECT_EQ(out["checks"]["passed"], 1) << r.out;
  EXPECT_EQ(out["checks"]["failed"], 1) << r.out;
  ASSERT_EQ(out["checks"]["failures"].size(), 1u) << r.out;
  EXPECT_EQ(out["checks"]["failures"][0]["line"], 5) << r.out;
  // The compiled program ran them (an executable key), not only the evaluator.
  EXPECT_TRUE(out.contains("key")) << r.out;
}

TEST_F(KilnStablehloCliTest, PassingChecksExitZeroCompiledAndDirect) {
  std::string passing = kChecks;
  passing.replace(passing.find("(%y, %x)"), 8, "(%y, %y)");
  const std::string path = Write("passing.mlir", passing);
  for (const char* mode : {"", "--direct "}) {
    const RunResult r = RunKiln(std::string("run --json ") + mode + path);
    EXPECT_EQ(r.exit_code, 0) << mode << r.err;
    const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(out.is_discarded()) << r.out;
    EXPECT_EQ(out["checks"]["passed"], 2) << r.out;
    EXPECT_EQ(out["checks"]["failed"], 0) << r.out;
  }
}

// jnp.arange(b) + x for x: f32[b], with the dimension argument b first.
constexpr const char* kDynamic = R"(module @jit_f attributes {jax.uses_shape_polymorphism = true} {
  func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
    %0 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
    %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.dynamic_iota %1, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
    %3 = stablehlo.add %2, %arg1 : tensor<?xf32>
    return %3 : tensor<?xf32>
  }
}
)";

TEST_F(KilnStablehloCliTest, DynamicShapesAreRefinedFromTheInputs) {
  const std::string path = Write("dynamic.mlir", kDynamic);
  const RunResult r = RunKiln("run --print-literals " + path + " --input-literals " +
                              Write("in.txt", "param.0 = s64[] 3\nparam.1 = f32[3] {10, 20, 30}\n"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("f32[3] {10, 21, 32}"), std::string::npos) << r.out;
}

TEST_F(KilnStablehloCliTest, RandomInputsOfDynamicModulesTakeArgShapes) {
  const std::string path = Write("dynamic.mlir", kDynamic);
  const RunResult refused = RunKiln("run --random-inputs 1 " + path);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("dimension 0 of parameter 1 (f32[?]) is dynamic"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--arg-shapes"), std::string::npos) << refused.err;
  // The dimension argument takes the size given to the dynamic dimension.
  const RunResult r = RunKiln("run --json --random-inputs 1 --arg-shapes 's64[],f32[5]' " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"shape\":\"f32[5]\""), std::string::npos) << r.out;
}

TEST_F(KilnStablehloCliTest, PrewarmCompilesStableHloBesideHloAndNamesWhatItCannot) {
  std::filesystem::create_directories(Path("dump"));
  Write("dump/f.mlir", kJaxAdd);
  Write("dump/dynamic.mlir", kDynamic);
  const RunResult r = RunKiln("prewarm " + Path("dump") + " --db " + Path("store.db") + " --json");
  const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.out << r.err;
  EXPECT_EQ(out["found"], 2) << r.out;
  EXPECT_EQ(out["compiled"], 1) << r.out;
  EXPECT_EQ(out["failed"], 1) << r.out;
  EXPECT_NE(r.out.find("is dynamic"), std::string::npos) << r.out;
}

// A module scaled by a splat constant of `value`.
std::string StablehloScaled(const std::string& value) {
  return "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %c = stablehlo.constant dense<" + value +
         "> : tensor<4xf32>\n  %y = stablehlo.multiply %x, %c : tensor<4xf32>\n  return %y : tensor<4xf32>\n}\n";
}

// An entry compiled from StableHLO keeps that text, and explain reads it
// as the compile did: a miss names the changed instruction (it parsed the
// kept text as HLO, failed, and said only "entry body differs").
TEST_F(KilnStablehloCliTest, ExplainNamesTheChangeAgainstAnEntryCompiledFromStableHlo) {
  const RunResult prewarm = RunKiln("prewarm " + Write("scaled.mlir", StablehloScaled("2.000000e+00")) + " --db " +
                                    Path("store.db"));
  ASSERT_EQ(prewarm.exit_code, 0) << prewarm.err;
  const RunResult r = RunKiln("inspect explain " + Write("rescaled.mlir", StablehloScaled("3.000000e+00")) + " --db " +
                              Path("store.db") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json answer = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << r.out;
  EXPECT_EQ(answer.value("cached_text_kept", false), true) << r.out;
  ASSERT_EQ(answer["changes"].size(), 1u) << r.out;
  EXPECT_EQ(answer["changes"][0]["request"], "%" + answer["changes"][0]["instruction"].get<std::string>() +
                                                 " = f32[4] constant({3, 3, 3, 3})")
      << r.out;
  EXPECT_EQ(answer["changes"][0]["cached"], "%" + answer["changes"][0]["instruction"].get<std::string>() +
                                                " = f32[4] constant({2, 2, 2, 2})")
      << r.out;
}

// A VHLO artifact (stablehlo-translate --serialize) and its source.
TEST_F(KilnStablehloCliTest, BytecodeArtifactsHaveTheKeyOfTheirSource) {
  const std::string source = std::string(KILN_STABLEHLO_DIR) + "/vhlo/stablehlo_legalize_to_vhlo.1_0_0.mlir";
  const RunResult r = RunKiln("fingerprint " + source + " " + source + ".bc");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t second = r.out.find('\n');
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(0, 32), r.out.substr(second + 1, 32)) << r.out;
  // A damaged artifact is refused by name.
  std::ifstream in(source + ".bc", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = Path("cut.mlir.bc");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const RunResult bad = RunKiln("fingerprint " + cut);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("MLIR bytecode"), std::string::npos) << bad.err;
}

}  // namespace
