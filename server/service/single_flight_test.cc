#include "server/service/single_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace kiln::service {
namespace {

using Flights = SingleFlight<int>;

TEST(SingleFlightTest, FirstJoinLeadsAndEveryWaiterGetsTheValue) {
  Flights flights;
  std::vector<std::pair<int, Flights::Role>> seen;
  auto record = [&](const int& value, Flights::Role role) { seen.emplace_back(value, role); };
  EXPECT_EQ(flights.Join("k", record), Flights::Role::kLeader);
  EXPECT_EQ(flights.Join("k", record), Flights::Role::kJoiner);
  EXPECT_EQ(flights.Join("other", record), Flights::Role::kLeader);
  EXPECT_EQ(flights.open_flights(), 2u);
  flights.Finish("k", 7);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::pair(7, Flights::Role::kLeader));
  EXPECT_EQ(seen[1], std::pair(7, Flights::Role::kJoiner));
  EXPECT_EQ(flights.open_flights(), 1u);
  // A finished key opens a new flight.
  EXPECT_EQ(flights.Join("k", record), Flights::Role::kLeader);
  flights.Finish("nothing", 1);  // ignored
}

TEST(SingleFlightTest, ConcurrentJoinersShareOneLeader) {
  Flights flights;
  std::atomic<int> leaders{0}, answered{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&] {
      if (flights.Join("k", [&](const int&, Flights::Role) { answered.fetch_add(1); }) == Flights::Role::kLeader) {
        leaders.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  flights.Finish("k", 1);
  EXPECT_EQ(leaders.load(), 1);
  EXPECT_EQ(answered.load(), 32);
}

}  // namespace
}  // namespace kiln::service
