#include "server/service/tune_jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>
#include <thread>

namespace kiln::service {
namespace {

TuneJobSpec SpecFor(std::string tenant, uint64_t key) {
  TuneJobSpec spec;
  spec.entry = cache::EntryId{std::move(tenant), hlo::Hash128{0, key}, "v5e", 1};
  spec.hlo = "HloModule m";
  spec.budget.max_trials = 8;
  return spec;
}

// Work that holds every job until released (or cancelled), then reports a
// gain of 10 us over 100 us in 8 trials.
struct HeldWork {
  std::atomic<bool> release{false};
  std::atomic<int> started{0};

  TuneJobs::Work work() {
    return [this](const TuneJobSpec&, TuneProgress& progress,
                  const std::function<bool()>& cancelled) -> Result<TuneOutcome> {
      ++started;
      progress.heuristic_us = 100;
      progress.trials = 1;
      while (!release.load()) {
        if (cancelled()) return CancelledError("tuning cancelled after 1 trials");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return TuneOutcome{.trials = 8, .heuristic_us = 100, .tuned_us = 90, .accepted = true, .stored = true,
                         .decision = "accepted"};
    };
  }
};

TuneJobView WaitForEnd(TuneJobs& jobs, const std::string& tenant, const std::string& id) {
  for (;;) {
    std::optional<TuneJobView> view = jobs.Find(tenant, id);
    if (!view) return {};
    if (view->state != TuneState::kQueued && view->state != TuneState::kRunning) return *view;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void WaitForStart(HeldWork& held, int n) {
  while (held.started.load() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(TuneJobsTest, AJobRunsToDoneAndIsCounted) {
  HeldWork held;
  TuneJobs jobs({}, held.work());
  auto submitted = jobs.Submit(SpecFor("a", 1));
  ASSERT_TRUE(submitted) << submitted.error().ToString();
  EXPECT_TRUE(submitted->created);
  EXPECT_EQ(submitted->job.id.size(), 16u);
  held.release = true;
  TuneJobView done = WaitForEnd(jobs, "a", submitted->job.id);
  EXPECT_EQ(done.state, TuneState::kDone);
  ASSERT_TRUE(done.outcome);
  EXPECT_EQ(done.trials, 8);
  EXPECT_EQ(done.best_us, 90);
  EXPECT_TRUE(done.finished_ms);
  TuneCounts counts = jobs.counts();
  EXPECT_EQ(counts.done, 1);
  EXPECT_EQ(counts.trials, 8);
  EXPECT_DOUBLE_EQ(counts.saved_us, 10);
}

TEST(TuneJobsTest, TheSameEntryAnswersItsActiveJobAndTheQueueIsBounded) {
  HeldWork held;
  TuneJobs::Options options;
  options.queue_capacity = 1;
  TuneJobs jobs(options, held.work());
  auto first = jobs.Submit(SpecFor("a", 1));
  ASSERT_TRUE(first);
  WaitForStart(held, 1);
  auto again = jobs.Submit(SpecFor("a", 1));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.id, first->job.id);
  EXPECT_EQ(again->job.state, TuneState::kRunning);
  ASSERT_TRUE(jobs.Active("a", hlo::Hash128{0, 1}));
  EXPECT_FALSE(jobs.Active("b", hlo::Hash128{0, 1})) << "another tenant's entry of the same key is another entry";

  ASSERT_TRUE(jobs.Submit(SpecFor("a", 2)));  // waits behind the first
  auto full = jobs.Submit(SpecFor("b", 3));
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(full.error().reason(), kTuneQueueFull);
  held.release = true;
}

TEST(TuneJobsTest, CancelEndsQueuedJobsAtOnceAndRunningOnesBetweenTrials) {
  HeldWork held;
  TuneJobs jobs({}, held.work());
  auto running = jobs.Submit(SpecFor("a", 1));
  auto queued = jobs.Submit(SpecFor("a", 2));
  ASSERT_TRUE(running && queued);
  WaitForStart(held, 1);

  auto cancelled = jobs.Cancel("a", queued->job.id);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->state, TuneState::kCancelled);

  auto asked = jobs.Cancel("a", running->job.id);
  ASSERT_TRUE(asked);
  EXPECT_TRUE(asked->cancel_requested);
  TuneJobView ended = WaitForEnd(jobs, "a", running->job.id);
  EXPECT_EQ(ended.state, TuneState::kCancelled);
  EXPECT_NE(ended.error.value_or("").find("cancelled"), std::string::npos);
  EXPECT_EQ(held.started.load(), 1) << "the queued job never ran";

  auto again = jobs.Cancel("a", running->job.id);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().reason(), kJobFinished);
  EXPECT_EQ(jobs.counts().cancelled, 2);
}

TEST(TuneJobsTest, AnotherTenantCannotSeeOrCancelAJob) {
  HeldWork held;
  TuneJobs jobs({}, held.work());
  auto job = jobs.Submit(SpecFor("a", 1));
  ASSERT_TRUE(job);
  EXPECT_FALSE(jobs.Find("b", job->job.id));
  auto cancel = jobs.Cancel("b", job->job.id);
  ASSERT_FALSE(cancel);
  EXPECT_EQ(cancel.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(jobs.Find("a", job->job.id));
  EXPECT_FALSE(jobs.Find("a", "0000000000000000"));
  held.release = true;
}

TEST(TuneJobsTest, ShutdownCancelsEveryJobAndRefusesNewOnes) {
  HeldWork held;
  auto jobs = std::make_unique<TuneJobs>(TuneJobs::Options{}, held.work());
  auto running = jobs->Submit(SpecFor("a", 1));
  auto queued = jobs->Submit(SpecFor("a", 2));
  ASSERT_TRUE(running && queued);
  WaitForStart(held, 1);
  jobs->BeginShutdown();
  auto refused = jobs->Submit(SpecFor("a", 3));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason(), "draining");
  EXPECT_EQ(WaitForEnd(*jobs, "a", running->job.id).state, TuneState::kCancelled);
  EXPECT_EQ(jobs->Find("a", queued->job.id)->state, TuneState::kCancelled);
  jobs.reset();  // joins without the work ever being released
}

TEST(TuneJobsTest, FinishedJobsAreForgottenPastTheRetention) {
  HeldWork held;
  held.release = true;
  TuneJobs::Options options;
  options.finished_kept = 1;
  TuneJobs jobs(options, held.work());
  auto first = jobs.Submit(SpecFor("a", 1));
  ASSERT_TRUE(first);
  WaitForEnd(jobs, "a", first->job.id);
  auto second = jobs.Submit(SpecFor("a", 2));
  ASSERT_TRUE(second);
  WaitForEnd(jobs, "a", second->job.id);
  EXPECT_FALSE(jobs.Find("a", first->job.id));
  EXPECT_TRUE(jobs.Find("a", second->job.id));
}


// Found by a hostile probe: twenty 600 s jobs of one tenant took the whole
// queue, and another tenant's job answered 503 tune_queue_full.
TEST(TuneJobsTest, OneTenantCannotFillTheQueueAndTenantsTakeTurns) {
  HeldWork held;
  TuneJobs::Options options;
  options.queue_capacity = 16;
  options.tenant_queued = 4;
  options.tenant_budget_s = 1e9;  // only the count binds here
  std::vector<std::string> started;
  std::mutex started_mu;
  TuneJobs jobs(options, [&](const TuneJobSpec& spec, TuneProgress& progress,
                             const std::function<bool()>& cancelled) -> Result<TuneOutcome> {
    {
      std::lock_guard lock(started_mu);
      started.push_back(spec.entry.tenant + std::to_string(spec.entry.key.low));
    }
    return held.work()(spec, progress, cancelled);
  });
  ASSERT_TRUE(jobs.Submit(SpecFor("a", 1)));
  WaitForStart(held, 1);
  for (uint64_t k = 2; k <= 5; ++k) ASSERT_TRUE(jobs.Submit(SpecFor("a", k))) << k;
  auto greedy = jobs.Submit(SpecFor("a", 6));
  ASSERT_FALSE(greedy);
  EXPECT_EQ(greedy.error().reason(), kTuneQuotaExceeded);
  EXPECT_EQ(greedy.error().code, ErrorCode::kResourceExhausted);
  ASSERT_TRUE(jobs.Submit(SpecFor("b", 1))) << "another tenant still gets in";
  ASSERT_TRUE(jobs.Submit(SpecFor("b", 2)));
  held.release = true;
  for (;;) {
    TuneCounts counts = jobs.counts();
    if (counts.done == 7) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // After a's first job, b's come in turn with a's, not after all of them.
  ASSERT_EQ(started.size(), 7u);
  EXPECT_EQ(started[0], "a1");
  EXPECT_EQ(started[1], "b1");
  EXPECT_EQ(started[2], "a2");
  EXPECT_EQ(started[3], "b2");
}

TEST(TuneJobsTest, ATenantsQueuedSecondsAndAJobsBudgetAreCapped) {
  HeldWork held;
  TuneJobs::Options options;
  options.job_budget_s = 600;
  options.tenant_budget_s = 1000;
  TuneJobs jobs(options, held.work());
  TuneJobSpec long_job = SpecFor("a", 1);
  long_job.budget.max_seconds = 601;
  auto too_long = jobs.Submit(long_job);
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().reason(), "invalid_budget");
  TuneJobSpec trials_only = SpecFor("a", 2);  // no time limit: gets the job cap
  auto capped = jobs.Submit(trials_only);
  ASSERT_TRUE(capped);
  EXPECT_EQ(capped->job.time_budget_s, 600);
  TuneJobSpec more = SpecFor("a", 3);
  more.budget.max_seconds = 500;
  auto over = jobs.Submit(more);  // 600 + 500 > 1000
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().reason(), kTuneQuotaExceeded);
  EXPECT_NE(over.error().message.find("600 s of tuning queued or running"), std::string::npos) << over.error().message;
  more.entry.tenant = "b";
  EXPECT_TRUE(jobs.Submit(more));
  held.release = true;
}

// Found by a hostile probe: 40 finished jobs of a 4 MB module kept 205 MB.
TEST(TuneJobsTest, AJobDropsItsModuleTextWhenItEnds) {
  HeldWork held;
  TuneJobs jobs({}, held.work());
  TuneJobSpec spec = SpecFor("a", 1);
  spec.hlo = std::string(1 << 20, 'x');
  auto submitted = jobs.Submit(spec);
  ASSERT_TRUE(submitted);
  WaitForStart(held, 1);
  EXPECT_EQ(jobs.counts().text_bytes, 1u << 20);
  held.release = true;
  WaitForEnd(jobs, "a", submitted->job.id);
  EXPECT_EQ(jobs.counts().text_bytes, 0u);
  EXPECT_TRUE(jobs.Find("a", submitted->job.id)) << "the job itself is kept for GET";
}

// A hold that admits or refuses, and records how its job ended.
struct RecordingHold final : TuneJobHold {
  explicit RecordingHold(bool admit) : admit(admit) {}
  Status Admit() override {
    ++admits;
    if (admit) return {};
    return CancelledError("server b:1 runs this tuning").WithReason("tuned_elsewhere");
  }
  void Ended(TuneState state) override { ended.push_back(state); }
  bool admit;
  std::atomic<int> admits{0};
  std::vector<TuneState> ended;  // written under TuneJobs' lock
};

TEST(TuneJobsTest, AHoldMayRefuseTheStartAndARefusedJobIsNotCountedAsEnded) {
  HeldWork held;
  TuneJobs jobs({}, held.work());
  auto refusing = std::make_shared<RecordingHold>(false);
  TuneJobSpec spec = SpecFor("a", 1);
  spec.id = "00000000000000aa";
  spec.hold = refusing;
  auto refused = jobs.Submit(std::move(spec));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->job.id, "00000000000000aa") << "the id the caller chose";
  TuneJobView view = WaitForEnd(jobs, "a", refused->job.id);
  EXPECT_EQ(view.state, TuneState::kCancelled);
  ASSERT_TRUE(view.error);
  EXPECT_NE(view.error->find("b:1 runs this tuning"), std::string::npos) << *view.error;
  EXPECT_EQ(held.started.load(), 0) << "a refused job ran";
  EXPECT_EQ(refusing->admits.load(), 1);
  EXPECT_EQ(refusing.use_count(), 1) << "the job kept its hold after it ended";

