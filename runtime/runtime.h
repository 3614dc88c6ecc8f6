// Process-wide state of libscalana-rt shared by its parts (sampler, MPI
// recorder, output). Not a public interface.
#pragma once

#include "signal_safe/thread_samples.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace scalana::rt {

// The sources (docs/contexts.md, "Sampling"): a POSIX per-thread CPU-time
// timer, or a perf_event task-clock event per thread; PAPI, where the
// machine has counters, only counts, read at each sample.
enum class SampleSource { None, Timer, Perf };

struct SamplerState {
  std::string source = "none"; // as written to meta.sampling.source
  SampleSource kind = SampleSource::None;
  double hz = 0;
  std::vector<std::string> counters; // real counters read at each sample
  std::vector<int> papi_counter_events;
  std::string note;
  bool perf_exclude_kernel = false; // the kernel refused kernel-mode samples
  bool tick_rescue = false;         // auto: threads the tick starves move to perf
  // The perf events signal by the kernel's synchronous SIGTRAP (attr.sigtrap),
  // which is then the sampling signal; else by O_ASYNC on a real-time signal.
  bool perf_sigtrap = false;
  // The process's one perf event, opened on the main thread and inherited by
  // every thread it and its threads create (perf_source.cpp says when and
  // why); -1: each thread opens its own.
  int perf_process_fd = -1;
  int signal = 0; // the sampling signal, 0 when none
  // The off-CPU source runs (signal_safe/off_cpu.cpp): each thread's context
  // switches signal its returns to a CPU, on the perf source's SIGTRAP.
  bool off_cpu = false;
};

SamplerState &Sampler();
// The sampling period asked, in ns of a thread's CPU time (Sampler().hz > 0).
inline uint64_t SamplePeriodNs() { return uint64_t(1e9 / Sampler().hz); }
// This thread's sample table (initial-exec TLS: safe to read in a handler;
// inline, since every wrapped MPI call reads it).
extern __thread ThreadSamples *tls_samples __attribute__((tls_model("initial-exec")));
inline ThreadSamples *CurrentThread() { return tls_samples; }
// Called on the main thread at load and by the pthread_create trampoline.
void StartThread(ThreadSamples *t);
// Per-thread starts of each source and of the counters (sample_sources.cpp);
// false (with WHY, when given) if it could not start.
bool StartTimer(ThreadSamples *t, std::string *why);
bool StartPerf(ThreadSamples *t, std::string *why);
// The perf source's event for the calling thread at PERIOD_NS of its CPU
// time (signal_safe/perf_source.cpp; async-signal-safe). On failure, the
// call that failed and its errno (0: the descriptor budget is spent).
struct PerfFailure {
  const char *call = "";
  int err = 0;
};
bool OpenPerfEvent(ThreadSamples *t, uint64_t period_ns, PerfFailure *failure);
// On the main thread at load, for the perf source: the process's event,
// inherited by the threads to come (Sampler().perf_process_fd), where the
// kernel signals by SIGTRAP and samples kernel mode too. False: each thread
// opens its own (OpenPerfEvent).
bool OpenProcessPerfEvent(ThreadSamples *t);
// Every thread's share of the process's event stops (StopSampling).
void StopProcessPerfEvent();
// The off-CPU source (signal_safe/off_cpu.cpp; async-signal-safe): the
// calling thread's context-switch event, opened (false: ERR the errno, 0
// when the descriptor budget is spent) and closed; the handler's part at
// each return of the thread to a CPU; and, once a wrapped call or OpenMP
// wait the thread left the CPU in ends, the time measured from there.
bool OpenSwitchEvent(ThreadSamples *t, int *err);
void CloseSwitchEvent(ThreadSamples *t);
void OnReturnToCpu(ThreadSamples *t, uintptr_t pc, uintptr_t sp);
// At each CPU sample of CPU_NS: a return to the CPU whose signal the
// sample's took the place of is found here (off_cpu.cpp says how).
void AfterCpuSample(ThreadSamples *t, uintptr_t pc, uintptr_t sp, uint64_t cpu_ns);
void ResumeSwitchEvent(ThreadSamples *t);
inline void ResumeOffCpu(ThreadSamples *t) {
  if (t->switch_paused)
    ResumeSwitchEvent(t);
}
// Whether this kernel opens perf events that signal by SIGTRAP (Linux 5.13
// and later, where perf_event_paranoid lets us open one at all).
bool PerfSigtrapWorks();
// The sampling signal's name, for notes: SIGTRAP or SIGRTMIN+N.
std::string SignalName(int sig);
// The thread's CPU time since its previous sample, read from its perf event's
// count where it has one (perf_source.cpp says why), else from its CPU clock;
// moves the thread's marks (last_cpu_ns, last_perf_ns) to now.
uint64_t CpuSinceLastSample(ThreadSamples *t);
// Where a stretch not to be booked on the next sample ends (the program
// unblocked the sampling signal): the marks move to now.
void MarkCpuNow(ThreadSamples *t, uint64_t thread_cpu_now);
bool TakeDescriptors(ThreadSamples *t, int n);
void GiveDescriptors(ThreadSamples *t, int n);
// A thread the scheduler tick starves of timer samples moves to the perf
// source (signal_safe/tick_rescue.cpp; async-signal-safe). Called on the
// thread itself, at its samples and at OpenMP region ends.
void RescueFromTick(ThreadSamples *t, uint64_t now_cpu_ns);
bool StartCounters(ThreadSamples *t, std::string *why);
void StopSources(ThreadSamples *t);
// Descriptors the perf source and the counters may hold in all: a small
// share of RLIMIT_NOFILE, read again at each thread start.
int DescriptorBudget();
// The profiler's own descriptors, which the program's close(), close_range()
// and closefrom() leave open (own_descriptors.cpp; async-signal-safe). The
// runtime closes one of them with CloseOwnDescriptor only.
void MarkOwnDescriptor(int fd, bool own);
// FD moved to the top of RLIMIT_NOFILE, the budget's range (the lowest free
// number from there), closing FD: programs that select() on the descriptors
// they open expect them low (below FD_SETSIZE), as without us. The new
// number, or FD where it cannot move. Async-signal-safe.
int MovedAboveProgram(int fd, bool cloexec);
bool IsOwnDescriptor(int fd);
int CloseOwnDescriptor(int fd);
// The program's closes of ours refused so far.
uint64_t RefusedCloses();
// While on, pipes made by pipe2() (libunwind's, at its first use) are moved
// to the top of RLIMIT_NOFILE and kept ours; so are those made inside the
// sampling handler or a wrapper's unwinding.
void OwnPipesFromHere(bool on);

