// End-to-end tests of `kiln parse`, `kiln fingerprint`, the fusion report
// of `kiln compile`, `kiln tune` and `kiln inspect` over a store made here:
// output format, exit codes and error messages, as a user sees them.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cache/cache_store.h"
#include "tests/run_kiln.h"
#include "tests/tunable_module.h"

namespace {

namespace fs = std::filesystem;

using kiln::testing::RunKiln;
using kiln::testing::RunResult;

class KilnCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

constexpr const char* kAdd = R"(HloModule add
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT c = f32[4] add(a, b)
}
)";

// Same graph: other names, metadata, whitespace, a comment.
constexpr const char* kAddRenamed = R"(HloModule other_name
// a comment
ENTRY %entry_comp {
  %x = f32[4]{0} parameter(0), metadata={op_name="x"}
  %y = f32[4] parameter(1)
  ROOT %sum   =  f32[4] add(%x, %y)
})";

TEST_F(KilnCliTest, VersionPrintsTheReleaseAndCompilerFormat) {
  RunResult r = RunKiln("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(^kiln \d+\.\d+\.\d+ \(compiler format \d+, kernels (baseline|avx2|avx512), \d+ host cores?\)\n$)")))
      << r.out;
}

// --version names the kernels' ISA level, which KILN_ISA lowers.
TEST_F(KilnCliTest, VersionNamesTheKernelsIsaLevel) {
  setenv("KILN_ISA", "baseline", 1);
  RunResult forced = RunKiln("--version");
  unsetenv("KILN_ISA");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find(", kernels baseline, "), std::string::npos) << forced.out;

  setenv("KILN_ISA", "sse9", 1);
  RunResult bad = RunKiln("--version");
  unsetenv("KILN_ISA");
  EXPECT_EQ(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("unknown ISA level 'sse9'"), std::string::npos) << bad.err;
}

// --version names the host cores large kernels share, which
// KILN_HOST_THREADS sets.
TEST_F(KilnCliTest, VersionNamesTheHostCores) {
  setenv("KILN_HOST_THREADS", "3", 1);
  RunResult three = RunKiln("--version");
  setenv("KILN_HOST_THREADS", "1", 1);
  RunResult one = RunKiln("--version");
  unsetenv("KILN_HOST_THREADS");
  EXPECT_NE(three.out.find(", 3 host cores)"), std::string::npos) << three.out;
  EXPECT_NE(one.out.find(", 1 host core)"), std::string::npos) << one.out;
}

// A mistyped command or option exits 2 with the name it most likely meant.
TEST_F(KilnCliTest, MistypedCommandsAndOptionsSayWhatWasMeant) {
  const std::string module = Write("add.hlo", kAdd);
  RunResult command = RunKiln("fingerprnt " + module);
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_NE(command.err.find("unknown command 'fingerprnt': did you mean 'fingerprint'?"), std::string::npos)
      << command.err;
  RunResult option = RunKiln("compile " + module + " --chipp v5e");
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_NE(option.err.find("unknown option '--chipp': did you mean '--chip'?"), std::string::npos) << option.err;
  RunResult nested = RunKiln("inspect lst");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.err.find("unknown inspect command 'lst': did you mean 'list'?"), std::string::npos) << nested.err;
  RunResult unrelated = RunKiln("compile " + module + " --zzzzzz");
  EXPECT_EQ(unrelated.exit_code, 2);
  EXPECT_EQ(unrelated.err.find("did you mean"), std::string::npos) << unrelated.err;
}

