// The profiler's descriptors kept through the program's close(): programs
// that start by closing every descriptor they did not open (a daemon's
// habit, or closefrom(3) before exec-free work) would otherwise close the
// perf events, and with the last descriptor of an event the kernel ends it:
// that thread's samples stop, silently. A close() of one of ours succeeds as
// far as the program can tell and leaves it open; the refusals are counted
// (errors.program_closed_profiler_descriptor, informational). The
// descriptors themselves sit at the top of RLIMIT_NOFILE, out of the range
// the program's own open() returns (perf_source.cpp, run_dir_claim.cpp).
//
// libunwind 1.6 opens a pipe at its first use (it writes an address into
// it to learn whether the address is readable) and, when a read of the pipe
// fails, closes both numbers and opens a new one. Left at the lowest free
// numbers, it would shift the program's first open() from 3 to 5, and a
// program that closed it and opened a file at 3 would have that file read
// and closed by the next sample. Its pipe2() is therefore ours: the ends are
// moved up beside the perf events and kept through the program's close().
//
// Hazards:
// - close() is async-signal-safe and a cancellation point: the lookup is a
//   load of an atomic word, and the real close is libc's, resolved at load
//   (dlsym is not safe in a handler), so cancellation stays where it was.
// - A program that closes one of ours and then dup2()s onto the same number
//   replaces it in the kernel; that event ends and its thread's rate shows it
//   (sampling_checks.h warns of a thread sampled under half the asked rate).
#include "runtime.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>

namespace scalana::rt {
namespace {

// One bit per descriptor number below kTracked: constant-initialised, so
// the marks made by other initialisers of this library hold.
constexpr int kTracked = 1 << 20;
std::atomic<uint64_t> g_own[kTracked / 64];
std::atomic<int> g_own_count{0};
std::atomic<uint64_t> g_refused{0};

std::atomic<bool> g_own_pipes{false};

using CloseFn = int (*)(int);
using Pipe2Fn = int (*)(int *, int);
Pipe2Fn g_pipe2 = nullptr;
using CloseRangeFn = int (*)(unsigned, unsigned, int);
using ClosefromFn = void (*)(int);
CloseFn g_close = nullptr;
CloseRangeFn g_close_range = nullptr;
ClosefromFn g_closefrom = nullptr;

__attribute__((constructor(101))) void ResolveClose() {
  g_close = reinterpret_cast<CloseFn>(dlsym(RTLD_NEXT, "close"));
  g_close_range = reinterpret_cast<CloseRangeFn>(dlsym(RTLD_NEXT, "close_range"));
  g_closefrom = reinterpret_cast<ClosefromFn>(dlsym(RTLD_NEXT, "closefrom"));
  g_pipe2 = reinterpret_cast<Pipe2Fn>(dlsym(RTLD_NEXT, "pipe2"));
}

int RealClose(int fd) { return g_close ? g_close(fd) : int(syscall(SYS_close, fd)); }

int RealCloseRange(unsigned first, unsigned last, int flags) {
  return g_close_range ? g_close_range(first, last, flags)
                       : int(syscall(SYS_close_range, first, last, flags));
}

// Closes (or, with CLOSE_RANGE_CLOEXEC, marks) [FIRST, LAST] but ours: the
// real call over each stretch between two of them.
int CloseRangeButOurs(unsigned first, unsigned last, int flags) {
  if (g_own_count.load(std::memory_order_acquire) == 0 || first > last)
    return RealCloseRange(first, last, flags);
  unsigned from = first;
  const unsigned end = last < unsigned(kTracked) ? last : unsigned(kTracked) - 1;
  for (unsigned fd = first; fd <= end; ++fd) {
    if (fd % 64 == 0 && g_own[fd / 64].load(std::memory_order_acquire) == 0) {
      fd += 63; // a word with none of ours
      continue;
    }
    if (!IsOwnDescriptor(int(fd)))
      continue;
    if (fd > from && RealCloseRange(from, fd - 1, flags) != 0)
      return -1;
    if (!(flags & CLOSE_RANGE_CLOEXEC))
      g_refused.fetch_add(1, std::memory_order_relaxed);
    from = fd + 1;
    if (from == 0) // wrapped past UINT_MAX
      return 0;
  }
  return from <= last ? RealCloseRange(from, last, flags) : 0;
}

} // namespace

void MarkOwnDescriptor(int fd, bool own) {
  if (fd < 0 || fd >= kTracked)
    return;
  const uint64_t bit = uint64_t(1) << (fd % 64);
  const uint64_t before = own ? g_own[fd / 64].fetch_or(bit) : g_own[fd / 64].fetch_and(~bit);
  if (own && !(before & bit))
    g_own_count.fetch_add(1, std::memory_order_release);
  else if (!own && (before & bit))
    g_own_count.fetch_sub(1, std::memory_order_release);
}

bool IsOwnDescriptor(int fd) {
  return fd >= 0 && fd < kTracked &&
         (g_own[fd / 64].load(std::memory_order_acquire) >> (fd % 64) & 1);
}

int MovedAboveProgram(int fd, bool cloexec) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
      lim.rlim_cur <= rlim_t(DescriptorBudget()))
    return fd;
  int high = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, int(lim.rlim_cur) - DescriptorBudget());
  if (high < 0)
    return fd;
  RealClose(fd);
  return high;
}

int CloseOwnDescriptor(int fd) {
  MarkOwnDescriptor(fd, false);
  return RealClose(fd);
}

uint64_t RefusedCloses() { return g_refused.load(std::memory_order_relaxed); }

void OwnPipesFromHere(bool on) { g_own_pipes.store(on); }

} // namespace scalana::rt

using namespace scalana::rt;

extern "C" int close(int fd) {
  if (IsOwnDescriptor(fd)) {
    g_refused.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  return RealClose(fd);
}

extern "C" int pipe2(int fds[2], int flags) noexcept {
  int rc = g_pipe2 ? g_pipe2(fds, flags) : int(syscall(SYS_pipe2, fds, flags));
  const ThreadSamples *t = CurrentThread();
  if (rc == 0 && (g_own_pipes.load() || (t && (t->in_handler || t->unwinding)))) {
    for (int i = 0; i < 2; ++i) {
      fds[i] = MovedAboveProgram(fds[i], flags & O_CLOEXEC);
      MarkOwnDescriptor(fds[i], true);
    }
  }
  return rc;
}

extern "C" int close_range(unsigned first, unsigned last, int flags) noexcept {
  return CloseRangeButOurs(first, last, flags);
}

extern "C" void closefrom(int lowfd) noexcept {
  if (g_own_count.load(std::memory_order_acquire) == 0 && g_closefrom) {
    g_closefrom(lowfd);
    return;
  }
  const int saved = errno;
  CloseRangeButOurs(lowfd < 0 ? 0u : unsigned(lowfd), UINT_MAX, 0);
  errno = saved;
}
