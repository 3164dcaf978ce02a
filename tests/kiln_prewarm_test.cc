// End-to-end tests of `kiln prewarm` through the binary: dump folders
// (stages, nested hosts, other dump files), compressed files, torch_xla
// saved graphs, junk and unreadable paths, --dry-run, --json, several
// chips, keys against `kiln fingerprint`, a running `kiln serve` (over
// HTTP, and answering prewarmed entries as hits), and a run killed with
// SIGKILL that a rerun finishes.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cache/cache_store.h"
#include "tests/run_kiln.h"
#include "server/http/content_coding.h"
#include "tests/kiln_serve_process.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using kiln::testing::RunKiln;
using kiln::testing::RunResult;

json RunJson(const std::string& args, int expected_exit = 0) {
  RunResult r = RunKiln(args + " --json");
  EXPECT_EQ(r.exit_code, expected_exit) << args << "\n" << r.out << r.err;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out << r.err;
  return j;
}

// A module per seed: the same graph with a different shape, so keys differ.
std::string Module(int n, const std::string& name = "m") {
  const std::string shape = "f32[" + std::to_string(n) + "]";
  return "HloModule " + name + "\nENTRY main {\n  a = " + shape + " parameter(0)\n  b = " + shape +
         " parameter(1)\n  c = " + shape + " add(a, b)\n  ROOT d = " + shape + " multiply(c, a)\n}\n";
}

// A module of `n` renamed: same key as Module(n).
std::string Renamed(int n) {
  const std::string shape = "f32[" + std::to_string(n) + "]";
  return "HloModule other\n// a comment\nENTRY e {\n  x = " + shape + " parameter(0)\n  y = " + shape +
         " parameter(1)\n  s = " + shape + " add(x, y)\n  ROOT t = " + shape + " multiply(s, x)\n}\n";
}

class KilnPrewarmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kiln-prewarm-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    db_ = (dir_ / "kiln.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path WriteGzip(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    return p;
  }
  fs::path WriteZstd(const std::string& name, const std::string& text) {
    return Write(name, kiln::http::ZstdCompress(text, 3));
  }
  std::string Fingerprint(const fs::path& file, const std::string& chip = "v5e") {
    RunResult r = RunKiln("fingerprint --chip " + chip + " " + file.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, 32);
  }
  // The keys stored, as "KEY CHIP".
  std::set<std::string> StoredKeys() {
    kiln::cache::CacheStoreOptions options;
    options.path = db_;
    auto store = kiln::cache::CacheStore::Open(options);
    EXPECT_TRUE(store) << store.error();
    std::set<std::string> keys;
    if (!store) return keys;
    auto entries = (*store)->List({});
    EXPECT_TRUE(entries);
    for (const auto& e : *entries) keys.insert(e.id.key.Hex() + " " + e.id.chip);
    return keys;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(KilnPrewarmTest, DumpFolderCompilesBeforeStageOnlyAndCountsTheRest) {
  const fs::path before0 = Write("dump/host0/module_0001.jit_step.before_optimizations.txt", Module(4));
  Write("dump/host0/module_0001.jit_step.after_optimizations.txt", Module(5));
  Write("dump/host0/module_0001.jit_step.buffer-assignment.txt", "BufferAssignment:\nallocation 0: size 16\n");
  Write("dump/host0/module_0001.jit_step.ir-no-opt.ll", "; ModuleID = 'x'\n");
  Write("dump/host1/nested/module_0001.jit_step.before_optimizations.txt", Renamed(4));  // the same module
  const fs::path before1 = Write("dump/host1/nested/module_0002.jit_eval.before_optimizations.txt", Module(6));
  Write("dump/host1/notes.txt", "a plain text file\n");
  Write("dump/host1/profile.pb", "\x08\x01");

  json j = RunJson("prewarm " + (dir_ / "dump").string() + " --db " + db_);
  EXPECT_EQ(j["found"], 3);
  EXPECT_EQ(j["compiled"], 2);
  EXPECT_EQ(j["duplicates"], 1);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["skipped"], 5);
  EXPECT_EQ(j["skipped_by_reason"]["XLA dump, stage after_optimizations (not selected by --stage)"], 1);
  EXPECT_EQ(j["skipped_by_reason"]["XLA dump file that is not a module stage (buffer assignment, report, proto, ...)"], 2);
  EXPECT_EQ(j["skipped_by_reason"]["not HLO text (by its name)"], 1);
  EXPECT_EQ(j["skipped_by_reason"]["text without an HloModule header, not HLO"], 1);
  EXPECT_GT(j["executable_bytes"].get<int64_t>(), 0);
  // Compressed, as /v1/stats' stored_bytes counts them (a probe found
  // "bytes stored" raw while the server's figure was compressed).
  EXPECT_GT(j["stored_bytes"].get<int64_t>(), 0);
  EXPECT_LT(j["stored_bytes"].get<int64_t>(), j["executable_bytes"].get<int64_t>());
  for (const char* field : {"found", "compiled", "cached", "failed", "skipped", "seconds"}) EXPECT_TRUE(j.contains(field)) << field;
  // The keys are the ones kiln fingerprint prints.
  EXPECT_EQ(StoredKeys(), (std::set<std::string>{Fingerprint(before0) + " v5e", Fingerprint(before1) + " v5e"}));

  // A second run compiles nothing.
  json again = RunJson("prewarm " + (dir_ / "dump").string() + " --db " + db_);
  EXPECT_EQ(again["compiled"], 0);
  EXPECT_EQ(again["cached"], 2);

  // --stage after takes the optimized module instead; all takes both.
  json after = RunJson("prewarm " + (dir_ / "dump").string() + " --db " + db_ + " --stage after");
  EXPECT_EQ(after["found"], 1);
  EXPECT_EQ(after["compiled"], 1);
  json all = RunJson("prewarm " + (dir_ / "dump").string() + " --db " + db_ + " --stage all");
  EXPECT_EQ(all["found"], 4);
  EXPECT_EQ(all["compiled"], 0);
  EXPECT_EQ(all["cached"], 3);
}

