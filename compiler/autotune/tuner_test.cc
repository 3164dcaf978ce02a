#include "compiler/autotune/tuner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "compiler/autotune/rank_correlation.h"
#include "compiler/autotune/same_computation.h"
#include "compiler/driver/plan_module.h"
#include "compiler/passes/pass_test_util.h"
#include "runtime/format/program.h"

namespace kiln::autotune {
namespace {

using passes::testing::ParseVerified;

// Two loop chains, a dot with an epilogue and a reduction: fused edges to
// un-fuse, refusals to fuse (a reduction's result broadcast back over its
// operand's space is never computed in the reduction's kernel: a legality
// refusal), and tiles to choose.
constexpr std::string_view kModule = R"(HloModule tune
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[512,1024] parameter(0)
  w = f32[1024,512] parameter(1)
  bias = f32[512] parameter(2)
  s = f32[512,1024] sine(x)
  m = f32[512,1024] multiply(s, x)
  d = f32[512,512] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[512,512] broadcast(bias), dimensions={1}
  o = f32[512,512] add(d, bb)
  t = f32[512,512] tanh(o)
  z = f32[] constant(0)
  r = f32[512] reduce(t, z), dimensions={1}, to_apply=add
  rn = f32[512,512] broadcast(r), dimensions={0}
  n = f32[512,512] negate(t)
  ROOT out = (f32[512,512], f32[512,512]) tuple(rn, n)
})";

// Times a kernel from what the executable says about it alone (its cost
// estimate, its grid, its HLO), so a run is a pure function of the bytes;
// `tweak` may change the answer for strict (candidate) measurements.
class FakeRunner final : public Runner {
 public:
  std::function<double(double us)> candidate_factor = [](double us) { return us; };
  Status reference_status = Ok();
  Status compare_status = Ok();
  int compares = 0;
  int measures = 0;

  Result<Measurement> Measure(std::span<const uint8_t> executable, bool strict_tiling) override {
    ++measures;
    KILN_ASSIGN_OR_RETURN(runtime::Program program, runtime::ParseProgram(executable));
    Measurement m;
    for (const runtime::ProgramKernel& k : program.kernels) {
      double steps = 1;
      for (int64_t g : k.tiling.grid) steps *= static_cast<double>(g);
      // Fewer, larger blocks are not always better: a fixed cost per step
      // and a penalty for very large blocks.
      double us = k.estimated_seconds * 1e6 + 0.35 * steps + (steps <= 2 ? 3.0 : 0.0) +
                  static_cast<double>(k.hlo.size() % 7) * 0.1;
      if (strict_tiling) us = candidate_factor(us);
      m.kernels.push_back({k.name, k.kind, std::to_string(static_cast<int64_t>(steps)), us, std::nullopt});
      m.kernel_us += us;
    }
    m.device_us = m.kernel_us;
    return m;
  }
  Status SetReference(std::span<const uint8_t>, uint64_t) override { return reference_status; }
  Status CompareToReference(std::span<const uint8_t>) override {
    ++compares;
    return compare_status;
  }
  // Kernel-by-kernel checks: off unless a test turns them on.
  bool checks_kernels = false;
  Result<KernelCheck> kernel_check = KernelCheck{};
  int kernel_checks = 0;
  bool ChecksKernels() const override { return checks_kernels; }
  Result<KernelCheck> CompareChangedKernels(std::span<const uint8_t>, std::span<const uint8_t>) override {
    ++kernel_checks;
    return kernel_check;
  }
};

// The first kernel of kModule alone: a module that shares a subgraph with
// kModule, for transfer between tunings of different modules.
constexpr std::string_view kLoopModule = R"(HloModule tune_loop
ENTRY e {
  x = f32[512,1024] parameter(0)
  s = f32[512,1024] sine(x)
  ROOT m = f32[512,1024] multiply(s, x)
})";

Result<TuneResult> TuneWith(FakeRunner& runner, const TuneOptions& options, RecordStore* records = nullptr,
                            std::string_view text = kModule) {
  auto module = ParseVerified(text);
  if (module == nullptr) return InternalError("parse");
  return Tune(*module, driver::CompileOptions{}, runner, records, options);
}

