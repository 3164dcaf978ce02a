#include "base/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <latch>

namespace kiln {
namespace {

TEST(WorkerPoolTest, RunsSubmittedTasks) {
  std::atomic<int> ran{0};
  std::latch done(10);
  {
    WorkerPool pool(3, 100);
    for (int i = 0; i < 10; ++i) {
      WorkerPool::Task task = [&] {
        ran.fetch_add(1);
        done.count_down();
      };
      ASSERT_TRUE(pool.TrySubmit(task));
    }
    done.wait();
  }
  EXPECT_EQ(ran.load(), 10);
}

TEST(WorkerPoolTest, FullQueueRefusesAndLeavesTheTask) {
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::latch started(1);
  std::atomic<int> ran{0};
  {
    WorkerPool pool(1, 1);
    WorkerPool::Task blocker = [&] {
      started.count_down();
      opened.wait();
      ran.fetch_add(1);
    };
    ASSERT_TRUE(pool.TrySubmit(blocker));
    started.wait();  // the only thread is busy
    WorkerPool::Task queued = [&] { ran.fetch_add(1); };
    ASSERT_TRUE(pool.TrySubmit(queued));
    EXPECT_EQ(pool.queued(), 1u);
    WorkerPool::Task refused = [&] { ran.fetch_add(100); };
    EXPECT_FALSE(pool.TrySubmit(refused));
    EXPECT_TRUE(static_cast<bool>(refused));  // still ours to run or drop
    gate.set_value();
  }
  // The destructor may discard the queued task if it had not started, but
  // never runs the refused one.
  EXPECT_GE(ran.load(), 1);
  EXPECT_LE(ran.load(), 2);
}

}  // namespace
}  // namespace kiln
