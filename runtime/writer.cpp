// This rank's data from MPI_Init until the profile is complete: its slots
// in the node's snapshot container (snapshot_container.cpp) and its file
// RUN_DIR/rank-<R>.json.gz; the writer thread, the rank's endings (exit,
// MPI_Abort, fatal and stop signals) and their order (docs/runtime.md,
// "Output").
//
// What can end a rank, and what is left of it:
//  - nothing (MPI_Finalize): the profile is written, the node's leader then
//    removes the container and every rank its own files;
//  - exit, MPI_Abort, a signal with a handler: the rank's end record, all
//    its data up to that moment, in its rank file (which readers prefer);
//  - SIGKILL, or an end record cut short: the last periodic snapshot
//    (every SCALANA_SNAPSHOT seconds, the first 1 s after MPI_Init), in the
//    container (two slots, each record CRC-checked, so one is whole while
//    the other is written) or, with SCALANA_SNAPSHOT_FILES=rank, the rank
//    file, replaced by rename so it is never half written.
//
// One thread builds and writes: the writer thread, started at MPI_Init with
// the real pthread_create (it is not sampled) and every signal blocked
// (signals for the process go to the program's threads). Signal handlers
// never build or write a document themselves (that allocates and takes
// locks, which the interrupted code may hold): a SIGTERM handler puts the
// premade end record in place (one pwrite() of its active word in the
// container, or one rename), then every handler hands the end record to
// the writer thread (sem_post) and waits for it, at most kEndWaitSeconds,
// then lets the signal do what it would have done. The writer takes the
// recorder's locks with a timeout, so a lock held by a stopped thread costs
// the end record, never a hang; the last snapshot (or premade record) stays.
#include "config.h"
#include "runtime.h"
#include "signal_safe/write_whole.h"

#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace scalana::rt {

