// End-to-end tests of `kiln run`'s values: inputs from safetensors, literal
// files and a random seed; outputs printed, as JSON and written to
// safetensors; errors for missing or misshapen inputs. Drives the real
// binary. Compilation and device time: kiln_run_device_test.cc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/io/safetensors.h"
#include "tests/kiln_run_fixture.h"

namespace kiln {
namespace {

using testing::ExpectError;
using testing::KilnRunTest;
using testing::RunResult;

// Output 0 is a + b, output 1 is a.
constexpr const char* kAddModule = R"(HloModule add_pair
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  sum = f32[4] add(a, b)
  ROOT out = (f32[4], f32[4]) tuple(sum, a)
}
)";

constexpr const char* kInputs =
    "param.0 = f32[4] {1, 2, 3, 4}\n"
    "param.1 = f32[4] {0.5, 0.5, 0.5, 0.5}\n";

TEST_F(KilnRunTest, LiteralInputsPrintShapesAndSummaries) {
  RunResult r = Run(Write("m.hlo", kAddModule) + " --input-literals " + Write("in.txt", kInputs));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output 0: f32[4]\n  min 1.5 max 4.5 mean 3\n  first: 1.5, 2.5, 3.5, 4.5"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("output 1: f32[4]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("{1.5"), std::string::npos) << "literals printed without --print-literals";
}

TEST_F(KilnRunTest, PrintLiterals) {
  RunResult r = Run(Write("m.hlo", kAddModule) + " --print-literals --input-literals " +
                    Write("in.txt", kInputs));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("f32[4] {1.5, 2.5, 3.5, 4.5}\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f32[4] {1, 2, 3, 4}\n"), std::string::npos) << r.out;
}

TEST_F(KilnRunTest, JsonOutput) {
  RunResult r =
      Run(Write("m.hlo", kAddModule) + " --json --input-literals " + Write("in.txt", kInputs));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["module"], "add_pair");
  ASSERT_EQ(json["outputs"].size(), 2u);
  EXPECT_EQ(json["outputs"][0]["name"], "0");
  EXPECT_EQ(json["outputs"][0]["shape"], "f32[4]");
  EXPECT_DOUBLE_EQ(json["outputs"][0]["max"].get<double>(), 4.5);
  EXPECT_DOUBLE_EQ(json["outputs"][1]["mean"].get<double>(), 2.5);
  EXPECT_TRUE(json["eval_ms"].is_number());
}