TuneOptions Trials(int64_t n, uint64_t seed = 3) {
  TuneOptions options;
  options.max_trials = n;
  options.seed = seed;
  return options;
}

TEST(TunerTest, SameSeedAndTrialsGiveTheSameResult) {
  FakeRunner a, b;
  auto first = TuneWith(a, Trials(40));
  auto second = TuneWith(b, Trials(40));
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_TRUE(first->accepted) << first->decision;
  EXPECT_EQ(first->trials, second->trials);
  EXPECT_LE(first->trials, 40);
  EXPECT_EQ(first->tuned_us, second->tuned_us);
  EXPECT_EQ(first->edits, second->edits);
  EXPECT_EQ(first->edge_flips, second->edge_flips);
  EXPECT_EQ(first->tuned_executable.empty(), second->tuned_executable.empty());
  EXPECT_EQ(first->model_skipped, second->model_skipped);
  EXPECT_LT(first->tuned_us, first->heuristic_us);
  EXPECT_NEAR(first->tiling_gain_us + first->fusion_gain_us, first->heuristic_us - first->tuned_us, 1e-9);
  ASSERT_TRUE(first->spearman_analytic.has_value());
  EXPECT_GT(first->ranked_kernels, 3);
}

TEST(TunerTest, FlipsOnlyProfitabilityDecisions) {
  auto module = ParseVerified(kModule);
  ASSERT_NE(module, nullptr);
  driver::CompileOptions options;
  auto heuristic = driver::PlanModule(*module, options);
  ASSERT_TRUE(heuristic);
  bool any_legality = false;
  for (const fusion::FusionEdge& e : heuristic->plan.edges) any_legality |= e.kind == fusion::DecisionKind::kLegality;
  ASSERT_TRUE(any_legality);
  size_t flips = 0;
  for (uint64_t seed : {1, 2, 3, 4}) {
    FakeRunner runner;
    auto result = TuneWith(runner, Trials(60, seed));
    ASSERT_TRUE(result) << result.error().ToString();
    flips += result->edits.flipped_edges.size();
    for (int64_t e : result->edits.flipped_edges) {
      ASSERT_LT(e, static_cast<int64_t>(heuristic->plan.edges.size()));
      EXPECT_EQ(heuristic->plan.edges[e].kind, fusion::DecisionKind::kProfitability) << "seed " << seed << " edge " << e;
    }
  }
  EXPECT_GT(flips, 0u);  // the search did flip decisions
}

TEST(TunerTest, ASlowerPlanIsNeverReturned) {
  FakeRunner runner;
  // Every candidate, even one kernel doing all the work, measures slower.
  runner.candidate_factor = [](double us) { return us * 4 + 10; };
  auto result = TuneWith(runner, Trials(30));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_FALSE(result->accepted);
  EXPECT_TRUE(result->tuned_executable.empty());
  EXPECT_EQ(result->tuned_us, result->heuristic_us);
  EXPECT_NE(result->decision.find("heuristic stays"), std::string::npos) << result->decision;
  EXPECT_FALSE(result->heuristic_executable.empty());
}

TEST(TunerTest, APlanWhoseOutputsDifferIsNeverReturned) {
  FakeRunner runner;
  runner.compare_status = FailedPreconditionError("outputs differ from the heuristic's: at {0} index [3]");
  auto result = TuneWith(runner, Trials(40));
  ASSERT_TRUE(result) << result.error().ToString();
  ASSERT_TRUE(result->fusion_searched);
  // The runner's comparison refuses every plan with flips; only one that
  // computes exactly what the heuristic does (its tiles alone, the same
  // kernels) may pass.
  EXPECT_GT(runner.compares, 0);
  EXPECT_GE(result->rejected_by_verification, 1);
  EXPECT_NE(result->decision.find("outputs differ"), std::string::npos) << result->decision;
  if (result->accepted) {
    EXPECT_TRUE(result->edits.flipped_edges.empty());
    EXPECT_EQ(result->verification, "same computation");
    EXPECT_TRUE(SameComputation(result->heuristic_executable, result->tuned_executable));
  } else {
    EXPECT_TRUE(result->tuned_executable.empty());
  }
}