  auto admitting = std::make_shared<RecordingHold>(true);
  TuneJobSpec next = SpecFor("a", 2);
  next.hold = admitting;
  auto ran = jobs.Submit(next);
  ASSERT_TRUE(ran);
  WaitForStart(held, 1);
  held.release = true;
  EXPECT_EQ(WaitForEnd(jobs, "a", ran->job.id).state, TuneState::kDone);
  EXPECT_EQ(admitting->ended, std::vector<TuneState>{TuneState::kDone});
  const TuneCounts counts = jobs.counts();
  EXPECT_EQ(counts.done, 1);
  EXPECT_EQ(counts.cancelled, 0) << "the refused job counted as a tuning run";
}

TEST(TuneJobsTest, AQueuedJobCancelledTellsItsHoldOnce) {
  HeldWork held;
  TuneJobs jobs({}, held.work());
  auto first = jobs.Submit(SpecFor("a", 1));
  ASSERT_TRUE(first);
  WaitForStart(held, 1);
  auto hold = std::make_shared<RecordingHold>(true);
  TuneJobSpec spec = SpecFor("a", 2);
  spec.hold = hold;
  auto queued = jobs.Submit(spec);
  ASSERT_TRUE(queued);
  ASSERT_TRUE(jobs.Cancel("a", queued->job.id));
  EXPECT_EQ(hold->ended, std::vector<TuneState>{TuneState::kCancelled});
  EXPECT_EQ(hold->admits.load(), 0);
  held.release = true;
  WaitForEnd(jobs, "a", first->job.id);
}

}  // namespace
}  // namespace kiln::service