namespace {

constexpr double kEndWaitSeconds = 5;    // a handler waits this long for the end record
constexpr double kEndLockSeconds = 2;    // the end record waits this long for a lock
constexpr double kFinalWaitSeconds = 10; // finalize waits for an end record in progress

// When the snapshot after one taken AT seconds after MPI_Init is due: the
// first at once (a rank past MPI_Init is never without a file), then 1 s,
// then doubling (2, 4, 8 s ...) until the gap reaches the interval, then
// every interval. A rank killed T seconds after MPI_Init so loses less than
// max(1 s, T/2) when T is below the interval, and less than the interval
// after that; a short run gets few snapshots, a long one one per interval.
double NextSnapshot(double at, double interval) {
  if (at <= 0)
    return interval < 1 ? interval : 1;
  return at + (at < interval ? at : interval);
}

// The rank's ending, one transition only from kOpen (several threads may
// race: a signal on one, exit on another).
enum End : int { kOpen = 0, kEnding = 1, kEnded = 2 };
std::atomic<int> g_end{kOpen};
std::atomic<pid_t> g_rank_pid{0}; // the process that called MPI_Init: only it writes
std::atomic<bool> g_writer_up{false};
std::atomic<pid_t> g_writer_tid{0};
std::atomic<bool> g_periodic{false};      // snapshots wanted
std::atomic<bool> g_snapshot_busy{false}; // the writer is inside a snapshot
std::atomic<bool> g_final{false};         // profile.json.gz holds this rank: writer exits
std::atomic<const char *> g_end_why{nullptr};
std::atomic<int> g_end_sig{0};
std::atomic<bool> g_end_done{false};
double g_interval = 0;
// To the writer: something changed. A semaphore, not a pipe: sem_post is
// async-signal-safe, and no file descriptor of ours can be closed or,
// worse, reused by the program (which would then receive our bytes).
sem_t g_wake;

// The writer is between deciding to rename a snapshot into place and having
// done it: an ending rank waits for that before its own end record goes in,
// so no older snapshot can land on top of it.
std::atomic<bool> g_renaming{false};

// The premade end record for SIGTERM (PublishPremadeEnd): a whole file,
// already on disk beside the rank file, that a handler only has to rename.
// The MPI launcher sends SIGTERM to every rank when one fails, and SIGKILL
// when it shuts down, which was measured at 0.2 to 3 ms later here: too soon
// for the writer thread to build a record (about 1 ms) and even to write
// one (open, write, close: about 0.25 ms), not for one rename (tens of
// microseconds). Two files: the writer fills the one not published, then
// publishes it; a handler takes the published one (slot -1: none). With the
// node's container (snapshot_container.cpp) the two are the copies of its
// slot 2, published as kContainerSlot + copy, and taking one is one pwrite()
// of its active word: no file is made or renamed.
constexpr int kContainerSlot = 2;
std::atomic<int> g_premade_slot{-1};
std::atomic<bool> g_premade_files{false};  // a premade file may exist
std::atomic<bool> g_rank_file_made{false}; // this rank wrote (or tried) rank-<R>.json.gz
std::atomic<bool> g_taking_premade{false}; // a handler is between taking a slot and its rename
// Copies of the container's premade record a handler activated: cleared
// when the rank is open again (the program's own handler returned).
std::atomic<bool> g_copy_active[2];
int g_premade_next = 0;          // the writer's next file (writer thread only)
int g_copy_next = 0;             // and container copy
char g_rank_path[PATH_MAX];      // RUN_DIR/rank-<R>.json.gz, set by the writer
char g_premade_tmp[2][PATH_MAX]; // its premade end records
std::atomic<bool> g_paths_set{false};

pid_t ThreadId() { return pid_t(syscall(SYS_gettid)); }

// Only the rank itself: a child it forked (without exec) runs this code and
// its exit handlers too, but must not overwrite its parent's file.
bool IsRank() {
  pid_t pid = g_rank_pid.load();
  return pid != 0 && pid == getpid();
}

double Clock() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

void SleepUs(long us) {
  struct timespec ts = {0, us * 1000L};
  nanosleep(&ts, nullptr);
}

void SleepMs(int ms) { SleepUs(long(ms) * 1000L); }

void Wake() {
  if (g_writer_up.load())
    sem_post(&g_wake);
}

// Until the writer has written the end record, at most SECONDS.
// Async-signal-safe: clock_gettime and nanosleep only.
bool WaitForEndRecord(double seconds) {
  double deadline = Clock() + seconds;
  while (!g_end_done.load()) {
    if (Clock() >= deadline)
      return false;
    SleepUs(100);
  }
  return true;
}

// The writer's sleep: until Wake or SECONDS (negative: no limit).
void WaitForWork(double seconds) {
  int rc;
  if (seconds < 0) {
    rc = sem_wait(&g_wake);
  } else {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    long long ns = (long long)at.tv_nsec + (long long)(seconds * 1e9);
    at.tv_sec += time_t(ns / 1000000000LL);
    at.tv_nsec = long(ns % 1000000000LL);
    rc = sem_clockwait(&g_wake, CLOCK_MONOTONIC, &at);
  }
  (void)rc; // woken, timed out or interrupted: the loop looks at the state
  while (sem_trywait(&g_wake) == 0) {
  } // one pass serves every wake-up so far
}

// The premade end record into place, from a signal handler: one rename
// (async-signal-safe, no allocation).
void PutPremadeEnd() {
  g_taking_premade.store(true);
  int slot = g_premade_slot.exchange(-1);
  if (slot >= kContainerSlot) {
    g_copy_active[slot - kContainerSlot].store(true);
    ActivatePremadeSlot(slot - kContainerSlot, true);
  } else if (slot >= 0) {
    rename(g_premade_tmp[slot], g_rank_path);
    unlink(g_premade_tmp[1 - slot]); // an older one, if any: no leftovers
  }
  g_taking_premade.store(false);
}

// The premade records are not needed once a full end record is in place.
void RemovePremade() {
  if (!g_paths_set.load())
    return;
  g_premade_slot.store(-1);
  for (const char *tmp : g_premade_tmp)
    unlink(tmp);
  g_premade_files.store(false);
}

void *WriterMain(void *) {
  g_writer_tid.store(ThreadId());
  const double start = Clock(); // MPI_Init returned just before
  PrepareFixedMeta();
  try {
    std::string path = RankFilePath();
    std::string tmp = path + ".tmp." + std::to_string(getpid()) + ".end";
    if (tmp.size() + 1 < sizeof g_premade_tmp[0]) {
      std::memcpy(g_rank_path, path.c_str(), path.size() + 1);
      for (int i = 0; i < 2; ++i)
        std::memcpy(g_premade_tmp[i], (tmp + char('0' + i)).c_str(), tmp.size() + 2);
      g_paths_set.store(true);
    }
  } catch (...) {
    CountError("rank_path");
  }
  double next = 0; // seconds after start
  for (;;) {
    if (const char *why = g_end_why.load(std::memory_order_acquire)) {
      // Written or not, the premade records go: once the end record was
      // tried they are never put in place, and on a full disk nothing else
      // would remove them.
      WriteRankFile(why, g_end_sig.load(), kEndLockSeconds);
      RemovePremade();
      g_end_why.store(nullptr);
      g_end_done.store(true);
    }
    if (g_final.load())
      return nullptr; // profile.json.gz holds this rank: nothing left to write
    double now = Clock() - start;
    if (g_periodic.load() && now >= next) {
      // Dekker-style with StopSnapshots: it clears g_periodic, then waits
      // while g_snapshot_busy; here busy is set before g_periodic is read
      // again, so either this snapshot is skipped or the stop waits for it.
      g_snapshot_busy.store(true);
      if (g_periodic.load() && g_end.load() == kOpen)
        WriteRankFile(nullptr, 0, 1.0);
      g_snapshot_busy.store(false);
      // Due times stay on the schedule; one missed (a slow write, a
      // stopped process) is skipped rather than caught up.
      while (next <= Clock() - start)
        next = NextSnapshot(next, g_interval);
      continue;
    }
    WaitForWork(g_periodic.load() ? next - now : -1);
  }
}

// The end record written on this thread: before the writer thread runs (it
// failed to start), or on the writer thread itself (a fault in its own
// code). Best effort in a signal handler: it allocates.
void WriteEndHere(const char *why, int sig) {
  WriteRankFile(why, sig, kEndLockSeconds);
  RemovePremade(); // as on the writer thread
  g_end_done.store(true);
}

// ---- fatal and stop signals

constexpr int kEndSignals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL, SIGABRT,
                               SIGQUIT, SIGTERM, SIGINT, SIGHUP, SIGXCPU};