TEST(TunerTest, WithoutComparableOutputsOnlyTilesAreSearched) {
  FakeRunner runner;
  runner.reference_status = ResourceExhaustedError("too large to evaluate");
  auto result = TuneWith(runner, Trials(30));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_FALSE(result->fusion_searched);
  EXPECT_NE(result->fusion_note.find("too large to evaluate"), std::string::npos);
  EXPECT_TRUE(result->edits.flipped_edges.empty());
  EXPECT_EQ(runner.compares, 0);
  ASSERT_TRUE(result->accepted) << result->decision;
  EXPECT_GT(result->tile_changes, 0);
  EXPECT_EQ(result->fusion_gain_us, 0);
  auto program = runtime::ParseProgram(result->tuned_executable);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->plan, "tuned");
  EXPECT_EQ(program->key, result->key);
}

// A cheap value read by more consumers than the heuristic lets it be
// recomputed in (eight): it is materialized for all twelve. Its kernel goes
// away only when they all absorb it together; any fewer leaves the kernel
// and gains nothing.
constexpr int kWideConsumers = 12;

std::string WideCheapValueModule() {
  std::string text = "HloModule wide\nENTRY e {\n  p = f32[256,256] parameter(0)\n"
                     "  b = f32[256,256] negate(p)\n";
  std::string outputs, shapes;
  for (int i = 0; i < kWideConsumers; ++i) {
    const std::string n = std::to_string(i);
    text += "  x" + n + " = f32[256,256] parameter(" + std::to_string(i + 1) + ")\n";
    text += "  c" + n + " = f32[256,256] " + (i % 2 == 0 ? "add" : "multiply") + "(x" + n + ", b)\n";
    outputs += (i ? ", c" : "c") + n;
    shapes += std::string(i ? ", " : "") + "f32[256,256]";
  }
  return text + "  ROOT out = (" + shapes + ") tuple(" + outputs + ")\n}\n";
}

TEST(TunerTest, AProducerRefusedByManyConsumersIsAbsorbedByAllAtOnce) {
  const std::string text = WideCheapValueModule();
  auto module = ParseVerified(text);
  ASSERT_NE(module, nullptr);
  driver::CompileOptions options;
  auto heuristic = driver::PlanModule(*module, options);
  ASSERT_TRUE(heuristic);
  int64_t b = -1;
  for (const auto& i : module->entry()->instructions()) {
    if (i->name() == "b") b = i->index_in_parent();
  }
  ASSERT_GE(b, 0);
  int refused = 0;
  for (const fusion::FusionEdge& e : heuristic->plan.edges) {
    if (e.producer != b || e.is_sibling() || e.fused) continue;
    EXPECT_EQ(e.kind, fusion::DecisionKind::kProfitability);
    ++refused;
  }
  ASSERT_GE(refused, 3);
  ASSERT_GE(heuristic->plan.root_kernel[b], 0) << "the heuristic materializes b";

  FakeRunner runner;
  auto tuned_module = ParseVerified(text);
  auto result = Tune(*tuned_module, options, runner, nullptr, Trials(40));
  ASSERT_TRUE(result) << result.error().ToString();
  ASSERT_TRUE(result->accepted) << result->decision;
  int absorbed = 0;
  for (const std::string& flip : result->edge_flips) absorbed += flip.starts_with("%b -> ") && flip.ends_with(" fused");
  EXPECT_EQ(absorbed, refused) << ::testing::PrintToString(result->edge_flips);
  auto program = runtime::ParseProgram(result->tuned_executable);
  ASSERT_TRUE(program);
  for (const runtime::ProgramKernel& k : program->kernels) EXPECT_NE(k.name, "b");
  EXPECT_GT(result->fusion_gain_us, 0);
}