// 0/0 everywhere: the summary says every value is NaN instead of printing
// min, max and mean as 0.
TEST_F(KilnRunTest, AllNaNOutputsAreSummarizedAsSuch) {
  const std::string module = Write("nan.hlo", R"(HloModule all_nan
ENTRY e {
  z = f32[3] constant({0, 0, 0})
  ROOT q = f32[3] divide(z, z)
})");
  RunResult text = Run(module);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("all 3 values are NaN"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("mean 0"), std::string::npos) << text.out;
  RunResult json_run = Run(module + " --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  auto json = nlohmann::json::parse(json_run.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << json_run.out;
  EXPECT_EQ(json["outputs"][0]["nan_count"], 3);
  EXPECT_TRUE(json["outputs"][0]["mean"].is_null()) << json_run.out;
  EXPECT_TRUE(json["outputs"][0]["min"].is_null()) << json_run.out;
}

TEST_F(KilnRunTest, SafetensorsInputsAndOutputsRoundTrip) {
  std::string module = Write("m.hlo", kAddModule);
  std::string inputs =
      WriteTensors("in.safetensors", {{"0", "f32[4] {1, 2, 3, 4}"}, {"1", "f32[4] {4, 3, 2, 1}"}});
  std::string outputs = Path("out.safetensors");
  RunResult r = Run(module + " --inputs " + inputs + " --outputs " + outputs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto written = runtime::io::ReadSafetensorsFile(outputs);
  ASSERT_TRUE(written) << written.error().message;
  ASSERT_EQ(written->tensors.size(), 2u);
  ASSERT_NE(written->Find("0"), nullptr);
  EXPECT_EQ(written->Find("0")->ToString(), "f32[4] {5, 5, 5, 5}");
  EXPECT_EQ(written->Find("1")->ToString(), "f32[4] {1, 2, 3, 4}");

  // The outputs are valid inputs again: (5+1, 5+2, ...).
  RunResult again = Run(module + " --print-literals --inputs " + outputs);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("f32[4] {6, 7, 8, 9}"), std::string::npos) << again.out;
}

TEST_F(KilnRunTest, RandomInputsAreDeterministicPerSeed) {
  std::string module = Write("m.hlo", kAddModule);
  RunResult a = Run(module + " --print-literals --random-inputs 42");
  RunResult b = Run(module + " --print-literals --random-inputs 42");
  RunResult c = Run(module + " --print-literals --random-inputs 43");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto literals = [](const std::string& out) { return out.substr(0, out.rfind("eval ")); };
  EXPECT_EQ(literals(a.out), literals(b.out));
  EXPECT_NE(literals(a.out), literals(c.out));
}

TEST_F(KilnRunTest, ModuleWithoutParametersNeedsNoInputs) {
  RunResult r =
      Run(Write("c.hlo", "HloModule c\nENTRY e {\n  ROOT k = s32[3] constant({7, 8, 9})\n}\n") +
          " --print-literals");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output 0: s32[3]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s32[3] {7, 8, 9}"), std::string::npos) << r.out;
}

TEST_F(KilnRunTest, ParametersWithoutInputsSayWhichFlagToPass) {
  ExpectError(Run(Write("m.hlo", kAddModule)),
              "has 2 parameter(s); pass --inputs F.safetensors, --input-literals F.txt or "
              "--random-inputs SEED");
}

TEST_F(KilnRunTest, MissingTensorIsNamed) {
  std::string inputs = WriteTensors("in.safetensors", {{"0", "f32[4] {1, 2, 3, 4}"}});
  ExpectError(Run(Write("m.hlo", kAddModule) + " --inputs " + inputs),
              "parameter 1 needs a tensor named \"1\" (f32[4])");
}

TEST_F(KilnRunTest, MisshapenTensorIsNamed) {
  std::string inputs =
      WriteTensors("in.safetensors", {{"0", "f32[4] {1, 2, 3, 4}"}, {"1", "f32[3] {1, 2, 3}"}});
  ExpectError(Run(Write("m.hlo", kAddModule) + " --inputs " + inputs),
              "parameter 1 tensor \"1\" must be f32[4], got f32[3]");
}

TEST_F(KilnRunTest, MisshapenLiteralIsNamed) {
  std::string inputs =
      Write("in.txt", "param.0 = f32[4] {1, 2, 3, 4}\nparam.1 = s32[4] {1, 2, 3, 4}\n");
  ExpectError(Run(Write("m.hlo", kAddModule) + " --input-literals " + inputs),
              "in.txt: parameter 1 must be f32[4], got s32[4]");
}

TEST_F(KilnRunTest, CorruptSafetensorsIsRejected) {
  std::string inputs = Write("bad.safetensors", "\x08\x00\x00\x00\x00\x00\x00\x00{\"0\":1}");
  ExpectError(Run(Write("m.hlo", kAddModule) + " --inputs " + inputs),
              "bad.safetensors: safetensors:");
}

TEST_F(KilnRunTest, MissingFilesAreNamed) {
  ExpectError(Run(Path("nope.hlo")), "nope.hlo: cannot open");
  ExpectError(Run(Write("m.hlo", kAddModule) + " --inputs " + Path("none.safetensors")),
              "none.safetensors: cannot open");
}

TEST_F(KilnRunTest, ConflictingInputFlagsAreRejected) {
  RunResult r = Run(Write("m.hlo", kAddModule) + " --random-inputs 1 --input-literals " +
                    Write("in.txt", kInputs));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
}


// Found by a new user: `kiln run` of a Neuron graph failed 4.8 s in, at an
// AwsNeuronGelu custom call; a run that cannot compute its values is now
// refused before it starts, naming the call, and is still timed.
TEST_F(KilnRunTest, ACustomCallTheEvaluatorLacksIsRefusedBeforeTheRunStarts) {
  const std::string module = Write("vendor.hlo", R"(HloModule vendor
ENTRY e {
  p = f32[8,128] parameter(0)
  e = f32[8,128] exponential(p)
  ROOT g = f32[8,128] custom-call(e), custom_call_target="AwsNeuronGelu"
}
)");
  for (const std::string flags : {" --random-inputs 1", " --direct --random-inputs 1"}) {
    RunResult r = Run(module + flags);
    EXPECT_NE(r.exit_code, 0) << flags;
    EXPECT_NE(r.err.find("custom-call target \"AwsNeuronGelu\""), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--timing-only"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("output 0"), std::string::npos) << r.out;
  }
  RunResult timed = Run(module + " --timing-only");
  EXPECT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_NE(timed.out.find("device time on v5e"), std::string::npos) << timed.out;
}

}  // namespace
}  // namespace kiln