TEST_F(KilnPrewarmTest, ReadsGzipAndZstdFiles) {
  WriteGzip("d/module_0000.a.before_optimizations.txt.gz", Module(7));
  WriteZstd("d/b.hlo.zst", Module(8));
  const fs::path plain7 = Write("plain/7.hlo", Module(7));
  const fs::path plain8 = Write("plain/8.hlo", Module(8));
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_);
  EXPECT_EQ(j["found"], 2);
  EXPECT_EQ(j["compiled"], 2);
  EXPECT_EQ(StoredKeys(), (std::set<std::string>{Fingerprint(plain7) + " v5e", Fingerprint(plain8) + " v5e"}));
  // Corrupt compressed data is reported and the run goes on.
  std::string broken = kiln::http::ZstdCompress(Module(9), 3);
  broken.resize(broken.size() / 2);
  Write("d/broken.hlo.zst", broken);
  json again = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_);
  EXPECT_EQ(again["cached"], 2);
  ASSERT_EQ(again["not_read"].size(), 1u) << again.dump();
  EXPECT_NE(again["not_read"][0]["reason"].get<std::string>().find("zstd"), std::string::npos);
}

TEST_F(KilnPrewarmTest, JunkAndUnreadablePathsAreReportedAndTheRunGoesOn) {
  Write("d/good.hlo", Module(10));
  Write("d/junk.hlo", std::string("\x7f" "ELF\0\0\x01\x02 binary", 16));
  Write("d/big.hlo", Module(11) + std::string(4096, ' '));
  Write("d/empty.txt", "");
  fs::create_directories(dir_ / "d/empty_folder");
  fs::create_symlink(dir_ / "d/missing.hlo", dir_ / "d/dangling.hlo");
  fs::create_symlink(dir_ / "d/self", dir_ / "d/self");
  fs::create_directory_symlink(dir_ / "d", dir_ / "d/loop");
  ASSERT_EQ(mkfifo((dir_ / "d/fifo.hlo").c_str(), 0600), 0);
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_ + " --max-file-bytes 1000");
  EXPECT_EQ(j["compiled"], 1);
  EXPECT_EQ(j["failed"], 0);
  std::map<std::string, std::string> reasons;
  for (const json& p : j["not_read"]) reasons[fs::path(p["path"].get<std::string>()).filename()] = p["reason"];
  EXPECT_NE(reasons["junk.hlo"].find("binary"), std::string::npos) << j.dump();
  EXPECT_NE(reasons["big.hlo"].find("too large"), std::string::npos) << j.dump();
  EXPECT_NE(reasons["empty.txt"].find("empty file"), std::string::npos) << j.dump();
  EXPECT_NE(reasons["empty_folder"].find("empty folder"), std::string::npos) << j.dump();
  EXPECT_NE(reasons["dangling.hlo"].find("dangling"), std::string::npos) << j.dump();
  EXPECT_NE(reasons["self"].find("symlink loop"), std::string::npos) << j.dump();
  EXPECT_NE(reasons["loop"].find("already walked"), std::string::npos) << j.dump();
  EXPECT_NE(reasons["fifo.hlo"].find("not a regular file"), std::string::npos) << j.dump();
}