// ---- the sampling signal kept ours (signal_guard.cpp)
int RealSigaction(int sig, const struct sigaction *act, struct sigaction *old);
int RealPthreadSigmask(int how, const sigset_t *set, sigset_t *old);
// Notes whether thread T starts with the sampling signal blocked.
void StartThreadMask(ThreadSamples *t);
// CPU time T had the sampling signal blocked (up to now if it still has).
uint64_t BlockedNs(const ThreadSamples *t);
void StopThread(ThreadSamples *t);
void StopSampling();
int ThreadCount();
// What the program did to signals and timers profilers use (its own SIGPROF
// profiling, or taking over the sampling signal), for the profile's note;
// counts the latter as an error. Empty when nothing.
std::string SignalCheck();

// Runtime-internal failures, reported in the profile's `errors`.
void CountError(const char *what) noexcept;
// Empty when the lock is not free within LOCK_SECONDS (see SnapshotMpi).
std::map<std::string, uint64_t> ErrorCounts(double lock_seconds = 1.0);

// False in processes the profiler leaves alone (an MPI launcher's daemons):
// no sampling, no handlers, no files. Set once at load.
bool RuntimeActive();
void SetRuntimeActive(bool active);
// pthread_create past the interposer: the thread is not sampled and not
// counted among the program's threads (the writer thread).
int CreateUnsampledThread(pthread_t *thread, void *(*start)(void *), void *arg);

// ---- this rank's files (writer.cpp, output.cpp; docs/runtime.md "Output")
//
// After MPI_Init a writer thread owns the rank's slots of the node's
// snapshot container (or, with SCALANA_SNAPSHOT_FILES=rank, for a snapshot
// too large for a slot, or when the container failed, RUN_DIR/rank-<R>.json.gz,
// replaced atomically) for its periodic snapshots (SCALANA_SNAPSHOT) and,
// when the rank ends without a complete profile, RUN_DIR/rank-<R>.json.gz
// for its end record. Only the process that called MPI_Init writes (not a
// child it forked).
void StartRankWriter() noexcept;
// Before the final gather: no snapshot is in flight or will start.
void StopSnapshots() noexcept;
// The rank ends before a complete profile (WHY as in errors.ended_by_<why>,
// SIG the signal or 0): write its end record once, through the writer thread
// when it runs (always so from a signal handler), waiting a bounded time.
// Async-signal-safe when the writer thread runs.
void EndRank(const char *why, int sig) noexcept;
// After the final gather: WRITTEN says rank 0 wrote profile.json.gz; this
// rank's own file is then removed, else its end record is written.
void FinishRank(bool written) noexcept;
void InstallFatalSignalHandlers() noexcept;
void RegisterExitHandler() noexcept;