TEST(TunerTest, WhenOutputsCannotBeComparedWholeFusionIsCheckedKernelByKernel) {
  FakeRunner runner;
  runner.reference_status = ResourceExhaustedError("too large to evaluate");
  runner.checks_kernels = true;
  runner.kernel_check = KernelCheck{.changed_kernels = 2, .regions = 1, .compared_values = 2};
  auto module = ParseVerified(WideCheapValueModule());
  ASSERT_NE(module, nullptr);
  auto result = Tune(*module, driver::CompileOptions{}, runner, nullptr, Trials(40));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_TRUE(result->fusion_searched) << result->fusion_note;
  EXPECT_NE(result->fusion_note.find("checked kernel by kernel"), std::string::npos) << result->fusion_note;
  ASSERT_TRUE(result->accepted) << result->decision;
  EXPECT_FALSE(result->edits.flipped_edges.empty());
  EXPECT_EQ(result->verification, "kernel by kernel");
  EXPECT_EQ(result->verified_kernels, 2);
  EXPECT_GE(runner.kernel_checks, 1);
  EXPECT_EQ(runner.compares, 0) << "nothing is compared whole";
  EXPECT_GT(result->fusion_gain_us, 0);
}

TEST(TunerTest, KernelsThatCannotBeCheckedKeepTheHeuristicsForm) {
  FakeRunner runner;
  runner.reference_status = ResourceExhaustedError("too large to evaluate");
  runner.checks_kernels = true;
  // One consumer's kernel is too large to check: the flip into it is
  // undone, and without it absorbing %b gains nothing (its kernel stays).
  runner.kernel_check = KernelCheck{.refused_instructions = {"c0"}, .refused_why = "c0 is over the budget"};
  auto module = ParseVerified(WideCheapValueModule());
  ASSERT_NE(module, nullptr);
  auto result = Tune(*module, driver::CompileOptions{}, runner, nullptr, Trials(40));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_NE(result->decision.find("c0 is over the budget"), std::string::npos) << result->decision;
  EXPECT_GE(result->kept_heuristic_instructions, 1);
  EXPECT_GE(result->rejected_by_verification, 1);
  for (const std::string& flip : result->edge_flips) EXPECT_EQ(flip.find("%c0"), std::string::npos) << flip;
  if (result->accepted) EXPECT_NE(result->verification, "kernel by kernel") << result->decision;
}

// An optimizer step: six updates of one shape share only the 4-byte
// learning rate, so the heuristic leaves them apart; the tuner merges them
// (the launches they save are worth more than the larger kernel).
TEST(TunerTest, SmallUpdatesSharingOnlyAScalarAreMergedByTheSearch) {
  constexpr int kUpdates = 6;
  std::string text = "HloModule adam\nENTRY e {\n  lr = f32[] parameter(0)\n";
  std::string outputs, shapes;
  for (int i = 0; i < kUpdates; ++i) {
    const std::string n = std::to_string(i);
    text += "  w" + n + " = f32[16] parameter(" + std::to_string(2 * i + 1) + ")\n";
    text += "  g" + n + " = f32[16] parameter(" + std::to_string(2 * i + 2) + ")\n";
    text += "  s" + n + " = f32[16] broadcast(lr), dimensions={}\n";
    text += "  d" + n + " = f32[16] multiply(s" + n + ", g" + n + ")\n";
    text += "  u" + n + " = f32[16] subtract(w" + n + ", d" + n + ")\n";
    outputs += (i ? ", u" : "u") + n;
    shapes += std::string(i ? ", " : "") + "f32[16]";
  }
  text += "  ROOT out = (" + shapes + ") tuple(" + outputs + ")\n}\n";
  auto module = ParseVerified(text);
  ASSERT_NE(module, nullptr);
  driver::CompileOptions options;
  auto heuristic = driver::PlanModule(*module, options);
  ASSERT_TRUE(heuristic);
  ASSERT_EQ(heuristic->plan.kernels.size(), static_cast<size_t>(kUpdates));

  FakeRunner runner;
  auto tuned_module = ParseVerified(text);
  auto result = Tune(*tuned_module, options, runner, nullptr, Trials(60));
  ASSERT_TRUE(result) << result.error().ToString();
  ASSERT_TRUE(result->accepted) << result->decision;
  int merged = 0;
  for (const std::string& flip : result->edge_flips) {
    merged += flip.find("(siblings reading %lr) fused") != std::string::npos;
  }
  EXPECT_GE(merged, 1) << ::testing::PrintToString(result->edge_flips);
  auto program = runtime::ParseProgram(result->tuned_executable);
  ASSERT_TRUE(program);
  EXPECT_LT(program->kernels.size(), static_cast<size_t>(kUpdates));
  EXPECT_GT(result->fusion_gain_us, 0);
  EXPECT_GT(runner.compares, 0) << "a merged plan's outputs are checked against the heuristic's";
}