TEST_F(KilnPrewarmTest, AFailingModuleExitsOneWithFileLineColumnAndTheRestAreStored) {
  Write("d/good.hlo", Module(12));
  const fs::path bad = Write("d/bad.hlo", "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] add(a, a\n}\n");
  RunResult r = RunKiln("prewarm " + (dir_ / "d").string() + " --db " + db_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(bad.string() + ":5:1: "), std::string::npos) << r.out;
  EXPECT_EQ(StoredKeys().size(), 1u);
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_, 1);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["failures"][0]["where"], bad.string() + ":5:1");
}

TEST_F(KilnPrewarmTest, SplitsTorchXlaSavedGraphs) {
  // XLA_SAVE_TENSORS_FILE with XLA_SAVE_TENSORS_FMT=hlo: records appended.
  std::string saved;
  auto record = [&](const std::string& graph) {
    saved += "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  mark_step (xla_model.py:1055)\n\nHashes: (abc123)\n\n";
    saved += "## BEGIN_GRAPH\n" + graph + "\n## END_GRAPH\n\n\n";
  };
  record(Module(13, "SyncTensorsGraph.1"));
  saved += "\n#OUTPUT_SHARDING_BEGIN\n\nf32[13] {replicated}\n\n#OUTPUT_SHARDING_END\n\n";
  record(Module(14, "SyncTensorsGraph.2"));
  record(Module(13, "SyncTensorsGraph.3"));  // the same graph again
  record("IR {\n  %0 = f32[] prim::Constant()\n}\n");  // a text-format graph
  const fs::path file = Write("saved/graphs.txt.0", saved);
  const fs::path m13 = Write("ref/13.hlo", Module(13));
  const fs::path m14 = Write("ref/14.hlo", Module(14));
  json j = RunJson("prewarm " + file.string() + " --db " + db_);
  EXPECT_EQ(j["found"], 3);
  EXPECT_EQ(j["compiled"], 2);
  EXPECT_EQ(j["duplicates"], 1);
  EXPECT_EQ(j["skipped"], 1);
  EXPECT_EQ(StoredKeys(), (std::set<std::string>{Fingerprint(m13) + " v5e", Fingerprint(m14) + " v5e"}));

  // An error in a graph names the line of the file it is on.
  std::string broken = saved;
  broken.replace(broken.find("SyncTensorsGraph.2\nENTRY main {"), 0, "");
  const size_t at = broken.find("multiply(c, a)", broken.find("SyncTensorsGraph.2"));
  broken.replace(at, 14, "multiply(c, zz)");
  const int line = 1 + static_cast<int>(std::count(broken.begin(), broken.begin() + static_cast<long>(at), '\n'));
  const fs::path bad = Write("saved/bad.txt", broken);
  json failed = RunJson("prewarm " + bad.string() + " --db " + db_, 1);
  ASSERT_EQ(failed["failures"].size(), 1u) << failed.dump();
  EXPECT_EQ(failed["failures"][0]["where"].get<std::string>().rfind(bad.string() + ":" + std::to_string(line) + ":", 0), 0u)
      << failed.dump();
}