// Builds this rank's data as a one-rank profile and writes it to
// RUN_DIR/rank-<R>.json.gz (temporary file and rename); WHY null for a
// periodic snapshot. False on failure (counted). output.cpp.
bool WriteRankFile(const char *why, int sig, double lock_seconds) noexcept;
std::string RankFilePath();
// RUN_DIR/rank-<R>.unwritten.ENOSPC: made when a write of the rank file
// failed for want of space, removed once one succeeds (output.cpp).
std::string UnwrittenMarkerPath();
// Renames TMP over PATH, the rank file (writer.cpp). A SNAPSHOT is not put
// in place once the rank is ending (returns false, *ERR 0): the file then
// belongs to the end record. *ERR is rename's errno on failure.
bool ReplaceRankFile(const char *tmp, const char *path, bool snapshot, int *err) noexcept;
// The gzip bytes of the end record a SIGTERM would leave if no time were
// left to build one: the latest snapshot plus the reason; IN_CONTAINER: that
// snapshot went to the node's container, and so does this record if it
// fits. Writer thread.
void PublishPremadeEnd(const std::string &bytes, bool in_container) noexcept;
// This rank wrote (or tried to write) its own rank file: at the final
// profile its files are removed as without a container.
void NoteRankFileUsed() noexcept;
// A snapshot went to the container after an earlier one went to the rank
// file (too large for a slot then): the older file, which readers would
// prefer, goes. Never an end record: nothing once the rank is ending.
void DropSnapshotRankFile() noexcept;
// The node's snapshot container (snapshot_container.cpp): opened at MPI_Init
// by every rank (collective over MPI_COMM_WORLD, then over the node), unless
// SCALANA_SNAPSHOT_FILES is rank or snapshots are off. The writes return
// kNone when this rank has no usable container, kTooLarge when GZ does not
// fit a slot, kFailed (errno in *ERR; the container is not used again by
// this rank) when the write failed. Writer thread only.
enum class SlotResult { kNone, kWritten, kTooLarge, kFailed };
void OpenSnapshotContainer() noexcept;
bool SnapshotContainerUsable() noexcept;
SlotResult WriteSnapshotSlot(const std::string &gz, int *err) noexcept;
// COPY (0 or 1) of the premade record, half a slot each.
SlotResult WritePremadeSlot(const std::string &gz, int copy, int *err) noexcept;
// The premade record COPY in place (ACTIVE) or no longer: one pwrite() of
// its active word. Async-signal-safe.
bool ActivatePremadeSlot(int copy, bool active) noexcept;
// Closes this rank's descriptor (false: it had none); REMOVE: the leader
// removes the file.
bool CloseSnapshotContainer(bool remove) noexcept;
// RUN_DIR as configured, and its creation (output.cpp).
std::string ConfiguredRunDir();
void MakeRunDirs(const std::string &dir);
// Reads what does not change during the run (binary, build id, PSG id):
// done once, early, by the writer thread, so end records stay quick.
void PrepareFixedMeta() noexcept;

// libomp started our OMPT tool (ompt_tool.cpp).
extern std::atomic<bool> g_ompt_active;
// The frames of a fork context the OMPT tool interned (FORK, an
// OmpWaitSlot's), for the snapshot.
const std::vector<uint64_t> *ForkFrames(const void *fork);

double Now(); // monotonic seconds
bool Verbose();
int WorldRank(); // -1 before MPI_Init
std::string StartTimeUtc();

// The run id (run_id.cpp): AgreeRunId, a collective over MPI_COMM_WORLD,
// takes rank 0's at MPI_Init; RunId is "" before. Rank 0 first claims the
// run directory for the job (ClaimRunDir, output.cpp: run_dir_claim.h) and
// names the run in RUN_DIR/.scalana-job; false on every rank when the
// directory belongs to another job: the run then writes nothing.
bool AgreeRunId(int world_rank);
const char *RunId();
bool ClaimRunDir(const char *run_id) noexcept;
// Rank 0 at MPI_Init: one line per SCALANA_* value in the environment that
// is not valid (a program started without `scalana prof`).
void WarnUnusableOptions() noexcept;

} // namespace scalana::rt