bool IsStopRequest(int sig) {
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGXCPU;
}

struct sigaction g_previous[NSIG];

void EndSignalHandler(int sig, siginfo_t *info, void *uc) {
  int saved_errno = errno;
  bool ours = g_end.load() == kOpen && IsRank();
  EndRank(IsStopRequest(sig) ? "signal_term" : "signal_fatal", sig);
  errno = saved_errno;
  const struct sigaction &prev = g_previous[sig];
  bool handled = false;
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, info, uc);
    handled = true;
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler) {
    prev.sa_handler(sig);
    handled = true;
  }
  if (handled) {
    // The program's own handler returned: for a request to stop, the program
    // chose to go on (to finish cleanly, say), so the rank is open again and
    // snapshots resume. A fault whose handler returns faults again, so its
    // end record stays: reopening would write one per fault.
    if (ours && IsStopRequest(sig) && g_end.load() == kEnded && !g_final.load()) {
      // Its premade record is no longer its end (one pwrite each,
      // async-signal-safe); its rank file goes with its next snapshot.
      for (int copy = 0; copy < 2; ++copy)
        if (g_copy_active[copy].exchange(false))
          ActivatePremadeSlot(copy, false);
      g_end_done.store(false);
      g_end.store(kOpen);
      g_periodic.store(g_interval > 0);
      g_sampling_enabled.store(Sampler().source != "none");
      Wake();
    }
    return;
  }
  // Default action, with the program's exit status unchanged (core, signal).
  // The signal is blocked while its handler runs (no SA_NODEFER): unblock it
  // so that raise() acts now; a fault that returned would fault again anyway.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
}

void AtExit() { EndRank("exit_without_finalize", 0); }

} // namespace

