// Per-thread sample storage written from the sampling signal handler, and the
// stack capture both the handler and the MPI wrappers use.
//
// Everything here may run inside a signal handler that interrupted arbitrary
// code (malloc, a lock holder, stdio), so: no allocation, no locks, no stdio,
// no exceptions, only plain stores into memory mapped before sampling starts.
// Each thread writes only its own table (signals are thread-directed), so no
// atomics are needed between writers; the reader (finalize) stops sampling
// first.
//
// A calling context is the program's own frames on the stack (docs/formats.md
// section 3): offsets into the executable or a shared object built with the
// wrappers, tagged with its module, outermost first, the innermost flagged
// when it is the interrupted instruction itself rather than a return
// address. Frames of other libraries (libc, libmpi, this runtime) are left
// out: the analyzer maps only the program's code to PSG vertices.
#pragma once

#include "scalana/profile.h"

#include <atomic>
#include <cstdint>

namespace scalana::rt {

inline constexpr int kMaxCounters = 8;
inline constexpr uint32_t kSampleSlots = 4096;         // power of two: masked probing
inline constexpr uint32_t kFrameArenaWords = 1u << 17; // frames of all distinct contexts
inline constexpr uint32_t kMaxProgramFrames = 128;     // innermost frames kept per context
inline constexpr int kMaxRawFrames = 256;              // unwound frames, libraries included

struct SampleSlot {
  uint64_t hash; // 0: empty
  uint32_t frames_offset, frames_length;
  uint64_t samples;
  // The thread's CPU time, measured, since its previous sample: a sample
  // stands for the time since the one before, whatever the rate delivered.
  uint64_t cpu_ns;
  uint64_t counters[kMaxCounters];
  // Time off the CPU outside wrapped calls and OpenMP waits that ended here
  // (off_cpu.cpp): the returns to a CPU, the time blocked (sleep, a system
  // call, a page fault) and the time runnable but waiting for a core.
  uint64_t switches, blocked_ns, delay_ns;
};

// Time a thread spent waiting in the OpenMP runtime (a barrier, a
// taskwait...) at one place: the fork context of the region it waited in and
// the wait's own return address into the program (ompt_tool.cpp). The
// callbacks own count and wall_ns; the sampling handler, on the same
// thread, only samples and cpu_ns of the wait the thread is in.
// A worksharing loop's slot (kind kOmpWorkKind | ompt_work_t) holds the
// thread's loops there, its wall time in them and their iterations (each
// loop's whole count, as libomp reports it to every thread).
inline constexpr uint32_t kOmpWaitSlots = 512; // power of two: masked probing
inline constexpr uint32_t kOmpWorkKind = 0x100;
// A wait to enter a critical section, take a lock or an ordered turn: kind
// kOmpMutexKind | ompt_mutex_t, a wait like the sync regions'.
inline constexpr uint32_t kOmpMutexKind = 0x200;
struct OmpWaitSlot {
  const void *fork; // the region's fork context (ompt_tool.cpp), null: none known
  uintptr_t codeptr;
  uint32_t kind; // ompt_sync_region_t, or kOmpWorkKind | ompt_work_t; 0: empty
  uint64_t count, wall_ns, iterations;
  uint64_t samples, cpu_ns; // samples taken while waiting here, and their CPU time
};

struct ThreadSamples {
  uint64_t samples, dropped, truncated, in_profiler;
  uint64_t last_cpu_ns;  // the thread's CPU clock at its previous sample
  uint64_t last_perf_ns; // its perf event's count (task-clock ns) then
  // Samples that arrived when the program unblocked the sampling signal
  // (pending since it blocked it) and their CPU time: not attributed, since
  // the interrupted instruction is where it unblocked, not where time went.
  uint64_t blocked_samples, blocked_ns;
  // While the program has the sampling signal blocked on this thread: since
  // when (thread CPU ns). Written by the mask interposers on this thread.
  uint64_t blocked_since_ns;
  volatile int signal_blocked;
  volatile int mask_changing; // inside the program's sigprocmask/pthread_sigmask
  volatile int in_handler;    // the sampling handler runs (libunwind masks signals too)
  int cpu_clock;              // clockid_t of the thread's CPU clock
  // The thread's CPU clock when sampling started and, once it ended (its
  // clock is gone then), when it stopped: the CPU time its samples stand
  // for, to tell a thread the sampler missed from an idle one.
  uint64_t start_cpu_ns, end_cpu_ns;
  // The kernel's account (schedstat.h) and CLOCK_MONOTONIC when sampling
  // started and, once the thread ended, when it stopped (end_wall_ns 0: it
  // lives, read it again through TID); sched_ok: the start could be read.
  uint64_t start_wall_ns, end_wall_ns;
  uint64_t start_on_cpu_ns, start_run_delay_ns, end_on_cpu_ns, end_run_delay_ns;
  int tid, sched_ok;
  uint32_t frames_used;
  int counter_count;     // counters the handler reads now (0 once they stop)
  int counters_in_slots; // counters the slots hold: kept after they stop
  // Set by the MPI wrappers on this thread: while `unwinding`, libunwind's
  // per-thread cache is being updated and must not be re-entered from the
  // handler; while `mpi_frames_length` > 0 the thread is inside an MPI call
  // whose context is already known, so the handler takes it instead of
  // unwinding through the MPI library. `mpi_frames` points into the call
  // site's entry of this thread's context cache (call_sites.h), which only
  // this thread changes and never while the length is set: pointing costs a
  // store where copying cost one per frame on every call.
  volatile int unwinding;
  volatile uint32_t mpi_frames_length;
  // The wrapped call's entry frame: a sample whose stack pointer lies above
  // it was taken after a longjmp left the call (the wrapper never saw it
  // end), so the context is unwound, not the call's.
  volatile uintptr_t mpi_call_frame;
  const uint64_t *volatile mpi_frames;
  long long last_counters[kMaxCounters];   // previous reading, for deltas
  long long read_buffer[kMaxCounters + 1]; // PAPI_read target: counters, then the clock
  // The sources' per-thread state: the counters' PAPI event set (never the
  // sampling source), the perf source's event, the timer source's timer_t
  // (-1 / null: none), and the descriptors held against the budget.
  int papi_eventset;
  int perf_fd;
  // Sampled by its share of the process's inherited event (perf_source.cpp):
  // a SIGTRAP of ours is a sample, each one period of its CPU time.
  int perf_inherited;
  int fds_held;
  void *posix_timer;
  // Whether posix_timer holds a timer: a timer_t may be 0 (glibc gives the
  // kernel's timer id, and the process's first timer is 0).
  volatile int has_timer;
  // 0: on the timer, may be moved to perf if the tick starves it
  // (tick_rescue.cpp); 1: moved; 2: perf refused, stays on the timer;
  // 3: being judged.
  volatile int tick_rescue;
  // OpenMP, set by the OMPT callbacks on this thread (ompt_tool.cpp): the
  // calling context of the fork of the region this thread works in as a
  // worker (its own stack starts at the region's body), prefixed to its
  // samples; the wait it is in, whose slot takes its samples instead of a
  // context (spinning in the runtime is waiting, not computing).
  const uint64_t *volatile fork_frames;
  volatile uint32_t fork_frames_length;
  OmpWaitSlot *volatile omp_wait;
  uint32_t index; // creation order in the process: 0 is the main thread
  int omp_thread; // thread number in its outermost OpenMP team, -1: none yet
  uint32_t omp_waits_dropped;
  // The off-CPU source (signal_safe/off_cpu.cpp): this thread's
  // context-switch event (-1: none); set when it left the CPU inside a
  // wrapped call or an OpenMP wait, whose own records hold that time, until
  // the call or wait ends; the wall clock and the kernel's account at its
  // last return to a CPU (or end of such a call).
  int switch_fd, schedstat_fd; // schedstat_fd: /proc/thread-self/schedstat, kept open
  volatile int switch_paused;
  uint64_t switch_wall_ns, switch_on_cpu_ns, switch_delay_ns;
  uint64_t switch_sampled_ns;   // CPU time the samples booked since those marks
  uint64_t off_cpu_unplaced_ns; // off-CPU time no context could take (table full, masked)
  ThreadSamples *next;          // registry of all threads, never unlinked
  OmpWaitSlot omp_waits[kOmpWaitSlots];
  SampleSlot slots[kSampleSlots];
  uint64_t frames[kFrameArenaWords];
};

// Allocates a zeroed table with mmap (never from the handler) and links it
// into the registry. Returns null when memory is exhausted.
ThreadSamples *NewThreadSamples();
ThreadSamples *FirstThreadSamples();

// Where the code of the modules whose frames are kept lies in memory: the
// executable (module 0) and the shared objects built with the wrappers
// (modules.cpp finds them at load and after each dlopen and dlclose). Slots
// are published with release stores and read lock-free by the handler; a
// module unloaded keeps its slot (its frames stay valid), with an empty
// range until the same file is loaded again.
inline constexpr uint32_t kMaxModuleSlots = 256;
struct ModuleText {
  uintptr_t lo = 0, hi = 0; // executable segments [lo, hi)
  uintptr_t base = 0;       // load bias: offsets are addresses minus this
};
// Sets slot INDEX (< kMaxModuleSlots) and makes slots [0, INDEX] visible.
// Not async-signal-safe; callers serialise (modules.cpp's mutex).
void PublishModuleText(uint32_t index, const ModuleText &text);
// Whether ADDRESS lies in the code of a module with a PSG (the program's
// own code, not a library's). Async-signal-safe.
bool IsProgramAddress(uintptr_t address);

// Unwinds the calling thread's stack into OUT (capacity kMaxProgramFrames + 1)
// as a context: program frames outermost first, led by kFramesTruncated when
// the outer frames did not fit. PC, when not 0, is the interrupted
// instruction of a signal: frames before it (the handler's own) are skipped
// and it is flagged kFrameExact. Otherwise frames up to the first program
// frame are skipped (they are this runtime's). Returns the length.
// Async-signal-safe given libunwind's local unwinder (see the .cpp).
uint32_t CaptureContext(uintptr_t pc, uint64_t *out);
// The same from frames already unwound: RAW[FIRST..N), innermost first, RAW[FIRST]
// flagged exact if EXACT; TRUNCATED when the unwind stopped before the top.
uint32_t ProgramContext(void *const *raw, int n, int first, bool exact, bool truncated,
                        uint64_t *out);

// Warms libunwind's per-thread cache outside signal context (its first use
// allocates); call once per thread before its timer starts.
void PrepareUnwinding();

// The handler's work: attribute one sample standing for CPU_NS of the
// thread's CPU time (and counter deltas, if any) to the context of the
// interrupted code at PC. Async-signal-safe.
// SP: the interrupted stack pointer (0 when unknown).
void RecordSample(ThreadSamples *t, uintptr_t pc, uintptr_t sp, uint64_t cpu_ns,
                  const long long *counters);
// The same for time off the CPU that ended at PC (off_cpu.cpp): BLOCKED_NS
// and DELAY_NS booked on the context's slot, no sample counted. False when
// no slot could take it (the profiler's own code, a full table).
bool RecordOffCpu(ThreadSamples *t, uintptr_t pc, uintptr_t sp, uint64_t blocked_ns,
                  uint64_t delay_ns);

// This thread's CPU clock in ns (a syscall; async-signal-safe).
uint64_t ThreadCpuNs();

// Set while sampling is on; the handler checks it first so finalize can read
// the tables without racing new inserts.
extern std::atomic<bool> g_sampling_enabled;

} // namespace scalana::rt
