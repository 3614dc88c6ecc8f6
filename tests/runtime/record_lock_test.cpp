// RecordLock (runtime/record_lock.h), in both its modes: asymmetric (no
// fence on the owner's side, membarrier on the others') and symmetric. The
// tests race an owner against other threads on a pair of counters that
// only the lock keeps equal: without exclusion an update is lost or a
// reader sees them apart. They check the protocol (flags, stepping back,
// deadlines); a missing fence shows too rarely on two cores to be caught.
#include "record_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace scalana::rt {

std::atomic<int> g_errors_counted{0};
void CountError(const char *) noexcept { ++g_errors_counted; }

namespace {

// Written under the lock only, by owner and others alike. Relaxed atomics,
// so that a failure of the lock shows as lost updates, not undefined
// behaviour.
struct Pair {
  std::atomic<uint64_t> a{0}, b{0};
  void Bump() {
    a.store(a.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  bool Even() const {
    return a.load(std::memory_order_relaxed) == b.load(std::memory_order_relaxed);
  }
};

class RecordLockTest : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    if (UseAsymmetricLocks(GetParam()) != GetParam())
      GTEST_SKIP() << "membarrier is not available here";
  }
  void TearDown() override { UseAsymmetricLocks(false); }
};

TEST_P(RecordLockTest, OwnerAndOtherThreadsExcludeEachOther) {
  RecordLock lock;
  Pair pair;
  // The owner runs until the others are done, so that every foreign
  // acquisition races it.
  constexpr uint64_t kForeignRounds = 20000;
  constexpr int kForeign = 2;
  std::atomic<int> running{kForeign};
  std::atomic<uint64_t> torn{0};
  std::vector<std::thread> others;
  for (int i = 0; i < kForeign; ++i)
    others.emplace_back([&] {
      for (uint64_t k = 0; k < kForeignRounds; ++k) {
        ASSERT_TRUE(lock.ForeignTryFor(5.0));
        torn += !pair.Even();
        pair.Bump();
        lock.ForeignUnlock();
      }
      --running;
    });
  uint64_t owner_rounds = 0;
  while (running.load(std::memory_order_relaxed) > 0) {
    ASSERT_TRUE(lock.OwnerTryFor(5.0));
    torn += !pair.Even();
    pair.Bump();
    lock.OwnerUnlock();
    ++owner_rounds;
  }
  for (std::thread &t : others)
    t.join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_EQ(pair.a.load(), owner_rounds + kForeign * kForeignRounds);
  EXPECT_EQ(pair.b.load(), pair.a.load());
  EXPECT_EQ(g_errors_counted.load(), 0) << "membarrier failed after registration";
}

TEST_P(RecordLockTest, EachSideGivesUpAtItsDeadlineWhileTheOtherHoldsIt) {
  RecordLock lock;
  ASSERT_TRUE(lock.OwnerTryFor(1.0));
  std::thread([&] { EXPECT_FALSE(lock.ForeignTryFor(0.05)); }).join();
  lock.OwnerUnlock();

  std::thread([&] { ASSERT_TRUE(lock.ForeignTryFor(1.0)); }).join(); // and never released
  EXPECT_FALSE(lock.OwnerTryFor(0.05));
  lock.ForeignUnlock();
  EXPECT_TRUE(lock.OwnerTryFor(0.05));
  lock.OwnerUnlock();
}

TEST_P(RecordLockTest, AnOwnerThatStepsBackGetsTheLockOnceTheOtherIsDone) {
  RecordLock lock;
  ASSERT_TRUE(lock.ForeignTryFor(1.0));
  std::atomic<bool> got{false};
  std::thread owner([&] {
    got = lock.OwnerTryFor(5.0);
    lock.OwnerUnlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(got.load());
  lock.ForeignUnlock();
  owner.join();
  EXPECT_TRUE(got.load());
}

INSTANTIATE_TEST_SUITE_P(Modes, RecordLockTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "Asymmetric" : "Symmetric";
                         });

} // namespace
} // namespace scalana::rt