// Records of a first tuning let a second one start from the best tiles.
class MapRecords final : public RecordStore {
 public:
  Status Add(const TuningTrial& trial) override {
    trials.push_back(trial);
    return Ok();
  }
  Result<std::optional<TuningTrial>> Best(const std::string& key, const std::string& chip) override {
    std::optional<TuningTrial> best;
    for (const TuningTrial& t : trials) {
      if (t.workload_key != key || t.chip != chip || !t.measured_us) continue;
      if (!best || *t.measured_us < *best->measured_us) best = t;
    }
    return best;
  }
  std::vector<TuningTrial> trials;
};

// A tuning of a module that holds kModule's first kernel alone stores its
// best tile under the kernel's subgraph; tuning kModule then starts that
// kernel on it.
TEST(TunerTest, RecordsTransferTheBestTilesToTheNextTuning) {
  MapRecords records;
  FakeRunner first_runner;
  auto first = TuneWith(first_runner, Trials(40), &records, kLoopModule);
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first->transfer_hits, 0);
  ASSERT_FALSE(records.trials.empty());
  FakeRunner second_runner;
  auto second = TuneWith(second_runner, Trials(3), &records);
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_GT(second->transfer_hits, 0);
  // One trial from the transferred start, and the final check.
  EXPECT_LE(second->trials, 3);
  EXPECT_TRUE(second->accepted) << second->decision;
}

TEST(TunerTest, BadBudgetsAreRefused) {
  TuneOptions none;
  EXPECT_FALSE(CheckBudget(none));
  TuneOptions negative;
  negative.max_trials = -1;
  EXPECT_FALSE(CheckBudget(negative));
  TuneOptions absurd;
  absurd.max_trials = kMaxTrials + 1;
  EXPECT_NE(CheckBudget(absurd).error().message.find("absurd"), std::string::npos);
  TuneOptions forever;
  forever.max_seconds = 1e12;
  EXPECT_FALSE(CheckBudget(forever));
  TuneOptions nan;
  nan.max_seconds = std::nan("");
  EXPECT_FALSE(CheckBudget(nan));
  EXPECT_TRUE(CheckBudget(Trials(5)));
  FakeRunner runner;
  EXPECT_FALSE(TuneWith(runner, none));
}

TEST(TunerTest, CancelledBetweenTrialsStopsWithRecordsOfWhatWasMeasured) {
  FakeRunner runner;
  MapRecords records;
  TuneOptions options = Trials(40);
  // The heuristic's measurement and three trials, then the caller gives up.
  options.cancelled = [&runner] { return runner.measures >= 4; };
  auto result = TuneWith(runner, options, &records);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_NE(result.error().message.find("cancelled after 3 trials"), std::string::npos) << result.error().message;
  EXPECT_EQ(runner.measures, 4) << "no trial starts once cancelled";
  EXPECT_EQ(runner.compares, 0) << "no final check";
  EXPECT_FALSE(records.trials.empty());

  FakeRunner early;
  TuneOptions before = Trials(40);
  before.cancelled = [] { return true; };
  auto none = TuneWith(early, before);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(early.measures, 1) << "only the heuristic was timed";
}

TEST(RankCorrelationTest, SpearmanOfOrderedReversedAndTiedSeries) {
  std::vector<double> a = {1, 2, 3, 4, 5};
  std::vector<double> up = {10, 20, 30, 40, 500};
  std::vector<double> down = {5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(*SpearmanCorrelation(a, up), 1.0);
  EXPECT_DOUBLE_EQ(*SpearmanCorrelation(a, down), -1.0);
  std::vector<double> tied = {1, 1, 2, 2, 3};
  double r = *SpearmanCorrelation(a, tied);
  EXPECT_GT(r, 0.9);
  EXPECT_LT(r, 1.0);
  EXPECT_FALSE(SpearmanCorrelation(a, std::vector<double>{1, 1, 1, 1, 1}));
  EXPECT_FALSE(SpearmanCorrelation(std::vector<double>{1, 2}, std::vector<double>{1, 2}));
}

}  // namespace
}  // namespace kiln::autotune
