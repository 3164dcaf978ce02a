#include "server/service/tune_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace kiln::service {
namespace {

TEST(TuneGateTest, NoRunsMeansNoWait) {
  TuneGate gate;
  std::atomic<bool> waiting{false};
  EXPECT_TRUE(gate.WaitForNoRuns([] { return false; }, &waiting));
  EXPECT_FALSE(waiting.load());
}

TEST(TuneGateTest, WaitsUntilTheLastRunEnds) {
  TuneGate gate;
  gate.RunSubmitted();
  gate.RunSubmitted();
  std::atomic<bool> waiting{false};
  std::atomic<bool> passed{false};
  std::thread tuner([&] {
    EXPECT_TRUE(gate.WaitForNoRuns([] { return false; }, &waiting));
    passed = true;
  });
  while (!waiting.load()) std::this_thread::yield();
  gate.RunEnded();
  EXPECT_EQ(gate.runs(), 1);
  EXPECT_FALSE(passed.load()) << "one run is still going";
  gate.RunEnded();
  tuner.join();
  EXPECT_TRUE(passed.load());
  EXPECT_FALSE(waiting.load());
}

TEST(TuneGateTest, StopEndsTheWaitWithCancelled) {
  TuneGate gate;
  gate.RunSubmitted();
  std::atomic<bool> stop{false};
  std::atomic<bool> waiting{false};
  Status status = Ok();
  std::thread tuner([&] { status = gate.WaitForNoRuns([&] { return stop.load(); }, &waiting); });
  while (!waiting.load()) std::this_thread::yield();
  stop = true;
  tuner.join();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(gate.runs(), 1);
}

}  // namespace
}  // namespace kiln::service
