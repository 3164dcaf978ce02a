// Programs for slices over HTTP: /v1/compile?topology=2x2 partitions a
// module traced with global shapes and shardings into its per-chip program
// (the topology is part of the key); an execute runs it on a whole pool
// slice of that shape, taking the module's global inputs and answering its
// global result, equal to evaluating the module whole.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "runtime/eval/evaluator.h"
#include "tests/server_test_env.h"

namespace kiln::api {
namespace {

using nlohmann::json;
using testing::ServerEnv;

using testing::kText;
using testing::kJson;

// XLA's collective_ops_e2e_test DotContractingNonContractingAndContractingNonContracting.
constexpr char kShardedDot[] = R"(HloModule module, num_partitions=4

ENTRY entry {
  lhs = f32[16,8]{1,0} parameter(0), sharding={devices=[2,2]<=[4]}
  rhs = f32[4,8]{1,0} parameter(1), sharding={devices=[2,2]<=[4]}
  ROOT dot = f32[16,4]{1,0} dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={1}, sharding={devices=[2,2]<=[4]}
}
)";

std::vector<float> Values(int n, int seed) {
  std::vector<float> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<float>(((i * 7 + seed * 13) % 17) - 8) / 4.0f);
  return out;
}

ApiOptions SlicePool() {
  ApiOptions options;
  options.pool_spec = "v5e:2x2";
  return options;
}

TEST(ServerSliceTest, AShardedModuleCompiledForASliceRunsThereWithTheWholeModulesValues) {
  ServerEnv env(SlicePool());
  ASSERT_TRUE(env.ok());
  auto compiled = env.Call("POST", "/v1/compile?topology=2x2", kShardedDot, kText);
  ASSERT_EQ(compiled.status, 200) << compiled.body;
  const std::string key = ServerEnv::Json(compiled)["key"];
  // Without ?topology a module for 4 devices compiles for its own 4: the
  // same program and key (it used to compile for one chip), and a topology
  // of another chip count is refused (below).
  auto own = env.Call("POST", "/v1/compile", kShardedDot, kText);
  ASSERT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(ServerEnv::Json(own)["key"], key);
  EXPECT_EQ(ServerEnv::Json(own)["options"]["topology"], "2x2") << own.body;
  auto other = env.Call("POST", "/v1/compile?topology=1x4", kShardedDot, kText);
  ASSERT_EQ(other.status, 200) << other.body;
  EXPECT_NE(ServerEnv::Json(other)["key"], key) << "the topology is part of the key";

  const std::vector<float> lhs = Values(16 * 8, 1), rhs = Values(4 * 8, 2);
  json inputs = {{"inputs",
                  {{{"shape", {16, 8}}, {"dtype", "f32"}, {"data", lhs}},
                   {{"shape", {4, 8}}, {"dtype", "f32"}, {"data", rhs}}}}};
  auto ran = env.Call("POST", "/v1/executables/" + key + "/execute", inputs.dump(), kJson);
  ASSERT_EQ(ran.status, 200) << ran.body;
  const json answer = json::parse(ran.body);
  const std::vector<float> got = answer["outputs"][0]["data"].get<std::vector<float>>();

  auto module = hlo::ParseModule(kShardedDot);
  ASSERT_TRUE(module);
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal(hlo::Shape(hlo::PrimitiveType::kF32, {16, 8})));
  args.push_back(hlo::Literal(hlo::Shape(hlo::PrimitiveType::kF32, {4, 8})));
  for (size_t i = 0; i < lhs.size(); ++i) args[0].Set<float>(i, lhs[i]);
  for (size_t i = 0; i < rhs.size(); ++i) args[1].Set<float>(i, rhs[i]);
  auto whole = runtime::EvaluateModule(**module, args);
  ASSERT_TRUE(whole) << whole.error().ToString();
  ASSERT_EQ(got.size(), 64u) << ran.body.substr(0, 300);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], whole->Get<float>(i), 1e-4) << i;
  EXPECT_GT(answer["device_us"].get<double>(), 0);

  // Timing without values prices the slice's collectives over ICI.
  auto timed = env.Call("POST", "/v1/executables/" + key + "/time");
  ASSERT_EQ(timed.status, 200) << timed.body;
  EXPECT_EQ(ServerEnv::Json(timed)["topology"], "2x2") << timed.body.substr(0, 400);
  // The trace has a track per chip of the slice, each with every kernel.
  auto trace = env.Call("GET", "/v1/executables/" + key + "/trace");
  ASSERT_EQ(trace.status, 200) << trace.body.substr(0, 300);
  std::set<int> tracks;
  size_t kernel_events = 0;
  const json events = json::parse(trace.body)["traceEvents"];
  for (const json& event : events) {
    if (event.value("ph", "") != "X") continue;
    tracks.insert(event["pid"].get<int>());
    ++kernel_events;
  }
  EXPECT_EQ(tracks, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(kernel_events, 4 * ServerEnv::Json(timed)["kernels"].size());
}