// The files in the folder of `path` (a store's file, its log, its reserve).
std::set<fs::path> FilesBeside(const std::string& path) {
  std::set<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path())) files.insert(entry.path());
  return files;
}

TEST_F(KilnPrewarmTest, DryRunStoresNothingAndListsWhatItWouldCompile) {
  Write("d/a.hlo", Module(15));
  Write("d/b.hlo", Module(16));
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_ + " --dry-run");
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_EQ(j["compiled"], 2);
  EXPECT_EQ(j["would_compile"].size(), 2u);
  // Not even an empty store or its space reserve (a probe found ./kiln.db
  // and an 8 MiB kiln.db-reserve after a dry run).
  EXPECT_FALSE(fs::exists(db_));
  EXPECT_FALSE(fs::exists(db_ + "-reserve"));
  RunResult table = RunKiln("prewarm " + (dir_ / "d").string() + " --db " + db_ + " --dry-run");
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("would compile (2)"), std::string::npos) << table.out;
  EXPECT_FALSE(fs::exists(db_));

  // Against a store that exists, it reads it (read-only: SQLite's reader
  // files -wal and -shm aside, nothing beside it appears) and writes nothing.
  RunJson("prewarm " + (dir_ / "d" / "a.hlo").string() + " --db " + db_);
  const auto modified = fs::last_write_time(db_);
  const auto size = fs::file_size(db_);
  std::set<fs::path> files_before = FilesBeside(db_);
  json again = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_ + " --dry-run");
  EXPECT_EQ(again["cached"], 1);
  EXPECT_EQ(again["compiled"], 1);
  EXPECT_EQ(fs::last_write_time(db_), modified);
  EXPECT_EQ(fs::file_size(db_), size);
  files_before.insert({db_ + "-wal", db_ + "-shm"});
  for (const fs::path& file : FilesBeside(db_)) EXPECT_TRUE(files_before.contains(file)) << file;
  EXPECT_EQ(StoredKeys().size(), 1u);
}

TEST_F(KilnPrewarmTest, OneEntryPerChipUnderFingerprintsKeys) {
  const fs::path file = Write("d/a.hlo", Module(17));
  json j = RunJson("prewarm " + file.string() + " --db " + db_ + " --chip v5e --chip v6e --plan none");
  EXPECT_EQ(j["compiled"], 2);
  auto key = [&](const std::string& chip) {
    RunResult r = RunKiln("fingerprint --plan none --chip " + chip + " " + file.string());
    return r.out.substr(0, 32) + " " + chip;
  };
  EXPECT_EQ(StoredKeys(), (std::set<std::string>{key("v5e"), key("v6e")}));
}

// A job's dump holds its sharded step (traced for 4 devices) and small
// one-device helpers: --topology 2x2 compiles the step for the slice and the
// helper for one chip, each under the key `kiln compile` gives it.
TEST_F(KilnPrewarmTest, TopologyCompilesModulesOfItsDeviceCountForTheSlice) {
  std::ifstream in(std::string(KILN_CORPUS_DIR) +
                   "/hlo/xla-tests/collective_ops_e2e_test__DotContractingNonContractingAndContractingNonContracting.hlo");
  std::stringstream sharded;
  sharded << in.rdbuf();
  ASSERT_FALSE(sharded.str().empty());
  const fs::path step = Write("d/step.hlo", sharded.str());
  const fs::path helper = Write("d/helper.hlo", Module(29));
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_ + " --topology 2x2");
  EXPECT_EQ(j["compiled"], 2) << j.dump();
  auto key = [&](const fs::path& file, const std::string& flags) {
    RunResult r = RunKiln("compile " + file.string() + " --json" + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false).value("key", "") + " v5e";
  };
  EXPECT_EQ(StoredKeys(), (std::set<std::string>{key(step, " --topology 2x2"), key(helper, "")}));
  EXPECT_EQ(RunKiln("prewarm " + dir_.string() + " --db " + db_ + " --topology 3x").exit_code, 2);
  // A slice's program is tuned too (its tiles: its outputs meet the other
  // chips' only on the slice).
  json tuned = RunJson("prewarm " + (dir_ / "d").string() + " --db " + (dir_ / "tuned.db").string() +
                       " --topology 2x2 --tune 1s");
  EXPECT_EQ(tuned["compiled"], 2) << tuned.dump();
}

