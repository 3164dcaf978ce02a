// RecompileReport: grouping by name, the dimensions and constants that
// changed, and the suggestion.
#include "server/service/recompile_report.h"

#include <map>

#include <gtest/gtest.h>

namespace kiln::service {
namespace {

using nlohmann::json;

cache::CompileRecord Program(const std::string& name, uint64_t key, std::vector<std::string> parameters,
                             int64_t at_ms, const std::string& client = "") {
  return cache::CompileRecord{.tenant = "alice",
                              .module_name = name,
                              .chip = "v5e",
                              .key = hlo::Hash128{0, key},
                              .client = client,
                              .parameters = std::move(parameters),
                              .compile_seconds = 2,
                              .first_ms = at_ms,
                              .last_ms = at_ms};
}

std::string Step(const std::string& lr, const std::string& momentum = "0.9") {
  return "HloModule step\nENTRY main {\n  w = f32[8,128] parameter(0)\n  lr = f32[] constant(" + lr +
         ")\n  mu = f32[] constant(" + momentum + ")\n  s = f32[] multiply(lr, mu)\n"
         "  b = f32[8,128] broadcast(s), dimensions={}\n  ROOT m = f32[8,128] multiply(w, b)\n}\n";
}

SourceReader Sources(std::map<uint64_t, std::string> texts) {
  return [texts = std::move(texts)](const cache::EntryId& id) -> std::optional<std::string> {
    auto it = texts.find(id.key.low);
    if (it == texts.end()) return std::nullopt;
    return it->second;
  };
}

TEST(RecompileReportTest, NamesTheChangingDimensionWithEverySizeAndSuggestsBuckets) {
  const std::vector<cache::CompileRecord> records = {
      Program("train", 1, {"f32[16,128]", "f32[]"}, 1, "job/a"),
      Program("train", 2, {"f32[17,128]", "f32[]"}, 2, "job/b"),
      Program("train", 3, {"f32[33,128]", "f32[]"}, 3, "job/a"),
      Program("single", 4, {"f32[4]"}, 4),
  };
  const json report = RecompileReport(records, Sources({}));
  ASSERT_EQ(report["modules"].size(), 1u);  // "single" has one program
  EXPECT_EQ(report["storms"], 1);
  const json& train = report["modules"][0];
  EXPECT_EQ(train["module"], "train");
  EXPECT_EQ(train["keys"], 3);
  EXPECT_EQ(train["compiles"], 3);
  EXPECT_DOUBLE_EQ(train["compile_seconds"].get<double>(), 6.0);
  EXPECT_EQ(train["storm"], true);
  EXPECT_EQ(train["clients"], json::array({"job/a", "job/b"}));
  ASSERT_EQ(train["changing_dimensions"].size(), 1u);
  EXPECT_EQ(train["changing_dimensions"][0]["parameter"], 0);
  EXPECT_EQ(train["changing_dimensions"][0]["dimension"], 0);
  EXPECT_EQ(train["changing_dimensions"][0]["values"], json::array({16, 17, 33}));
  EXPECT_EQ(train["suggestion"],
            "parameter 0 dimension 0 took 3 sizes (16, 17, 33): pad it to a few fixed sizes (e.g. 16, 32, 64) so one "
            "program serves several");
}

TEST(RecompileReportTest, NamesTheChangingConstantsFromTheKeptTexts) {
  const std::vector<cache::CompileRecord> records = {
      Program("step", 1, {"f32[8,128]"}, 1),
      Program("step", 2, {"f32[8,128]"}, 2),
      Program("step", 3, {"f32[8,128]"}, 3),
  };
  const json report =
      RecompileReport(records, Sources({{1, Step("0.001")}, {2, Step("0.002")}, {3, Step("0.004", "0.95")}}));
  ASSERT_EQ(report["modules"].size(), 1u);
  const json& step = report["modules"][0];
  EXPECT_TRUE(step["changing_dimensions"].empty());
  ASSERT_EQ(step["changing_constants"].size(), 2u);
  EXPECT_EQ(step["changing_constants"][0]["instruction"], "lr");
  EXPECT_EQ(step["changing_constants"][0]["values"], json::array({"0.001", "0.002", "0.004"}));
  EXPECT_EQ(step["changing_constants"][1]["instruction"], "mu");
  EXPECT_EQ(step["changing_constants"][1]["values"], json::array({"0.9", "0.95"}));
  EXPECT_EQ(step["other_changes"], 0);
  EXPECT_EQ(step["suggestion"],
            "constant %lr took 3 values (0.001, 0.002, 0.004): pass it as an input instead of baking it into the "
            "program");
}

TEST(RecompileReportTest, SaysWhenTheTextsAreGoneAndWhenOnlyTheRankChanges) {
  const std::vector<cache::CompileRecord> records = {
      Program("flat", 1, {"f32[8]"}, 1),
      Program("flat", 2, {"f32[8,2]"}, 2),
  };
  const json report = RecompileReport(records, Sources({}));
  const json& flat = report["modules"][0];
  ASSERT_EQ(flat["changing_dimensions"].size(), 1u);
  EXPECT_EQ(flat["changing_dimensions"][0]["rank_changes"], true);
  EXPECT_EQ(flat["storm"], false);
  EXPECT_EQ(flat["suggestion"], "2 programs; their texts were not kept, so what changed is unknown");
}

TEST(RecompileReportTest, TheCostliestNamesComeFirst) {
  const std::vector<cache::CompileRecord> records = {
      Program("a", 1, {"f32[1]"}, 1), Program("a", 2, {"f32[2]"}, 2),
      Program("b", 3, {"f32[1]"}, 3), Program("b", 4, {"f32[2]"}, 4), Program("b", 5, {"f32[3]"}, 5),
  };
  const json report = RecompileReport(records, Sources({}));
  ASSERT_EQ(report["modules"].size(), 2u);
  EXPECT_EQ(report["modules"][0]["module"], "b");
  EXPECT_EQ(report["modules"][1]["module"], "a");
}


// Found with a busy store: every module named main (126 programs of many
// models) was one "storm". A program is a name, a chip and a structure.
TEST(RecompileReportTest, ProgramsThatOnlyShareANameAreApart) {
  std::vector<cache::CompileRecord> records;
  for (uint64_t k = 1; k <= 6; ++k) {
    records.push_back(Program("main", k, {"f32[" + std::to_string(k) + ",128]"}, static_cast<int64_t>(k)));
    records.back().structure = "model" + std::to_string(k);  // six different models
  }
  // The store returns a program's rows together (ordered by structure).
  const json apart = RecompileReport(records, Sources({}));
  EXPECT_EQ(apart["storms"], 0);
  EXPECT_TRUE(apart["modules"].empty()) << apart.dump();
  for (cache::CompileRecord& record : records) record.structure = "one-model";
  const json together = RecompileReport(records, Sources({}));
  EXPECT_EQ(together["storms"], 1);
  ASSERT_EQ(together["modules"].size(), 1u);
  EXPECT_EQ(together["modules"][0]["structure"], "one-model");
}

// Found with a busy store: two compiles of `add` that differ only in
// topology were said to "differ in structure".
TEST(RecompileReportTest, AProgramCompiledForSeveralOptionSetsIsNoStorm) {
  std::vector<cache::CompileRecord> records;
  const std::vector<std::string> options = {"plan=heuristic", "plan=heuristic;topology=2x2",
                                            "plan=heuristic;topology=2x4"};
  for (uint64_t k = 0; k < options.size(); ++k) {
    records.push_back(Program("add", k + 1, {"f32[8,128]"}, static_cast<int64_t>(k)));
    records.back().structure = "add-structure";
    records.back().options = options[k];
  }
  const json report = RecompileReport(records, Sources({}));
  EXPECT_EQ(report["storms"], 0);
  ASSERT_EQ(report["modules"].size(), 1u);
  const json& add = report["modules"][0];
  EXPECT_EQ(add["storm"], false);
  EXPECT_EQ(add["changing_options"]["topology"], json::array({"", "2x2", "2x4"})) << add.dump();
  EXPECT_NE(add["suggestion"].get<std::string>().find("other options (topology none, 2x2, 2x4)"), std::string::npos)
      << add["suggestion"];
  EXPECT_EQ(add["suggestion"].get<std::string>().find("structure"), std::string::npos) << add["suggestion"];
}

}  // namespace
}  // namespace kiln::service