// Found by a new user: `kiln help`, `kiln version` and `kiln -v` were
// unknown, a typo's "did you mean" came after CLI11's "A subcommand is
// required", and bare `kiln inspect` did not say what it has.
TEST_F(KilnCliTest, HelpVersionAndUsageErrorsAreWherePeopleLook) {
  const RunResult version = RunKiln("--version");
  for (const char* spelling : {"version", "-v"}) {
    RunResult r = RunKiln(spelling);
    EXPECT_EQ(r.exit_code, 0) << spelling << ": " << r.err;
    EXPECT_EQ(r.out, version.out) << spelling;
  }
  RunResult help = RunKiln("help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("prewarm"), std::string::npos) << help.out;
  RunResult sub_help = RunKiln("help inspect list");
  EXPECT_EQ(sub_help.exit_code, 0) << sub_help.err;
  EXPECT_NE(sub_help.out.find("--sort"), std::string::npos) << sub_help.out;
  EXPECT_EQ(RunKiln("help nosuch").exit_code, 2);

  RunResult typo = RunKiln("inpsect list");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err.rfind("kiln: unknown command 'inpsect': did you mean 'inspect'?", 0), 0u) << typo.err;
  EXPECT_EQ(typo.err.find("A subcommand is required"), std::string::npos) << typo.err;

  RunResult bare = RunKiln("inspect");
  EXPECT_EQ(bare.exit_code, 2);
  for (const char* command : {"list", "show", "verify", "evict", "stats", "explain", "export", "import"}) {
    EXPECT_NE(bare.err.find(command), std::string::npos) << command << " missing from:\n" << bare.err;
  }
}

TEST_F(KilnCliTest, AFolderIsNamedAsOne) {
  RunResult r = RunKiln("fingerprint " + dir_.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir_.string() + " is a folder, not a file"), std::string::npos) << r.err;
}

TEST_F(KilnCliTest, FingerprintPrintsKeyAndPath) {
  std::string path = Write("add.hlo", kAdd);
  RunResult r = RunKiln("fingerprint " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("[0-9a-f]{32}  " + path + "\n"))) << r.out;
}

TEST_F(KilnCliTest, FingerprintIgnoresNamesMetadataAndWhitespace) {
  RunResult a = RunKiln("fingerprint " + Write("a.hlo", kAdd));
  RunResult b = RunKiln("fingerprint " + Write("b.hlo", kAddRenamed));
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0);
  EXPECT_EQ(a.out.substr(0, 32), b.out.substr(0, 32));
}

TEST_F(KilnCliTest, FingerprintDependsOnChipAndShape) {
  std::string path = Write("add.hlo", kAdd);
  RunResult v5e = RunKiln("fingerprint " + path);
  RunResult v6e = RunKiln("fingerprint --chip v6e " + path);
  ASSERT_EQ(v6e.exit_code, 0) << v6e.err;
  EXPECT_NE(v5e.out.substr(0, 32), v6e.out.substr(0, 32));

  std::string wider = kAdd;
  for (size_t at; (at = wider.find("f32[4]")) != std::string::npos;) wider.replace(at, 6, "f32[5]");
  RunResult w = RunKiln("fingerprint " + Write("wider.hlo", wider));
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_NE(v5e.out.substr(0, 32), w.out.substr(0, 32));
}

TEST_F(KilnCliTest, DefaultChipIsV5e) {
  std::string path = Write("add.hlo", kAdd);
  EXPECT_EQ(RunKiln("fingerprint " + path).out, RunKiln("fingerprint --chip v5e " + path).out);
}

TEST_F(KilnCliTest, ParseErrorNamesFileLineAndColumn) {
  std::string bad = Write("bad.hlo", "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] add(a, a\n}\n");
  std::string good = Write("good.hlo", kAdd);
  RunResult r = RunKiln("fingerprint " + bad + " " + good);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(bad + ":5:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected"), std::string::npos) << r.err;
  // The good file is still fingerprinted.
  EXPECT_NE(r.out.find(good), std::string::npos) << r.out;
}

