// End-to-end tests of `kiln inspect` as a user meets it: a mistyped store
// path is refused and never created, KILN_DB is the default, every command
// prints a table or one JSON document with --json, and `explain` names the
// instruction that changed (with its line and both values) or the chip the
// module is cached for. The store is filled by `kiln prewarm`, as users do.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::testing::RunKiln;
using kiln::testing::RunResult;
using nlohmann::json;

// A training step whose learning rate is a constant, and an evaluation
// step over the same weights (same parameters, other body).
std::string TrainStep(const std::string& learning_rate) {
  return R"(HloModule train_step

ENTRY main {
  w = f32[16,128] parameter(0)
  g = f32[16,128] parameter(1)
  lr = f32[] constant()" + learning_rate + R"()
  lrb = f32[16,128] broadcast(lr), dimensions={}
  scaled = f32[16,128] multiply(g, lrb)
  ROOT updated = f32[16,128] subtract(w, scaled)
}
)";
}

constexpr const char* kEvalStep = R"(HloModule eval_step

ENTRY main {
  w = f32[16,128] parameter(0)
  x = f32[16,128] parameter(1)
  y = f32[16,128] multiply(w, x)
  z = f32[16,128] tanh(y)
  ROOT out = f32[16,128] add(z, x)
}
)";

class KilnInspectCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_inspect_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "kiln.db").string();
  }
  void TearDown() override {
    unsetenv("KILN_DB");
    fs::remove_all(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  // Fills the store with the train step at lr 0.001 (v5e) and the eval step.
  void Prewarm() {
    fs::create_directories(dir_ / "dump");
    Write("dump/train.hlo", TrainStep("0.001"));
    Write("dump/eval.hlo", kEvalStep);
    RunResult r = RunKiln("prewarm " + (dir_ / "dump").string() + " --db " + db_ + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(json::parse(r.out)["compiled"], 2) << r.out;
  }
  std::string Key(const std::string& file) { return RunKiln("fingerprint " + file).out.substr(0, 32); }

  fs::path dir_;
  std::string db_;
};

// Found by a new user: `kiln inspect --db x.db list` was refused (only
// `inspect list --db x.db` worked), and a key copied from `list` (every
// tenant's) was "no entry" for `show` and `evict` (tenant default only).
TEST_F(KilnInspectCliTest, OptionsGoBeforeOrAfterTheCommandAndKeysAreFoundInAnyTenant) {
  Prewarm();
  RunResult before = RunKiln("inspect --db " + db_ + " --json list");
  RunResult after = RunKiln("inspect list --db " + db_ + " --json");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(before.out, after.out);
  const json listed = json::parse(before.out);
  ASSERT_EQ(listed.size(), 2u);
  // The entry JSON is the API's: options an object, times with milliseconds.
  EXPECT_TRUE(listed[0]["options"].is_object()) << listed[0].dump();
  EXPECT_NE(listed[0]["created"].get<std::string>().find('.'), std::string::npos) << listed[0].dump();
  // Moved under another tenant, the key is still found by show (and named).
  const std::string bundle = (dir_ / "b.kbundle").string();
  ASSERT_EQ(RunKiln("inspect export " + bundle + " --db " + db_).exit_code, 0);
  const std::string other = (dir_ / "other.db").string();
  RunResult imported = RunKiln("inspect --db " + other + " import " + bundle + " --tenant alice");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const std::string key = listed[0]["key"];
  RunResult shown = RunKiln("inspect show " + key + " --db " + other + " --json");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(json::parse(shown.out)["tenant"], "alice") << shown.out;
  EXPECT_EQ(RunKiln("inspect show " + key + " --db " + other + " --tenant bob").exit_code, 1);
  RunResult evicted = RunKiln("inspect --db " + other + " evict " + key);
  EXPECT_EQ(evicted.exit_code, 0) << evicted.err;
  EXPECT_NE(evicted.out.find("alice/" + key), std::string::npos) << evicted.out;
}

TEST_F(KilnInspectCliTest, AMissingStoreIsRefusedAndNeverCreated) {
  const std::string typo = (dir_ / "typo.db").string();
  const std::string module = Write("m.hlo", TrainStep("0.001"));
  const std::string key(32, 'a');
  for (const std::string& command :
       std::vector<std::string>{"list", "stats", "show " + key, "verify", "evict " + key, "explain " + module, "tuning-records",
        "export " + (dir_ / "out.bundle").string()}) {
    SCOPED_TRACE(command);
    RunResult r = RunKiln("inspect " + command + " --db " + typo);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("no cache database at " + typo), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(typo));
    RunResult j = RunKiln("inspect " + command + " --db " + typo + " --json");
    EXPECT_EQ(j.exit_code, 1);
    ASSERT_TRUE(json::accept(j.out)) << j.out;
    EXPECT_EQ(json::parse(j.out)["error"]["code"], "not_found") << j.out;
    EXPECT_FALSE(fs::exists(typo));
  }
  // A file that is not a kiln store is refused, not turned into one.
  const std::string empty = Write("empty.db", "");
  RunResult r = RunKiln("inspect stats --db " + empty);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a kiln cache database"), std::string::npos) << r.err;
  // import is the one command that creates a store.
  Prewarm();
  const std::string bundle = (dir_ / "all.bundle").string();
  ASSERT_EQ(RunKiln("inspect export " + bundle + " --db " + db_).exit_code, 0);
  RunResult imported = RunKiln("inspect import " + bundle + " --db " + typo);
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_TRUE(fs::exists(typo));
}

TEST_F(KilnInspectCliTest, KilnDbIsTheDefaultStoreAndDbOverridesIt) {
  Prewarm();
  setenv("KILN_DB", db_.c_str(), 1);
  RunResult stats = RunKiln("inspect stats --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(json::parse(stats.out)["entries"], 2);
  RunResult list = RunKiln("inspect list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out).size(), 2u);
  RunResult overridden = RunKiln("inspect stats --db " + (dir_ / "other.db").string());
  EXPECT_EQ(overridden.exit_code, 1);
  EXPECT_NE(overridden.err.find("other.db"), std::string::npos) << overridden.err;
}

TEST_F(KilnInspectCliTest, EveryCommandPrintsATableOrOneJsonDocument) {
  Prewarm();
  const std::string train = Write("train.hlo", TrainStep("0.001"));
  const std::string key = Key(train);
  const std::string db = " --db " + db_;

  RunResult show = RunKiln("inspect show " + key + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_FALSE(json::accept(show.out)) << show.out;
  EXPECT_NE(show.out.find("key components:"), std::string::npos) << show.out;
  RunResult show_json = RunKiln("inspect show " + key + db + " --json");
  ASSERT_EQ(show_json.exit_code, 0) << show_json.err;
  const json shown = json::parse(show_json.out);
  EXPECT_EQ(shown["key"], key);
  EXPECT_TRUE(shown["last_hit"].is_null());  // never hit
  EXPECT_GT(shown["source_bytes"].get<int>(), 100);

  RunResult stats = RunKiln("inspect stats" + db);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_FALSE(json::accept(stats.out)) << stats.out;

  RunResult verify = RunKiln("inspect verify" + db + " --json");
  ASSERT_EQ(verify.exit_code, 0) << verify.err;
  const json verified = json::parse(verify.out);
  EXPECT_EQ(verified["checked"], 2);
  EXPECT_EQ(verified["ok"], 2);
  EXPECT_EQ(verified["healthy"], true);
  EXPECT_FALSE(json::accept(RunKiln("inspect verify" + db).out));

  RunResult explain = RunKiln("inspect explain " + train + db + " --json");
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_EQ(json::parse(explain.out)["cached"], true);

  RunResult evict = RunKiln("inspect evict " + key + db + " --json");
  ASSERT_EQ(evict.exit_code, 0) << evict.err;
  EXPECT_EQ(json::parse(evict.out)["evicted"], true);
  RunResult again = RunKiln("inspect evict " + key + db + " --json");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(json::parse(again.out)["error"]["code"], "not_found") << again.out;

  RunResult parsed = RunKiln("parse --json " + train + " " + (dir_ / "absent.hlo").string());
  EXPECT_EQ(parsed.exit_code, 1);
  const json files = json::parse(parsed.out);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["module"], "train_step");
  EXPECT_EQ(files[0]["instructions"], 6);
  EXPECT_EQ(files[0]["parameters"], json::array({"f32[16,128]", "f32[16,128]"}));
  EXPECT_EQ(files[1]["error"]["code"], "not_found");

  const std::string bad = Write("bad.hlo", "HloModule m\nENTRY e {\n  ROOT x = f32[2] bogus()\n}\n");
  RunResult fingerprints = RunKiln("fingerprint --json --chip v6e " + train + " " + bad);
  EXPECT_EQ(fingerprints.exit_code, 1);
  const json keys = json::parse(fingerprints.out);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0]["key"], RunKiln("fingerprint --chip v6e " + train).out.substr(0, 32));
  EXPECT_EQ(keys[0]["chip"], "v6e");
  EXPECT_EQ(keys[1]["error"]["line"], 3) << keys[1];
}

TEST_F(KilnInspectCliTest, ExplainPointsAtTheChangedConstantWithBothValues) {
  Prewarm();
  const std::string changed = Write("train_lr2.hlo", TrainStep("0.002"));
  RunResult table = RunKiln("inspect explain " + changed + " --db " + db_);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("miss: %lr (line 6) is constant(0.002) here, constant(0.001) in the cached module"),
            std::string::npos)
      << table.out;

  RunResult r = RunKiln("inspect explain " + changed + " --db " + db_ + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json answer = json::parse(r.out);
  EXPECT_EQ(answer["cached"], false);
  // The nearest entry is the train step, not the eval step that shares
  // every parameter too.
  EXPECT_EQ(answer["nearest"]["key"], Key(Write("train.hlo", TrainStep("0.001"))));
  EXPECT_EQ(answer["changes_total"], 1);
  ASSERT_EQ(answer["changes"].size(), 1u);
  const json& change = answer["changes"][0];
  EXPECT_EQ(change["instruction"], "lr");
  EXPECT_EQ(change["line"], 6);
  EXPECT_EQ(change["value_only"], true);
  EXPECT_EQ(change["request"], "%lr = f32[] constant(0.002)");
  EXPECT_EQ(change["cached"], "%lr = f32[] constant(0.001)");
}

TEST_F(KilnInspectCliTest, ExplainSaysWhichChipTheModuleIsCachedFor) {
  Prewarm();
  const std::string train = Write("train.hlo", TrainStep("0.001"));
  RunResult r = RunKiln("inspect explain " + train + " --chip v6e --db " + db_ + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json answer = json::parse(r.out);
  EXPECT_EQ(answer["cached"], false);
  EXPECT_EQ(answer["message"], "miss: this module is cached for v5e, not v6e");
  EXPECT_EQ(answer["nearest"]["chip"], "v5e");
  EXPECT_EQ(answer["nearest"]["key"], Key(train));
  // A module the store has never seen any part of says so.
  const std::string unrelated = Write("u.hlo", "HloModule u\nENTRY e {\n  ROOT p = s32[3] parameter(0)\n}\n");
  RunResult none = RunKiln("inspect explain " + unrelated + " --db " + db_);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("no cached entry shares any part"), std::string::npos) << none.out;
}

TEST_F(KilnInspectCliTest, RecompilesNamesWhatChangedBetweenAModulesPrograms) {
  // A dump folder with one step compiled at three batch sizes: each file
  // a module named jit_train_step, as --xla_dump_to would leave them.
  fs::create_directories(dir_ / "dump");
  for (int batch : {8, 12, 24}) {
    std::string text = TrainStep("0.001");
    for (size_t at = text.find("16,128"); at != std::string::npos; at = text.find("16,128", at)) {
      text.replace(at, 6, std::to_string(batch) + ",128");
    }
    Write("dump/module_000" + std::to_string(batch) + ".jit_train_step.before_optimizations.txt", text);
  }
  RunResult prewarm = RunKiln("prewarm " + (dir_ / "dump").string() + " --db " + db_ + " --json");
  ASSERT_EQ(prewarm.exit_code, 0) << prewarm.err;

  RunResult table = RunKiln("inspect recompiles --db " + db_);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("parameter 0 dimension 0: 8, 12, 24"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("pad it to a few fixed sizes (e.g. 8, 16, 32)"), std::string::npos) << table.out;

  RunResult r = RunKiln("inspect recompiles --db " + db_ + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);
  ASSERT_EQ(report["modules"].size(), 1u);
  EXPECT_EQ(report["modules"][0]["module"], "train_step");
  EXPECT_EQ(report["modules"][0]["keys"], 3);
  EXPECT_EQ(report["modules"][0]["clients"], json::array({"kiln prewarm"}));
  EXPECT_EQ(report["storms"], 1);
  RunResult none = RunKiln("inspect recompiles --db " + db_ + " --min-keys 4 --json");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(json::parse(none.out)["modules"].empty());
  EXPECT_EQ(RunKiln("inspect recompiles --db " + db_ + " --min-keys 1").exit_code, 2);  // a usage error
}

}  // namespace