void StartRankWriter() noexcept {
  if (!RuntimeActive() || g_rank_pid.load() != 0)
    return;
  g_rank_pid.store(getpid());
  g_interval = double(config::UintValue(config::Id::Snapshot));
  g_periodic.store(g_interval > 0);
  if (sem_init(&g_wake, 0, 0) != 0) {
    CountError("writer_start");
    return;
  }
  // Every signal blocked in the new thread (it inherits this mask): signals
  // for the process must reach the program's threads, whose handlers then
  // ask this thread to write.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  int rc = CreateUnsampledThread(&thread, WriterMain, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    CountError("writer_start");
    g_periodic.store(false);
    return;
  }
  // Detached: the process never waits for it; it ends at the final profile
  // or with the process.
  pthread_detach(thread);
  g_writer_up.store(true);
}

bool ReplaceRankFile(const char *tmp, const char *path, bool snapshot, int *err) noexcept {
  *err = 0;
  // Dekker-style with EndRank: it sets g_end, then waits while g_renaming;
  // here g_renaming is set before g_end is read.
  g_renaming.store(true);
  if (snapshot && g_end.load() != kOpen) {
    g_renaming.store(false);
    unlink(tmp);
    return false;
  }
  int rc = rename(tmp, path);
  if (rc != 0)
    *err = errno;
  g_renaming.store(false);
  return rc == 0;
}

void NoteRankFileUsed() noexcept { g_rank_file_made.store(true); }

void DropSnapshotRankFile() noexcept {
  if (!g_rank_file_made.load() || !g_paths_set.load())
    return;
  // As in ReplaceRankFile: an end record, once the rank is ending, stays.
  g_renaming.store(true);
  if (g_end.load() == kOpen && (unlink(g_rank_path) == 0 || errno == ENOENT))
    g_rank_file_made.store(false);
  g_renaming.store(false);
}

namespace {

// The premade record into the container copy of slot 2 not published (true),
// or false when it must go to a file (no usable container, too large, a
// failed write). As with the files: never the published copy, which a
// handler may activate at any moment, so it always finds a whole record.
bool PublishPremadeInContainer(const std::string &bytes) {
  int copy = g_copy_next;
  if (kContainerSlot + copy == g_premade_slot.load())
    copy = 1 - copy;
  int err = 0;
  SlotResult r = WritePremadeSlot(bytes, copy, &err);
  if (r != SlotResult::kWritten) {
    if (r != SlotResult::kNone)
      CountError(r == SlotResult::kTooLarge ? "premade_end_over_slot" : "premade_end_write");
    return false;
  }
  g_premade_slot.store(kContainerSlot + copy);
  g_copy_next = 1 - copy;
  // The older copy stays as it is: a handler may have activated it just
  // before this one was published (this snapshot was under way when the
  // SIGTERM came), and then it is the rank's end. Files of an earlier
  // premade record (a snapshot too large for a slot) go, unless a handler
  // is taking one now (Dekker-style with PutPremadeEnd, as below).
  if (!g_taking_premade.load() && g_premade_files.exchange(false))
    for (const char *tmp : g_premade_tmp)
      unlink(tmp);
  return true;
}

} // namespace

void PublishPremadeEnd(const std::string &bytes, bool in_container) noexcept {
  if (g_end.load() != kOpen || !g_paths_set.load())
    return; // a handler may be taking the published file
  if (in_container && PublishPremadeInContainer(bytes))
    return;
  // Never the published slot: a handler may rename it at any moment.
  int slot = g_premade_next;
  if (slot == g_premade_slot.load())
    slot = 1 - slot;
  const char *tmp = g_premade_tmp[slot];
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = 0;
  const bool written = fd >= 0 && WriteWhole(fd, bytes.data(), bytes.size(), -1, &err);
  if (fd < 0 || close(fd) != 0 || !written) {
    unlink(tmp);
    CountError("premade_end_write");
    return;
  }
  g_premade_files.store(true);
  g_premade_slot.store(slot);
  g_premade_next = 1 - slot;
  // The older file is not needed any more, unless a handler took it just
  // before it was replaced (Dekker-style with PutPremadeEnd: the slot is
  // published before g_taking_premade is read, and set before the slot is
  // taken), so a rank killed without warning leaves one premade file.
  if (!g_taking_premade.load())
    unlink(g_premade_tmp[1 - slot]);
}

