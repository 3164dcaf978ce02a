// kiln serve on StableHLO bodies: MLIR text (as jax.jit(f).lower(x)
// .as_text() prints it) and MLIR bytecode (a VHLO artifact, sent as
// application/octet-stream) compile, explain and run under the key the HLO
// text of the same program has, and bad MLIR is a 400 with line and column.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "tests/server_test_env.h"
#include "tests/stablehlo_test_modules.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::kJson;
using testing::kText;
using testing::ServerEnv;

using ::kiln::testing::kJaxAdd;

constexpr std::string_view kOctets = "Content-Type: application/octet-stream\r\n";

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(ServerStablehloTest, StableHloTextCompilesRunsAndSharesTheKeyOfItsHlo) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  auto compiled = env.Call("POST", "/v1/compile?chip=v5e", kJaxAdd, kText);
  ASSERT_EQ(compiled.status, 200) << compiled.body;
  const json a = ServerEnv::Json(compiled);
  const std::string key = a["key"];
  EXPECT_EQ(a["cache"], "miss");

  const std::string path = env.Write("f.mlir", kJaxAdd);
  testing::CommandResult printed = testing::RunCommand(std::string(KILN_BINARY) + " fingerprint --chip v5e " + path);
  ASSERT_EQ(printed.exit_code, 0) << printed.out;
  EXPECT_EQ(printed.out.substr(0, 32), key);

  // The HLO text `kiln parse --print-hlo` prints for it hits the same entry.
  testing::CommandResult hlo = testing::RunCommand(std::string(KILN_BINARY) + " parse --print-hlo " + path);
  ASSERT_EQ(hlo.exit_code, 0) << hlo.out;
  ASSERT_NE(hlo.out.find("HloModule"), std::string::npos) << hlo.out;
  const json b = ServerEnv::Json(env.Call("POST", "/v1/compile", json{{"hlo", hlo.out}, {"chip", "v5e"}}.dump(), kJson));
  EXPECT_EQ(b["key"], key) << b;
  EXPECT_EQ(b["cache"], "hit") << b;

  auto run = env.Call("POST", "/v1/executables/" + key + "/execute",
                      R"({"inputs": [{"shape": [4], "dtype": "f32", "data": [1,2,3,4]},)"
                      R"( {"shape": [4], "dtype": "f32", "data": [10,20,30,40]}]})",
                      kJson);
  ASSERT_EQ(run.status, 200) << run.body;
  const json outputs = ServerEnv::Json(run)["outputs"];
  ASSERT_EQ(outputs.size(), 1u) << run.body;
  EXPECT_EQ(outputs[0]["data"], json::parse("[11, 44, 99, 176]")) << run.body;  // (a + b) * a
}

TEST(ServerStablehloTest, AVhloArtifactHasTheKeyOfItsSourceText) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string source = std::string(KILN_STABLEHLO_DIR) + "/vhlo/stablehlo_legalize_to_vhlo.1_0_0.mlir";
  auto text = env.Call("POST", "/v1/explain?chip=v5e", ReadBytes(source), kText);
  ASSERT_EQ(text.status, 200) << text.body.substr(0, 400);
  auto bytecode = env.Call("POST", "/v1/explain?chip=v5e", ReadBytes(source + ".bc"), kOctets);
  ASSERT_EQ(bytecode.status, 200) << bytecode.body.substr(0, 400);
  const std::string key = ServerEnv::Json(text)["key"];
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(ServerEnv::Json(bytecode)["key"], key);

  // A damaged artifact is refused as a bad module, and the server serves on.
  const std::string bytes = ReadBytes(source + ".bc");
  auto cut = env.Call("POST", "/v1/compile", bytes.substr(0, bytes.size() / 2), kOctets);
  EXPECT_EQ(cut.status, 400) << cut.body;
  EXPECT_EQ(ServerEnv::Json(cut)["error"]["code"], "hlo_parse_error") << cut.body;
  EXPECT_NE(cut.body.find("MLIR bytecode"), std::string::npos) << cut.body;
  EXPECT_EQ(env.Call("GET", "/healthz").status, 200);
}