TEST_F(KilnPrewarmTest, TuneAutotunesEachNewEntry) {
  Write("d/a.hlo", Module(23));
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --db " + db_ + " --tune 1s");
  EXPECT_EQ(j["compiled"], 1);
  ASSERT_EQ(j["tune_notes"].size(), 1u) << j.dump();
  kiln::cache::CacheStoreOptions options;
  options.path = db_;
  auto store = kiln::cache::CacheStore::Open(options);
  ASSERT_TRUE(store);
  auto entries = (*store)->List({});
  ASSERT_TRUE(entries && entries->size() == 1u);
  // Either the tuned executable replaced the heuristic one, or the note says why not.
  const bool tuned = (*entries)[0].plan_kind == kiln::cache::PlanKind::kTuned;
  EXPECT_EQ(j["tuned"].get<int>(), tuned ? 1 : 0);
  const std::string note = j["tune_notes"][0];
  EXPECT_NE(note.find(tuned ? "stored as plan tuned" : "nothing stored"), std::string::npos) << note;
  EXPECT_FALSE((*store)->tuning_records().List({}).value().empty());  // the trials are kept for transfer
}

TEST_F(KilnPrewarmTest, UsageErrorsExitTwo) {
  Write("d/a.hlo", Module(18));
  EXPECT_EQ(RunKiln("prewarm").exit_code, 2);
  EXPECT_EQ(RunKiln("prewarm " + dir_.string() + " --chip v9").exit_code, 2);
  EXPECT_EQ(RunKiln("prewarm " + dir_.string() + " --db x.db --server http://127.0.0.1:1").exit_code, 2);
  EXPECT_EQ(RunKiln("prewarm " + dir_.string() + " --server ftp://x").exit_code, 2);
  EXPECT_EQ(RunKiln("prewarm " + dir_.string() + " --db " + db_ + " --tune 0s").exit_code, 2);
  EXPECT_EQ(RunKiln("prewarm " + dir_.string() + " --db " + db_ + " --stage middle").exit_code, 2);
}

TEST_F(KilnPrewarmTest, PrewarmsARunningServerOverHttp) {
  kiln::api::testing::KilnServeProcess server({});
  ASSERT_TRUE(server.ok());
  const fs::path a = Write("d/host0/module_0000.a.before_optimizations.txt", Module(19));
  Write("d/host0/b.hlo", Module(20));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --server " + url);
  EXPECT_EQ(j["compiled"], 2);
  EXPECT_EQ(j["failed"], 0);
  json again = RunJson("prewarm " + (dir_ / "d").string() + " --server " + url);
  EXPECT_EQ(again["compiled"], 0);
  EXPECT_EQ(again["cached"], 2);
  auto hit = server.Call("POST", "/v1/compile", Module(19));
  ASSERT_EQ(hit.status, 200) << hit.body;
  json body = json::parse(hit.body);
  EXPECT_EQ(body["cache"], "hit");
  EXPECT_EQ(body["key"], Fingerprint(a));
}