TEST_F(KilnCliTest, VerifierErrorFailsFingerprint) {
  std::string bad = Write("mismatch.hlo",
                          "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n"
                          "  b = f32[5] parameter(1)\n  ROOT c = f32[4] add(a, b)\n}\n");
  RunResult r = RunKiln("fingerprint " + bad);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("%c"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(KilnCliTest, ParsePrintsCanonicalTextWithTheSameKey) {
  std::string path = Write("renamed.hlo", kAddRenamed);
  RunResult printed = RunKiln("parse " + path);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("metadata={op_name=\"x\"}"), std::string::npos) << printed.out;
  std::string reprinted_path = Write("printed.hlo", printed.out);
  RunResult again = RunKiln("parse " + reprinted_path);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(printed.out, again.out);  // canonical text is a fixed point
  EXPECT_EQ(RunKiln("fingerprint " + path).out.substr(0, 32),
            RunKiln("fingerprint " + reprinted_path).out.substr(0, 32));
}

TEST_F(KilnCliTest, MissingFileIsAnError) {
  RunResult r = RunKiln("fingerprint " + (dir_ / "nope.hlo").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nope.hlo"), std::string::npos) << r.err;
}

// n -> d cannot fuse (a kernel holds one dot), d -> a would recompute the
// dot (it has two consumers), a -> e is a loop fusion.
constexpr const char* kFusionMix = R"(HloModule mix
ENTRY e {
  x = f32[128,128] parameter(0)
  w = f32[128,128] parameter(1)
  n = f32[128,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d = f32[128,128] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[128,128] add(d, x)
  s = f32[128,128] subtract(d, x)
  e = f32[128,128] exponential(a)
  ROOT t = (f32[128,128], f32[128,128]) tuple(e, s)
})";

TEST_F(KilnCliTest, CompileJsonListsFusionDecisions) {
  RunResult r = RunKiln("compile " + Write("mix.hlo", kFusionMix) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("fusion_decisions")) << r.out;
  const nlohmann::json& decisions = j["fusion_decisions"];
  ASSERT_TRUE(decisions.is_array());
  auto find = [&](const std::string& producer, const std::string& consumer) {
    for (const nlohmann::json& d : decisions) {
      if (d["producer"] == producer && d["consumer"] == consumer && !d.contains("sibling")) {
        return d;
      }
    }
    ADD_FAILURE() << "no decision " << producer << " -> " << consumer << " in " << decisions;
    return nlohmann::json::object();
  };
  for (const nlohmann::json& d : decisions) {
    for (const char* field : {"producer", "consumer", "fused", "kind", "reason", "rule"}) {
      EXPECT_TRUE(d.contains(field)) << field << " missing in " << d;
    }
    EXPECT_TRUE(d["kind"] == "legality" || d["kind"] == "profitability") << d;
    EXPECT_FALSE(d["reason"].get<std::string>().empty()) << d;
  }
  nlohmann::json fused = find("a", "e");
  EXPECT_EQ(fused["fused"], true);
  EXPECT_EQ(fused["kind"], "profitability");
  EXPECT_EQ(fused["rule"], "loop");
  nlohmann::json illegal = find("n", "d");
  EXPECT_EQ(illegal["fused"], false);
  EXPECT_EQ(illegal["kind"], "legality");
  nlohmann::json unprofitable = find("d", "a");
  EXPECT_EQ(unprofitable["fused"], false);
  EXPECT_EQ(unprofitable["kind"], "profitability");
  EXPECT_EQ(unprofitable["reason"],
            "producer %d is expensive and has 2 consumers: fusing would recompute it");
}

// A module with global shapes compiled for a slice: the partitioner adds an
// all-gather, so the per-chip program's instructions are numbered unlike
// the module as read. Each decision must name the instructions its reason
// is about (they were once named from the module as read).
constexpr const char* kShardedChain = R"(HloModule sharded_chain, num_partitions=2
ENTRY e {
  x = f32[256,128] parameter(0), sharding={devices=[2,1]0,1}
  n = f32[256,128] negate(x), sharding={devices=[2,1]0,1}
  m = f32[256,128] multiply(n, n), sharding={devices=[2,1]0,1}
  r = f32[256,128] exponential(m), sharding={replicated}
  a = f32[256,128] add(r, r), sharding={replicated}
  ROOT t = f32[256,128] tanh(a), sharding={replicated}
})";

TEST_F(KilnCliTest, CompileForASliceNamesDecisionsFromThePerChipProgram) {
  RunResult r = RunKiln("compile " + Write("sharded.hlo", kShardedChain) + " --topology 1x2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json decisions = nlohmann::json::parse(r.out)["fusion_decisions"];
  const std::regex loop_fusion(R"(^loop fusion: %(\S+) \(\S+\) into %(\S+) \(\S+\)$)");
  int checked = 0;
  for (const nlohmann::json& d : decisions) {
    const std::string reason = d["reason"].get<std::string>();
    std::smatch m;
    if (!std::regex_match(reason, m, loop_fusion)) continue;
    EXPECT_EQ(d["producer"], m[1].str()) << d;
    EXPECT_EQ(d["consumer"], m[2].str()) << d;
    ++checked;
  }
  EXPECT_GE(checked, 2) << decisions;
}

TEST_F(KilnCliTest, CompileExplainFusionPrintsAnAlignedTable) {
  RunResult r = RunKiln("compile " + Write("mix.hlo", kFusionMix) + " --explain-fusion");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("key "), std::string::npos) << r.out;  // the summary comes first
  size_t header = r.out.find("PRODUCER");
  ASSERT_NE(header, std::string::npos) << r.out;
  std::string table = r.out.substr(header);
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);
  const size_t reason_column = line.find("REASON");
  ASSERT_NE(reason_column, std::string::npos) << line;
  const std::regex row(R"(^(\S+) +(\S+( \+ \S+)?) +(yes|no) +(legality|profitability) +(\S.*)$)");
  int rows = 0;
  bool saw_illegal = false, saw_fused = false, saw_unprofitable = false;
  while (std::getline(lines, line)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, row)) << line;
    EXPECT_EQ(static_cast<size_t>(m.position(6)), reason_column) << "misaligned: " << line;
    ++rows;
    if (m[1] == "n" && m[2] == "d") saw_illegal = m[4] == "no" && m[5] == "legality";
    if (m[1] == "a" && m[2] == "e") saw_fused = m[4] == "yes";
    if (m[1] == "d" && m[2] == "a") saw_unprofitable = m[4] == "no" && m[5] == "profitability";
  }
  EXPECT_GE(rows, 3) << table;
  EXPECT_TRUE(saw_illegal) << table;
  EXPECT_TRUE(saw_fused) << table;
  EXPECT_TRUE(saw_unprofitable) << table;
  EXPECT_NE(r.out.find("fusion decisions (" + std::to_string(rows) + ")"), std::string::npos)
      << r.out;
}