// A module with dynamic dimensions compiles once ?arg_shapes= refines it,
// under the key `kiln compile --arg-shapes` gives it; without them, or with
// shapes that contradict the module, it is refused naming why.
TEST(ServerStablehloTest, DynamicDimensionsAreRefinedFromArgShapesOrRefused) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  const std::string path = std::string(KILN_STABLEHLO_DIR) + "/dynamic/add_dynamic.mlir";
  const std::string module = ReadBytes(path);

  auto unrefined = env.Call("POST", "/v1/compile", module, kText);
  EXPECT_EQ(unrefined.status, 400) << unrefined.body;
  EXPECT_EQ(ServerEnv::Json(unrefined)["error"]["code"], "dynamic_dimension") << unrefined.body;
  EXPECT_NE(unrefined.body.find("dimension 0 of parameter 1 (f32[?,4])"), std::string::npos) << unrefined.body;
  EXPECT_NE(unrefined.body.find("arg_shapes"), std::string::npos) << unrefined.body;

  const std::string shapes = "s64[],f32[3,4],f32[2,3,4]";
  auto refined = env.Call("POST", "/v1/compile?arg_shapes=" + shapes, module, kText);
  ASSERT_EQ(refined.status, 200) << refined.body;
  const std::string key = ServerEnv::Json(refined)["key"];
  testing::CommandResult cli =
      testing::RunCommand(std::string(KILN_BINARY) + " compile --json " + path + " --arg-shapes '" + shapes + "'");
  ASSERT_EQ(cli.exit_code, 0) << cli.out;
  EXPECT_EQ(json::parse(cli.out)["key"], key);
  // The JSON form says the same; explain keys the refined module too.
  const json again =
      ServerEnv::Json(env.Call("POST", "/v1/compile", json{{"hlo", module}, {"arg_shapes", shapes}}.dump(), kJson));
  EXPECT_EQ(again["key"], key) << again;
  EXPECT_EQ(again["cache"], "hit") << again;
  auto explained = env.Call("POST", "/v1/explain?arg_shapes=" + shapes, module, kText);
  EXPECT_EQ(ServerEnv::Json(explained)["key"], key) << explained.body;

  // add_dynamic broadcasts its f32[?,4] argument to [2,?,4] and adds.
  std::string inputs = R"({"inputs": [{"shape": [], "dtype": "s64", "data": [3]},)"
                       R"( {"shape": [3,4], "dtype": "f32", "data": [0,1,2,3,4,5,6,7,8,9,10,11]},)"
                       R"( {"shape": [2,3,4], "dtype": "f32", "data": [)";
  for (int i = 0; i < 24; ++i) inputs += (i ? "," : "") + std::string("100");
  inputs += "]}]}";
  auto run = env.Call("POST", "/v1/executables/" + key + "/execute", inputs, kJson);
  ASSERT_EQ(run.status, 200) << run.body;
  const json data = ServerEnv::Json(run)["outputs"][0]["data"];
  ASSERT_EQ(data.size(), 24u) << run.body;
  EXPECT_EQ(data[0], 100);
  EXPECT_EQ(data[13], 101);  // second copy, element 1

  auto contradicting = env.Call("POST", "/v1/compile?arg_shapes=s64[],f32[3,4],f32[3,4]", module, kText);
  EXPECT_EQ(contradicting.status, 400) << contradicting.body;
  EXPECT_EQ(ServerEnv::Json(contradicting)["error"]["code"], "invalid_options") << contradicting.body;
  EXPECT_NE(contradicting.body.find("contradicts"), std::string::npos) << contradicting.body;
  auto unparsable = env.Call("POST", "/v1/compile?arg_shapes=f32[3", module, kText);
  EXPECT_EQ(unparsable.status, 400) << unparsable.body;
  EXPECT_EQ(ServerEnv::Json(unparsable)["error"]["code"], "invalid_options") << unparsable.body;
}

TEST(ServerStablehloTest, MalformedMlirIs400WithLineAndColumn) {
  ServerEnv env;
  ASSERT_TRUE(env.ok());
  std::string bad = kJaxAdd;
  bad.replace(bad.find("stablehlo.multiply %0, %arg0"), 28, "stablehlo.multiply %0 %arg0");
  auto response = env.Call("POST", "/v1/compile", bad, kText);
  EXPECT_EQ(response.status, 400) << response.body;
  const json error = ServerEnv::Json(response)["error"];
  EXPECT_EQ(error["code"], "hlo_parse_error") << response.body;
  EXPECT_EQ(error["line"], 5) << response.body;
  EXPECT_TRUE(error["column"].is_number()) << response.body;
}

}  // namespace
}  // namespace kiln::api
