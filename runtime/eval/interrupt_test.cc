// Stopping an evaluation early (EvalOptions::interrupt) and what a loop trip
// costs against the step budget.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "runtime/eval/eval_test_util.h"

namespace kiln::runtime {
namespace {

using testing::RunToText;

// The computations of a loop over an s32 counter: NAME_cond, whose root is
// `condition` over the counter p and the constant `limit`, and NAME_body,
// which adds one.
std::string CountingLoop(const std::string& name, const std::string& condition, int limit = 0) {
  return name + "_cond {\n  p = s32[] parameter(0)\n  limit = s32[] constant(" + std::to_string(limit) +
         ")\n  ROOT go = pred[] " + condition + "\n}\n" + name +
         "_body {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT n = s32[] add(p, one)\n}\n";
}

// while(true) over a scalar: only a budget or an interrupt ends it.
const std::string kForever = "HloModule forever\n" + CountingLoop("spin", "constant(true)") + R"(
ENTRY e {
  z = s32[] constant(0)
  ROOT spin = s32[] while(z), condition=spin_cond, body=spin_body
})";

// An endless outer loop whose body runs an inner loop of one trip, so an
// observer hears of every outer trip (each finishes the inner loop once).
const std::string kForeverWithInnerLoop = "HloModule nested\n" +
                                          CountingLoop("inner", "compare(p, limit), direction=EQ") +
                                          CountingLoop("outer", "constant(true)") + R"(
outer_step {
  p = s32[] parameter(0)
  zero = s32[] constant(0)
  once = s32[] while(zero), condition=inner_cond, body=inner_body
  ROOT n = s32[] add(p, once)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT outer = s32[] while(z), condition=outer_cond, body=outer_step
})";

// Stops `interrupt` when the inner loop has finished `after` times.
class StopAfterTrips final : public ControlFlowObserver {
 public:
  StopAfterTrips(Interrupt& interrupt, int64_t after, StopReason reason)
      : interrupt_(interrupt), after_(after), reason_(reason) {}
  void WhileFinished(const hlo::Instruction&, int64_t) override {
    if (++finished_ == after_) interrupt_.Stop(reason_);
  }
  void BranchTaken(const hlo::Instruction&, size_t) override {}
  int64_t finished() const { return finished_; }

 private:
  Interrupt& interrupt_;
  const int64_t after_;
  const StopReason reason_;
  int64_t finished_ = 0;
};

TEST(InterruptTest, FirstReasonWins) {
  Interrupt interrupt;
  EXPECT_FALSE(interrupt.stopped());
  interrupt.Stop(StopReason::kNone);
  EXPECT_FALSE(interrupt.stopped());
  interrupt.Stop(StopReason::kDeadline);
  interrupt.Stop(StopReason::kCancelled);
  EXPECT_EQ(interrupt.reason(), StopReason::kDeadline);
  EXPECT_EQ(StopReasonText(interrupt.reason()), "deadline exceeded");
}

TEST(InterruptTest, StopsARunawayLoopWithinTheTripItWasRaisedIn) {
  Interrupt interrupt;
  StopAfterTrips observer(interrupt, 100, StopReason::kDeadline);
  EvalOptions options;
  options.step_budget = int64_t{1} << 62;  // only the interrupt can end it
  options.interrupt = &interrupt;
  options.control_flow = &observer;
  EXPECT_EQ(RunToText(kForeverWithInnerLoop, {}, options), "error: stopped (deadline exceeded) in while loop %outer");
  // The 100th inner loop raised it; the outer trip it ran in was the last.
  EXPECT_EQ(observer.finished(), 100);
}

TEST(InterruptTest, AnotherThreadStopsWhileTrue) {
  Interrupt interrupt;
  EvalOptions options;
  options.step_budget = int64_t{1} << 62;
  options.interrupt = &interrupt;
  int64_t charged = 0;
  options.units_charged = &charged;
  std::future<std::string> run = std::async(std::launch::async, [&] { return RunToText(kForever, {}, options); });
  // Not a timing assertion: the run cannot end until Stop, so a missing
  // check hangs the test (and ctest's timeout fails it).
  EXPECT_EQ(run.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);
  interrupt.Stop(StopReason::kCancelled);
  EXPECT_EQ(run.get(), "error: stopped (cancelled) in while loop %spin");
  EXPECT_GT(charged, 0);
}

TEST(InterruptTest, AStoppedInterruptEndsTheRunBeforeItStarts) {
  Interrupt interrupt;
  interrupt.Stop(StopReason::kShutdown);
  EvalOptions options;
  options.interrupt = &interrupt;
  EXPECT_EQ(RunToText(kForever, {}, options).rfind("error: stopped (server shutting down)", 0), 0u);
}

TEST(InterruptTest, AStoppedRunIsCodedByItsReasonAndARunawayOneAsExhausted) {
  const std::pair<StopReason, ErrorCode> cases[] = {
      {StopReason::kDeadline, ErrorCode::kDeadlineExceeded},
      {StopReason::kCancelled, ErrorCode::kCancelled},
      {StopReason::kShutdown, ErrorCode::kUnavailable},
  };
  for (const auto& [reason, code] : cases) {
    Interrupt interrupt;
    interrupt.Stop(reason);
    EvalOptions options;
    options.interrupt = &interrupt;
    Result<hlo::Literal> stopped = testing::Run(kForever, {}, options);
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.error().code, code) << stopped.error();
  }
  EvalOptions budget;
  budget.step_budget = 1000;
  Result<hlo::Literal> runaway = testing::Run(kForever, {}, budget);
  ASSERT_FALSE(runaway);
  EXPECT_EQ(runaway.error().code, ErrorCode::kResourceExhausted) << runaway.error();
}

// Each trip of a scalar loop runs two computations (condition and body) and
// several instructions: far more host time than an element of array work,
// and the budget charges it so. Without that a budget sized for large arrays
// let while(true) spin for minutes.
TEST(StepBudgetTest, ALoopTripCostsTheComputationsItRuns) {
  const std::string kThousandTrips =
      "HloModule count\n" + CountingLoop("count", "compare(p, limit), direction=LT", 1000) + R"(
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=count_cond, body=count_body
})";
  int64_t charged = 0;
  EvalOptions options;
  options.units_charged = &charged;
  EXPECT_EQ(RunToText(kThousandTrips, {}, options), "s32[] 1000");
  EXPECT_GE(charged, 1000 * 2 * 256);  // two computation runs per trip at least
  EXPECT_LT(charged, 1000 * 2 * 1024);

  // So a budget of a million units ends while(true) within ~2000 trips.
  options.step_budget = 1'000'000;
  charged = 0;
  EXPECT_EQ(RunToText(kForever, {}, options), "error: step budget of 1000000 exhausted in while loop %spin");
  EXPECT_GE(charged, 1'000'000);
}

}  // namespace
}  // namespace kiln::runtime