// A loop whose body holds a fusible chain (n -> e) and whose entry holds
// none: a scanned layer's fusions are decided in its body.
constexpr const char* kLoopWithFusibleBody = R"(HloModule loop
body {
  p = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[1024] get-tuple-element(p), index=1
  n = f32[1024] negate(x)
  e = f32[1024] exponential(n)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[1024]) tuple(j, e)
}
cond {
  p = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(4)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY main {
  x = f32[1024] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024]) tuple(zero, x)
  w = (s32[], f32[1024]) while(init), condition=cond, body=body
  ROOT r = f32[1024] get-tuple-element(w), index=1
})";

TEST_F(KilnCliTest, CompileExplainsTheFusionsInsideLoopBodies) {
  const std::string path = Write("loop.hlo", kLoopWithFusibleBody);
  RunResult json = RunKiln("compile " + path + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json bodies = nlohmann::json::parse(json.out)["body_fusion_decisions"];
  ASSERT_TRUE(bodies.is_array()) << json.out;
  bool saw_body_fusion = false;
  for (const nlohmann::json& body : bodies) {
    if (body["computation"] != "body") continue;
    for (const nlohmann::json& d : body["decisions"]) {
      if (d["producer"] == "n" && d["consumer"] == "e") saw_body_fusion = d["fused"] == true && d["rule"] == "loop";
    }
  }
  EXPECT_TRUE(saw_body_fusion) << bodies;

  RunResult table = RunKiln("compile " + path + " --explain-fusion");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const size_t section = table.out.find("fusion decisions in %body (1)\n");
  ASSERT_NE(section, std::string::npos) << table.out;
  const std::regex fused_row(R"(\nn +e +yes +profitability +loop fusion: %n \(negate\) into %e \(exponential\)\n)");
  EXPECT_TRUE(std::regex_search(table.out.substr(section), fused_row)) << table.out;

  // The none plan leaves bodies as written: nothing decided there.
  RunResult none = RunKiln("compile " + path + " --plan none --json");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(nlohmann::json::parse(none.out)["body_fusion_decisions"], nlohmann::json::array()) << none.out;
}

// A dot with a bias and activation epilogue after an elementwise chain:
// decisions to flip and tiles to choose.
constexpr const char* kTunable = kiln::testing::kTunableModule;

TEST_F(KilnCliTest, TuneRefusesBadBudgetsChipsAndFiles) {
  const std::string path = Write("tunable.hlo", kTunable);
  struct Case {
    std::string args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"--trials 0", "--trials must be at least 1"},
      {"--trials -3", "--trials must be at least 1"},
      {"--trials 99999999", "absurd"},
      {"--budget 0s", "duration '0s'"},
      {"--budget -5s", "duration '-5s'"},
      {"--budget 30x", "duration '30x'"},
      {"--budget 1000h", "duration '1000h'"},
      {"--budget 10s --trials 5", "excludes"},
      {"--chip v9", "v9"},
      {"--trials abc", "abc"},
  };
  for (const Case& c : cases) {
    RunResult r = RunKiln("tune " + path + " " + c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
  }
  RunResult missing = RunKiln("tune " + (dir_ / "missing.hlo").string() + " --trials 3");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("missing.hlo"), std::string::npos) << missing.err;
}

