// CommMembers: a communicator's members as canonical arithmetic runs, the
// form format 3 writes; a million-rank world is one run however it is built.
#include "scalana/comm_members.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace scalana {
namespace {

using Runs = std::vector<CommMembers::Run>;

TEST(CommMembers, RunsAreGreedyFromTheFirstMember) {
  CommMembers m({0, 2, 4, 5, 6, 9, 3});
  EXPECT_EQ(m.runs(), (Runs{{0, 2, 3}, {5, 1, 2}, {9, -6, 2}}));
  EXPECT_EQ(m.size(), 7u);
  EXPECT_EQ(m.ToVector(), (std::vector<int>{0, 2, 4, 5, 6, 9, 3}));
  EXPECT_EQ(m[3], 5);
  EXPECT_EQ(m.front(), 0);
  EXPECT_EQ(m.back(), 3);
  // A lone last member has stride 0.
  EXPECT_EQ(CommMembers({4, 1, 7}).runs(), (Runs{{4, -3, 2}, {7, 0, 1}}));
}

TEST(CommMembers, AWorldOfAMillionRanksIsOneRun) {
  CommMembers world;
  world.AppendRun(0, 1, 1u << 20);
  EXPECT_EQ(world.runs(), (Runs{{0, 1, 1u << 20}}));
  EXPECT_EQ(world.size(), size_t(1) << 20);
  EXPECT_EQ(world.back(), (1 << 20) - 1);
}

// Runs appended in bulk give the list (and runs) of their members pushed one
// by one, whatever runs they continue or break: equality is on runs, so the
// two must agree for two profiles' communicators to be one.
TEST(CommMembers, AppendRunEqualsItsMembersOneByOne) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    CommMembers bulk, single;
    std::vector<int> all;
    int last = int(rng() % 50);
    for (int k = 0, n = int(rng() % 6); k < n; ++k) {
      int stride = int(rng() % 7) - 3, count = 1 + int(rng() % 5);
      int first = last + int(rng() % 9) - 4 + 3 * stride;
      if (first < 0 || first + stride * (count - 1) < 0)
        continue;
      bulk.AppendRun(first, stride, uint32_t(count));
      for (int i = 0; i < count; ++i) {
        single.push_back(first + stride * i);
        all.push_back(first + stride * i);
      }
      last = all.back();
    }
    ASSERT_EQ(bulk, single) << "trial " << trial;
    ASSERT_EQ(bulk.ToVector(), all) << "trial " << trial;
    ASSERT_EQ(bulk.Hash(), CommMembers(all).Hash());
  }
}

TEST(CommMembers, EqualityOrderAndHashFollowTheMembers) {
  CommMembers a({0, 1, 2, 3}), b, c({0, 1, 3, 2});
  b.AppendRun(0, 1, 2);
  b.AppendRun(2, 1, 2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_NE(a, c);
  EXPECT_TRUE(a < c || c < a);
  EXPECT_FALSE(a < b || b < a);
  EXPECT_NE(CommMembers({1}), CommMembers({1, 1}));
}

} // namespace
} // namespace scalana