// Found by a hostile probe: collectives naming devices outside their slice
// compiled and stored, then failed at execute (500) or timed anyway. Now
// the compile refuses them, naming the instruction.
TEST(ServerSliceTest, CollectivesOutsideTheirSliceAreRefusedAtCompile) {
  ServerEnv env(SlicePool());
  ASSERT_TRUE(env.ok());
  const std::string header = "HloModule per_chip, num_partitions=4\n\nadd {\n  a = f32[] parameter(0)\n"
                             "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n"
                             "  p = f32[8]{0} parameter(0)\n  ROOT r = f32[8]{0} ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"all-reduce(p), channel_id=1, replica_groups={{0,1,2,3,4,5}}, use_global_device_ids=true, to_apply=add",
       "names id 4, outside the slice"},
      {"all-reduce(p), channel_id=1, replica_groups={{0,1},{1,2,3}}, use_global_device_ids=true, to_apply=add",
       "twice"},
      {"all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add",
       "every id must be in one group"},
      {"collective-permute(p), channel_id=1, source_target_pairs={{0,9},{9,0}}", "outside the slice"},
  };
  for (const auto& [op, expected] : cases) {
    auto compiled = env.Call("POST", "/v1/compile?topology=2x2", header + op + "\n}\n", kText);
    EXPECT_EQ(compiled.status, 422) << op << ": " << compiled.body;
    EXPECT_EQ(ServerEnv::Json(compiled)["error"]["code"], "invalid_collective") << compiled.body;
    EXPECT_NE(compiled.body.find("%r"), std::string::npos) << compiled.body;
    EXPECT_NE(compiled.body.find(expected), std::string::npos) << compiled.body;
  }
  auto entries = ServerEnv::Json(env.Call("GET", "/v1/entries"));
  EXPECT_TRUE(entries["entries"].empty()) << "a refused program was stored: " << entries.dump();
}

TEST(ServerSliceTest, ATopologyThePoolLacksOrTheChipCannotHaveIsAClearError) {
  ServerEnv env(SlicePool());
  ASSERT_TRUE(env.ok());
  auto bad = env.Call("POST", "/v1/compile?topology=3x", kShardedDot, kText);
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(ServerEnv::Json(bad)["error"]["code"], "invalid_options") << bad.body;
  auto three_d = env.Call("POST", "/v1/compile?topology=2x2x1", kShardedDot, kText);
  EXPECT_EQ(three_d.status, 400) << three_d.body;
  // A module traced for 4 devices, compiled for 8 chips: refused naming the counts.
  auto wrong = env.Call("POST", "/v1/compile?topology=2x4", kShardedDot, kText);
  EXPECT_EQ(wrong.status, 422) << wrong.body;
  EXPECT_EQ(ServerEnv::Json(wrong)["error"]["code"], "topology_mismatch") << wrong.body;
  EXPECT_NE(wrong.body.find("a program for 4 devices"), std::string::npos) << wrong.body;
  EXPECT_NE(wrong.body.find("the 2x4 slice has 8 chips"), std::string::npos) << wrong.body;

  // A per-chip program for 1x2 compiles, but the pool has no 1x2 slice.
  const std::string per_chip = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT g = f32[4] all-gather(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
})";
  auto compiled = env.Call("POST", "/v1/compile?topology=1x2", per_chip, kText);
  ASSERT_EQ(compiled.status, 200) << compiled.body;
  auto ran = env.Call("POST", "/v1/executables/" + std::string(ServerEnv::Json(compiled)["key"]) + "/execute",
                      R"({"inputs": [{"shape": [2], "dtype": "f32", "data": [1, 2]}]})", kJson);
  EXPECT_NE(ran.status, 200);
  EXPECT_NE(ran.body.find("no v5e slice of topology 1x2"), std::string::npos) << ran.body;
}

}  // namespace
}  // namespace kiln::api