TEST_F(KilnCliTest, TuneJsonIsReproducibleAndStoresTheTunedEntry) {
  const std::string path = Write("tunable.hlo", kTunable);
  const std::string db = (dir_ / "tune.db").string();
  RunResult first = RunKiln("tune " + path + " --trials 20 --seed 5 --json --db " + db);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  RunResult second = RunKiln("tune " + path + " --trials 20 --seed 5 --json");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  auto a = nlohmann::json::parse(first.out);
  auto b = nlohmann::json::parse(second.out);
  for (const char* field : {"heuristic_us", "tuned_us", "trials", "seconds", "transfer_hits", "key", "edge_flips",
                            "tile_changes", "spearman_analytic", "stage_ms", "kernels"}) {
    EXPECT_TRUE(a.contains(field)) << field;
  }
  EXPECT_EQ(a["key"], RunKiln("fingerprint " + path).out.substr(0, 32));
  EXPECT_LE(a["trials"].get<int>(), 20);
  EXPECT_LE(a["tuned_us"].get<double>(), a["heuristic_us"].get<double>());
  // The same seed and trials give the same plan and times.
  EXPECT_EQ(a["tuned_us"], b["tuned_us"]);
  EXPECT_EQ(a["edge_flips"], b["edge_flips"]);
  EXPECT_EQ(a["trials"], b["trials"]);
  if (a["accepted"].get<bool>()) {
    EXPECT_TRUE(a["stored"].get<bool>()) << a["store_note"];
    RunResult listed = RunKiln("inspect list --db " + db);
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_NE(listed.out.find(a["key"].get<std::string>()), std::string::npos) << listed.out;
    EXPECT_NE(listed.out.find("tuned"), std::string::npos) << listed.out;
  }
  EXPECT_GT(a["records_stored"].get<int>(), 0);
  // A second tuning against the same records starts from their best tiles.
  RunResult again = RunKiln("tune " + path + " --trials 3 --json --db " + db);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_GT(nlohmann::json::parse(again.out)["transfer_hits"].get<int>(), 0) << again.out;
}

