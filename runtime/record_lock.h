// The lock of a thread's record (recorder.cpp, ThreadRec): asymmetric,
// nearly free for the thread that owns the record, dearer for any other.
// Kept apart so that it can be tested on its own
// (tests/runtime/record_lock_test.cpp).
#pragma once

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace scalana::rt {

// Runtime-internal failures, reported in the profile's `errors` (runtime.h).
void CountError(const char *what) noexcept;

// Bounded spinlock. Hazard: a thread stopped by a fatal signal, or a forked
// child's copy of a lock the writer held, never releases it, so every
// waiter gives up after a deadline (and counts it) instead of hanging.
struct SpinLock {
  std::atomic<uint32_t> v{0};
  bool TryFor(double seconds) {
    if (!v.exchange(1, std::memory_order_acquire))
      return true; // the common, uncontended case: one exchange
    return Spin(seconds, [&] {
      return !v.load(std::memory_order_relaxed) && !v.exchange(1, std::memory_order_acquire);
    });
  }
  void Unlock() { v.store(0, std::memory_order_release); }

  // Waits until READY() holds or SECONDS pass: spins, then yields.
  template <typename F> static bool Spin(double seconds, F &&ready) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::microseconds(int64_t(seconds * 1e6));
    for (unsigned spins = 0;; ++spins) {
      if (ready())
        return true;
      if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        continue;
      }
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      sched_yield();
    }
  }
};

// Whether membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) works here; asked
// at load, before the program starts threads (registration must come before
// the first use).
inline bool RegisterMembarrier() {
#ifdef __NR_membarrier
  long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
         syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}
inline const bool g_membarrier = RegisterMembarrier();

// Which fences every RecordLock uses (see there). Hazard: all threads must
// agree, so it may change only while no thread other than the caller can
// take a record lock: at MPI_Init, before the program's other threads may
// call MPI and before the writer thread starts.
inline std::atomic<bool> g_asymmetric_locks{false};
// Asymmetric when ASYMMETRIC and membarrier works; returns what it set.
inline bool UseAsymmetricLocks(bool asymmetric) {
  g_asymmetric_locks.store(asymmetric && g_membarrier, std::memory_order_relaxed);
  return g_asymmetric_locks.load(std::memory_order_relaxed);
}

// A thread record's lock. Its owner takes it on most calls that post or
// complete a request, other threads seldom: the writer's snapshots, and a
// thread completing a request another one posted. Why asymmetric: an
// atomic exchange there, right after the MPI library wrote a message to
// the shared memory the peer polls, cost 4 to 7 ns a call, more than the
// rest of the lock's work (docs/runtime.md). So the owner's side is a plain
// store and a load, ordered by a compiler barrier alone; the other side
// stores its flag and calls membarrier, which runs a full barrier on every
// CPU that runs a thread of this process, before it reads the owner's flag
// (Dekker's mutual exclusion with an asymmetric fence). Either the owner
// sees the other's flag and backs off, or the other sees the owner's and
// waits. Symmetric (a full fence on both sides, no system call) when
// membarrier is missing, and under MPI_THREAD_MULTIPLE, where threads may
// complete each other's requests at a high rate and a membarrier, several
// microseconds with other threads running, would cost far more than the
// owner's fence saves.
struct RecordLock {
  std::atomic<uint32_t> owner_in{0}; // written by the owning thread only
  SpinLock foreign;                  // other threads, one at a time

  bool OwnerTryFor(double seconds) { return OwnerTry() || OwnerWait(seconds); }
  bool OwnerTry() {
    owner_in.store(1, std::memory_order_relaxed);
    if (g_asymmetric_locks.load(std::memory_order_relaxed))
      std::atomic_signal_fence(std::memory_order_seq_cst);
    else
      std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!foreign.v.load(std::memory_order_acquire))
      return true;
    // Another thread holds it or is about to: step back until it is done.
    owner_in.store(0, std::memory_order_release);
    return false;
  }
  __attribute__((noinline)) bool OwnerWait(double seconds) {
    for (;;) {
      if (!SpinLock::Spin(seconds, [&] { return !foreign.v.load(std::memory_order_acquire); }))
        return false;
      if (OwnerTry())
        return true;
    }
  }
  void OwnerUnlock() { owner_in.store(0, std::memory_order_release); }

  bool ForeignTryFor(double seconds) {
    if (!foreign.TryFor(seconds))
      return false;
    // Hazard: should the call fail after a successful registration (it
    // does not on the kernels we know, forked children included), only
    // this thread's fence is left and an owner running at this moment may
    // be missed. Counted, not hidden.
    if (!g_asymmetric_locks.load(std::memory_order_relaxed)) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    } else if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
      CountError("membarrier");
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    if (SpinLock::Spin(seconds, [&] { return !owner_in.load(std::memory_order_acquire); }))
      return true;
    foreign.Unlock();
    return false;
  }
  void ForeignUnlock() { foreign.Unlock(); }
};

} // namespace scalana::rt