void StopSnapshots() noexcept {
  g_periodic.store(false);
  for (int i = 0; i < 10000 && g_snapshot_busy.load(); ++i)
    SleepMs(1);
}

void EndRank(const char *why, int sig) noexcept {
  if (!IsRank())
    return;
  bool on_writer = g_writer_up.load() && g_writer_tid.load() == ThreadId();
  int expected = kOpen;
  if (!g_end.compare_exchange_strong(expected, kEnding)) {
    // Another thread is writing the end record (a signal on one, exit on
    // another): let it finish before this one goes on to end the process.
    if (expected == kEnding && !on_writer)
      for (int i = 0; i < int(kEndWaitSeconds * 1000) && !g_end_done.load(); ++i)
        SleepMs(1);
    return;
  }
  g_periodic.store(false);
  g_sampling_enabled.store(false); // the tables stay as they are from here on
  // A snapshot being renamed into place goes first (a few microseconds).
  for (int i = 0; i < 20000 && g_renaming.load(); ++i)
    SleepUs(50);
  if (sig == SIGTERM && !on_writer)
    PutPremadeEnd(); // the reason is on disk now; the full record follows
  if (g_writer_up.load() && !on_writer) {
    g_end_sig.store(sig);
    g_end_why.store(why, std::memory_order_release);
    Wake();
    WaitForEndRecord(kEndWaitSeconds);
  } else {
    WriteEndHere(why, sig);
  }
  g_end.store(kEnded);
}

void FinishRank(bool written) noexcept {
  if (!IsRank())
    return;
  if (!written) {
    // profile.json.gz was not written: this rank's file keeps its data.
    EndRank("final_profile_failed", 0);
    return;
  }
  // An end record in progress (a signal during MPI_Finalize) goes first;
  // then the rank file is no longer needed, whatever it holds.
  int expected = kOpen;
  if (!g_end.compare_exchange_strong(expected, kEnded))
    for (int i = 0; i < int(kFinalWaitSeconds * 1000) && g_end.load() == kEnding; ++i)
      SleepMs(1);
  g_end.store(kEnded);
  g_final.store(true);
  // A snapshot resumed by the program's own SIGTERM handler (see
  // EndSignalHandler) may be in flight: it must not re-create the file.
  StopSnapshots();
  Wake();
  // The node's container goes once, removed by its leader: the profile
  // holds every rank. Without one, or where this rank fell back to its own
  // file, the rank's files go as before; else there is nothing to remove
  // (no unlink per rank of files that never were).
  g_premade_slot.store(-1);
  bool node = CloseSnapshotContainer(true);
  if (node && !g_rank_file_made.load() && !g_premade_files.load())
    return;
  try {
    std::string path = RankFilePath(), tmp = path + ".tmp." + std::to_string(getpid());
    for (const char *suffix : {"", ".end0", ".end1"})
      unlink((tmp + suffix).c_str());
    unlink(path.c_str());
    unlink(UnwrittenMarkerPath().c_str()); // the profile holds this rank
  } catch (...) {
  }
}

void InstallFatalSignalHandlers() noexcept {
  if (!RuntimeActive())
    return;
  for (int sig : kEndSignals) {
    struct sigaction sa, old;
    if (sigaction(sig, nullptr, &old) != 0)
      continue;
    // An ignored signal does not end the process: leave it ignored.
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
      continue;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = EndSignalHandler;
    // No SA_NODEFER, and every ending signal blocked while the handler runs:
    // the MPI launcher's second SIGTERM, or a SIGINT after it, must not end
    // the process in the middle of its end record.
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int other : kEndSignals)
      sigaddset(&sa.sa_mask, other);
    if (sigaction(sig, &sa, &old) == 0 && old.sa_sigaction != EndSignalHandler)
      g_previous[sig] = old;
  }
}

void RegisterExitHandler() noexcept { std::atexit(AtExit); }

} // namespace scalana::rt