// StableHLO beside HLO text in a dump folder, prewarmed over HTTP: the
// server keys the MLIR text as kiln does, and a later compile of it hits.
TEST_F(KilnPrewarmTest, PrewarmsStableHloIntoARunningServer) {
  kiln::api::testing::KilnServeProcess server({});
  ASSERT_TRUE(server.ok());
  const std::string stablehlo =
      "module @jit_f {\n"
      "  func.func public @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
      "    %0 = stablehlo.tanh %arg0 : tensor<4x8xf32>\n"
      "    return %0 : tensor<4x8xf32>\n"
      "  }\n"
      "}\n";
  const fs::path mlir = Write("d/jit_f.mlir", stablehlo);
  Write("d/b.hlo", Module(20));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --server " + url);
  EXPECT_EQ(j["compiled"], 2) << j;
  EXPECT_EQ(j["failed"], 0) << j;
  auto hit = server.Call("POST", "/v1/compile", stablehlo);
  ASSERT_EQ(hit.status, 200) << hit.body;
  json body = json::parse(hit.body);
  EXPECT_EQ(body["cache"], "hit");
  EXPECT_EQ(body["key"], Fingerprint(mlir));
}

TEST_F(KilnPrewarmTest, AServerOnTheSameStoreAnswersPrewarmedModulesAsHits) {
  kiln::api::testing::KilnServeProcess server({});
  ASSERT_TRUE(server.ok());
  const fs::path a = Write("d/a.hlo", Module(21));
  const fs::path b = Write("d/b.hlo", Renamed(22));
  json j = RunJson("prewarm " + (dir_ / "d").string() + " --db " + server.db_path().string());
  EXPECT_EQ(j["compiled"], 2);
  for (const fs::path& file : {a, b}) {
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto answer = server.Call("POST", "/v1/compile", text);
    ASSERT_EQ(answer.status, 200) << answer.body;
    json body = json::parse(answer.body);
    EXPECT_EQ(body["cache"], "hit") << file;
    EXPECT_EQ(body["key"], Fingerprint(file));
    EXPECT_EQ(body["plan"], "heuristic");
    EXPECT_GT(body["kernels"].get<int>(), 0);  // the server's notes are there
  }
  // The same module with other names was never sent: still a hit by key.
  auto renamed = server.Call("POST", "/v1/compile", Module(22));
  ASSERT_EQ(renamed.status, 200);
  EXPECT_EQ(json::parse(renamed.body)["cache"], "hit");
}

TEST_F(KilnPrewarmTest, KilledMidRunTheStoreVerifiesAndARerunFinishes) {
  const std::string corpus = std::string(KILN_CORPUS_DIR) + "/hlo/torchxla-dumps";
  ASSERT_TRUE(fs::exists(corpus)) << corpus;
  const std::string args = corpus + " --db " + db_ + " --jobs 1 --chip v5e --chip v6e";
  const pid_t child = fork();
  if (child == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    const std::string command = std::string("exec ") + KILN_BINARY + " prewarm " + args;
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it as soon as it stored something (bounded wait).
  bool stored = false;
  for (int i = 0; i < 3000 && !stored; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (fs::exists(db_)) {
      kiln::cache::CacheStoreOptions options;
      options.path = "file:" + db_ + "?mode=ro";
      options.reserve_bytes = 0;
      auto store = kiln::cache::CacheStore::Open(options);
      if (store) {
        auto totals = (*store)->List({});
        stored = totals && !totals->empty();
      }
    }
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(stored);

  RunResult verify = RunKiln("inspect verify --db " + db_);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  const size_t before = StoredKeys().size();

  json rerun = RunJson("prewarm " + args, 1);  // one corpus module needs more HBM than a chip has
  EXPECT_EQ(rerun["cached"].get<size_t>(), before);
  EXPECT_GT(rerun["compiled"].get<int64_t>(), 0);  // killed before the end
  const int64_t total = rerun["cached"].get<int64_t>() + rerun["compiled"].get<int64_t>();
  EXPECT_EQ(StoredKeys().size(), static_cast<size_t>(total));
  json third = RunJson("prewarm " + args, 1);
  EXPECT_EQ(third["compiled"], 0);
  EXPECT_EQ(third["cached"], total);
}

}  // namespace