// An optimizer step over parameters of three shapes: the updates share only
// the learning rate, so the heuristic runs one kernel each; the tuner
// merges them, across shapes into horizontal kernels, and the tuned
// program's outputs are checked against the heuristic's.
TEST_F(KilnCliTest, TuneMergesSmallUpdatesAcrossShapesIntoHorizontalKernels) {
  const std::vector<std::string> shapes = {"f32[16]", "f32[8,16]", "f32[4,4]"};
  std::string text = "HloModule sgd\nENTRY e {\n  lr = f32[] parameter(0)\n";
  std::string outputs, tuple_shapes;
  int parameter = 1;
  for (int i = 0; i < 9; ++i) {
    const std::string n = std::to_string(i);
    const std::string& shape = shapes[i % shapes.size()];
    text += "  w" + n + " = " + shape + " parameter(" + std::to_string(parameter++) + ")\n";
    text += "  g" + n + " = " + shape + " parameter(" + std::to_string(parameter++) + ")\n";
    text += "  s" + n + " = " + shape + " broadcast(lr), dimensions={}\n";
    text += "  d" + n + " = " + shape + " multiply(s" + n + ", g" + n + ")\n";
    text += "  u" + n + " = " + shape + " subtract(w" + n + ", d" + n + ")\n";
    outputs += (i ? ", u" : "u") + n;
    tuple_shapes += (i ? ", " : "") + shape;
  }
  text += "  ROOT out = (" + tuple_shapes + ") tuple(" + outputs + ")\n}\n";
  RunResult r = RunKiln("tune " + Write("sgd.hlo", text) + " --trials 120 --seed 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["accepted"].get<bool>()) << j["decision"];
  EXPECT_NE(j["decision"].get<std::string>().find("outputs equal"), std::string::npos) << j["decision"];
  EXPECT_LT(j["tuned_us"].get<double>(), j["heuristic_us"].get<double>());
  int horizontal_flips = 0;
  for (const auto& flip : j["edge_flips"]) {
    const std::string f = flip.get<std::string>();
    horizontal_flips += f.find("(horizontal, reading %lr) fused") != std::string::npos;
  }
  EXPECT_GT(horizontal_flips, 0) << j["edge_flips"];
  int tuned_kernels = 0, horizontal = 0;
  for (const auto& k : j["kernels"]) {
    if (k["tuned_us"].is_null()) continue;
    ++tuned_kernels;
    if (k["kind"] == "horizontal") {
      ++horizontal;
      EXPECT_EQ(k["tuned_tiling"], "untiled") << k;
    }
  }
  EXPECT_GT(horizontal, 0) << j["kernels"];
  EXPECT_LT(tuned_kernels, 9);
}

TEST_F(KilnCliTest, TuneTablePrintsKernelsAndOneSummaryLine) {
  RunResult r = RunKiln("tune " + Write("tunable.hlo", kTunable) + " --trials 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("kernel ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("heuristic us"), std::string::npos);
  const std::regex summary(R"((tuned|kept heuristic) [0-9.]+x: heuristic [0-9.]+ us, tuned [0-9.]+ us; (\d+) trials)");
  std::smatch found;
  ASSERT_TRUE(std::regex_search(r.out, found, summary)) << r.out;
  // Its progress goes to stderr (a probe found `kiln tune` silent for its
  // whole budget): in a log, the last figures, the same trial count.
  EXPECT_NE(r.err.find("tuning: " + found[2].str() + "/10 trials"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("of the heuristic's"), std::string::npos) << r.err;
  RunResult json_run = RunKiln("tune " + Write("tunable.hlo", kTunable) + " --trials 3 --json");
  EXPECT_EQ(json_run.err.find("tuning:"), std::string::npos) << "--json prints no progress";
}

// Found by a new user: with --json, compile, run and tune printed their
// errors as text only, leaving stdout empty (inspect, parse and fingerprint
// printed a JSON error).
TEST_F(KilnCliTest, EveryCommandWithJsonPrintsItsErrorAsJson) {
  const std::string missing = (dir_ / "missing.hlo").string();
  for (const std::string& command : {"compile " + missing, "run " + missing, "tune " + missing + " --trials 2",
                                     "fingerprint " + missing, "parse " + missing}) {
    RunResult r = RunKiln(command + " --json");
    EXPECT_EQ(r.exit_code, 1) << command;
    const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(out.is_discarded()) << command << ": stdout is not one JSON document: " << r.out;
    const nlohmann::json& error = out.is_array() ? out[0]["error"] : out["error"];
    EXPECT_EQ(error["code"], "not_found") << command << ": " << r.out;
    EXPECT_NE(r.err.find("missing.hlo"), std::string::npos) << command << ": " << r.err;
  }
}

// Found by a new user: `kiln run` of a Llama step printed 5,205 kernel rows
// with no way to ask for the slowest few.
TEST_F(KilnCliTest, RunTopShowsTheSlowestKernelsAndCountsTheRest) {
  const std::string path = Write("tunable.hlo", kTunable);
  RunResult all = RunKiln("run " + path + " --timing-only");
  RunResult top = RunKiln("run " + path + " --timing-only --top 1");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find(" more kernels ("), std::string::npos) << top.out;
  EXPECT_EQ(all.out.find(" more kernels ("), std::string::npos) << all.out;
  // The fastest kernel is left out; the slowest stays.
  const nlohmann::json kernels = nlohmann::json::parse(RunKiln("run " + path + " --timing-only --json").out)["kernels"];
  ASSERT_GE(kernels.size(), 2u);
  auto by_time = [](const nlohmann::json& a, const nlohmann::json& b) { return a["us"] < b["us"]; };
  const std::string fastest = std::min_element(kernels.begin(), kernels.end(), by_time).value()["name"];
  const std::string slowest = std::max_element(kernels.begin(), kernels.end(), by_time).value()["name"];
  // Rows start with the kernel's name.
  EXPECT_NE(all.out.find("\n" + fastest + " "), std::string::npos) << all.out;
  EXPECT_EQ(top.out.find("\n" + fastest + " "), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("\n" + slowest + " "), std::string::npos) << top.out;
}

TEST_F(KilnCliTest, HelpListsCommands) {
  RunResult r = RunKiln("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fingerprint"), std::string::npos);
  EXPECT_NE(r.out.find("parse"), std::string::npos);
}

// A tuned entry lists as plan tuned; tuning records list newest first, one
// tenant's or every tenant's, with their compiler version.
TEST_F(KilnCliTest, InspectListsTunedEntriesAndTuningRecords) {
  const std::string db = (dir_ / "kiln.db").string();
  {
    kiln::cache::CacheStoreOptions options;
    options.path = db;
    auto store = kiln::cache::CacheStore::Open(options);
    ASSERT_TRUE(store) << store.error().ToString();
    const std::string heuristic(1000, 'h'), tuned(1200, 't');
    kiln::cache::PutRequest put;
    put.id = {"default", kiln::cache::Hash128{1, 2}, "v5e"};
    put.executable = heuristic;
    put.device_seconds = 0.5;
    ASSERT_TRUE((*store)->Put(put));
    put.executable = tuned;
    put.plan_kind = kiln::cache::PlanKind::kTuned;
    put.device_seconds = 0.25;
    ASSERT_TRUE((*store)->ReplaceWithTuned(put, (*(*store)->GetMetadata(put.id))->checksum));
    ASSERT_TRUE((*store)->tuning_records().Add(
        {.tenant = "alice", .workload_key = "aa", .chip = "v5e", .plan = "tile=128", .measured_seconds = 2e-5,
         .created_ms = 1000}));
    ASSERT_TRUE((*store)->tuning_records().Add(
        {.tenant = "bob", .workload_key = "bb", .chip = "v6e", .plan = "tile=64", .error = "VMEM overflow",
         .created_ms = 2000}));
  }
  RunResult list = RunKiln("inspect list --db " + db + " --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  nlohmann::json entries = nlohmann::json::parse(list.out);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["plan"], "tuned");
  EXPECT_EQ(entries[0]["estimated_us"], 250000.0);

  RunResult all = RunKiln("inspect tuning-records --db " + db + " --json");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  nlohmann::json records = nlohmann::json::parse(all.out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["tenant"], "bob");  // newest first
  EXPECT_EQ(records[0]["error"], "VMEM overflow");
  EXPECT_FALSE(records[0].contains("measured_us"));
  EXPECT_EQ(records[1]["tenant"], "alice");
  EXPECT_EQ(records[1]["workload_key"], "aa");
  EXPECT_DOUBLE_EQ(records[1]["measured_us"].get<double>(), 20.0);
  EXPECT_EQ(records[1]["compiler_version"], records[0]["compiler_version"]);
  EXPECT_GE(records[1]["compiler_version"].get<int>(), 1);

  RunResult alice = RunKiln("inspect tuning-records --db " + db + " --tenant alice");
  ASSERT_EQ(alice.exit_code, 0) << alice.err;
  EXPECT_NE(alice.out.find("tile=128"), std::string::npos) << alice.out;
  EXPECT_EQ(alice.out.find("bob"), std::string::npos) << alice.out;
  RunResult v6e = RunKiln("inspect tuning-records --db " + db + " --chip v6e --json");
  ASSERT_EQ(v6e.exit_code, 0) << v6e.err;
  EXPECT_EQ(nlohmann::json::parse(v6e.out).size(), 1u);
  RunResult bad_chip = RunKiln("inspect tuning-records --db " + db + " --chip v9");
  EXPECT_NE(bad_chip.exit_code, 0);
}

}  // namespace
