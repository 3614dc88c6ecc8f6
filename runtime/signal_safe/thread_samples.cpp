#include "thread_samples.h"

// Local unwinding only: libunwind then reads this process's memory directly,
// needs no ptrace, and unw_backtrace takes its fast path (a per-thread cache
// of frame descriptions, filled on first sight of each return address).
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <sys/mman.h>
#include <time.h>

namespace scalana::rt {

std::atomic<bool> g_sampling_enabled{false};
namespace {
std::atomic<ThreadSamples *> g_registry{nullptr};
std::atomic<uint32_t> g_thread_index{0};

// Each field is atomic on its own: a reader racing a dlclose or a reload may
// see a mix of old and new fields for that one frame, never a torn word.
struct ModuleSlot {
  std::atomic<uintptr_t> lo{0}, hi{0}, base{0};
};
ModuleSlot g_modules[kMaxModuleSlots];
std::atomic<uint32_t> g_module_count{0};

// FNV-1a over the frames: cheap, no tables, and never 0 (0 marks empty slots).
inline uint64_t HashFrames(const uint64_t *frames, uint32_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t i = 0; i < n; ++i) {
    h ^= frames[i];
    h *= 0x100000001b3ull;
  }
  return h ? h : 1;
}

// The frame word of address A (offset and module, docs/formats.md section
// 3), or 0 when A lies in no module of the program (0 is no frame: offset 0
// of the executable is its ELF header, never code). The executable is tried
// first: most frames are its own.
inline uint64_t ProgramFrame(uintptr_t a, uint32_t modules) {
  for (uint32_t k = 0; k < modules; ++k) {
    const ModuleSlot &m = g_modules[k];
    if (a >= m.lo.load(std::memory_order_relaxed) && a < m.hi.load(std::memory_order_relaxed))
      return (uint64_t(a - m.base.load(std::memory_order_relaxed)) & kFrameOffsetMask) |
             uint64_t(k) << kFrameModuleShift;
  }
  return 0;
}
} // namespace

void PublishModuleText(uint32_t index, const ModuleText &text) {
  if (index >= kMaxModuleSlots)
    return;
  ModuleSlot &m = g_modules[index];
  // Emptied first, so no reader pairs the new base with the old range.
  m.hi.store(0, std::memory_order_relaxed);
  m.lo.store(text.lo, std::memory_order_relaxed);
  m.base.store(text.base, std::memory_order_relaxed);
  m.hi.store(text.hi, std::memory_order_release);
  if (g_module_count.load(std::memory_order_relaxed) <= index)
    g_module_count.store(index + 1, std::memory_order_release);
}

bool IsProgramAddress(uintptr_t address) {
  return ProgramFrame(address, g_module_count.load(std::memory_order_acquire)) != 0;
}

void PrepareUnwinding() {
  void *raw[4];
  unw_backtrace(raw, 4);
}

// Hazards, and why they are acceptable:
//  - unw_backtrace may, on the first sight of a return address, look up its
//    unwind table with dl_iterate_phdr, which takes the loader's lock. glibc's
//    lock is recursive, so a signal landing inside dlopen on this thread does
//    not deadlock; it may see a link map being changed, which costs at worst
//    this one sample's frames.
//  - libunwind's cache is per thread: the handler never re-enters it while
//    the same thread's MPI wrapper is unwinding (ThreadSamples::unwinding).
uint32_t CaptureContext(uintptr_t pc, uint64_t *out) {
  void *raw[kMaxRawFrames];
  int n = unw_backtrace(raw, kMaxRawFrames);
  int first = 0;
  if (pc) {
    // The handler's frames and the signal trampoline come first; the frame
    // after the trampoline is the interrupted one, reported at its exact PC.
    first = -1;
    for (int i = 0; i < n; ++i)
      if (uintptr_t(raw[i]) == pc) {
        first = i;
        break;
      }
    if (first < 0) { // could not unwind through the signal frame: PC alone
      raw[0] = reinterpret_cast<void *>(pc);
      n = 1;
      first = 0;
    }
  }
  return ProgramContext(raw, n, first, pc != 0, n == kMaxRawFrames, out);
}

uint32_t ProgramContext(void *const *raw, int n, int first, bool exact, bool truncated,
                        uint64_t *out) {
  uint64_t inner[kMaxProgramFrames]; // innermost first, reversed into OUT
  uint32_t count = 0;
  const uint32_t modules = g_module_count.load(std::memory_order_acquire);
  for (int i = first; i < n; ++i) {
    uintptr_t a = uintptr_t(raw[i]);
    uint64_t frame = ProgramFrame(a, modules);
    if (!frame)
      continue;
    if (count == kMaxProgramFrames) {
      truncated = true;
      break;
    }
    if (exact && i == first)
      frame |= kFrameExact;
    inner[count++] = frame;
  }
  uint32_t len = 0;
  if (truncated && count)
    out[len++] = kFramesTruncated;
  for (uint32_t i = count; i-- > 0;)
    out[len++] = inner[i];
  return len;
}

ThreadSamples *NewThreadSamples() {
  // mmap, not malloc: called from the pthread_create trampoline of threads
  // that may start while another thread holds the malloc lock in a handler-
  // unsafe state; mmap is a plain syscall. Pages are zero-filled.
  void *p = mmap(nullptr, sizeof(ThreadSamples), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  auto *t = static_cast<ThreadSamples *>(p);
  t->papi_eventset = -1;
  t->perf_fd = -1;
  t->switch_fd = -1;
  t->schedstat_fd = -1;
  t->omp_thread = -1;
  t->index = g_thread_index.fetch_add(1, std::memory_order_relaxed);
  // Lock-free push: threads start concurrently.
  ThreadSamples *head = g_registry.load(std::memory_order_relaxed);
  do {
    t->next = head;
  } while (!g_registry.compare_exchange_weak(head, t, std::memory_order_release,
                                             std::memory_order_relaxed));
  return t;
}

ThreadSamples *FirstThreadSamples() { return g_registry.load(std::memory_order_acquire); }

// One writer per table, no atomics: sampling signals are thread-directed and
// blocked while their own handler runs (no SA_NODEFER), so a handler never
// interrupts another insert into the same table.
uint64_t ThreadCpuNs() {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// A worker's stack starts at the region's body: the fork's context goes
// before it, so its samples land where the master's do. A context cut at
// the top keeps its mark and no prefix; a prefix that does not fit is left out.
static uint32_t WithForkFrames(const ThreadSamples *t, uint64_t *frames, uint32_t n) {
  uint32_t m = t->fork_frames_length;
  const uint64_t *prefix = t->fork_frames;
  if (!m || !prefix || (n && frames[0] == kFramesTruncated) || n + m > kMaxProgramFrames + 1)
    return n;
  for (uint32_t i = n; i-- > 0;)
    frames[i + m] = frames[i];
  for (uint32_t i = 0; i < m; ++i)
    frames[i] = prefix[i];
  return n + m;
}

namespace {
// The context of the code interrupted at PC into FRAMES (capacity
// kMaxProgramFrames + 1); false where it is the wrapper's own unwind (the
// profiler's time, not the program's).
bool InterruptedContext(ThreadSamples *t, uintptr_t pc, uintptr_t sp, uint64_t *frames,
                        uint32_t *n) {
  *n = 0;
  uint32_t m = t->mpi_frames_length;
  if (m && sp && sp > t->mpi_call_frame) {
    // Above the call's entry frame: a longjmp left the call. The next
    // wrapper entry closes it (MpiCall); till then, the program's own time.
    t->mpi_frames_length = 0;
    m = 0;
  }
  if (m) {
    // Inside an MPI call: its wrapper already knows the context.
    for (uint32_t i = 0; i < m; ++i)
      frames[(*n)++] = t->mpi_frames[i];
    return true;
  }
  if (t->unwinding)
    return false;
  *n = WithForkFrames(t, frames, CaptureContext(pc, frames));
  return true;
}

// The slot of context FRAMES[0..N) in T's table, made if new; null when the
// table or its frame arena is full.
SampleSlot *SlotOf(ThreadSamples *t, const uint64_t *frames, uint32_t n) {
  uint64_t h = HashFrames(frames, n);
  for (uint32_t probe = 0; probe < kSampleSlots; ++probe) {
    SampleSlot &s = t->slots[(h + probe) & (kSampleSlots - 1)];
    if (s.hash == 0) {
      // Full arena, or a probe chain so long that the table is effectively
      // full: drop (counted) rather than loop or allocate in a handler.
      if (t->frames_used + n > kFrameArenaWords || probe > kSampleSlots / 2)
        return nullptr;
      for (uint32_t i = 0; i < n; ++i)
        t->frames[t->frames_used + i] = frames[i];
      s.frames_offset = t->frames_used;
      s.frames_length = n;
      t->frames_used += n;
      // Publish the slot last (compiler fence, same thread): the finalize
      // reader skips slots whose hash is 0, so it never sees a slot whose
      // frames are not written yet.
      std::atomic_signal_fence(std::memory_order_release);
      s.hash = h;
      return &s;
    }
    if (s.hash != h || s.frames_length != n)
      continue;
    bool same = true;
    for (uint32_t i = 0; i < n && same; ++i)
      same = t->frames[s.frames_offset + i] == frames[i];
    if (same)
      return &s;
  }
  return nullptr;
}
} // namespace

void RecordSample(ThreadSamples *t, uintptr_t pc, uintptr_t sp, uint64_t cpu_ns,
                  const long long *counters) {
  // The handler owns this frame: the context is built here first, so the
  // table never holds a half-written one.
  if (OmpWaitSlot *w = t->omp_wait) {
    // Waiting in the OpenMP runtime (ompt_tool.cpp): booked on the wait.
    t->samples += 1;
    w->samples += 1;
    w->cpu_ns += cpu_ns;
    return;
  }
  uint64_t frames[kMaxProgramFrames + 1];
  uint32_t n = 0;
  t->samples += 1;
  if (!InterruptedContext(t, pc, sp, frames, &n)) {
    t->in_profiler += 1; // interrupted the wrapper's own unwind
    return;
  }
  if (n && frames[0] == kFramesTruncated)
    t->truncated += 1;
  SampleSlot *s = SlotOf(t, frames, n);
  if (!s) {
    t->dropped += 1; // table or arena full: counted, reported in the profile
    return;
  }
  s->samples += 1;
  s->cpu_ns += cpu_ns;
  if (counters)
    for (int c = 0; c < t->counter_count; ++c)
      s->counters[c] += uint64_t(counters[c]);
}

bool RecordOffCpu(ThreadSamples *t, uintptr_t pc, uintptr_t sp, uint64_t blocked_ns,
                  uint64_t delay_ns) {
  uint64_t frames[kMaxProgramFrames + 1];
  uint32_t n = 0;
  SampleSlot *s = InterruptedContext(t, pc, sp, frames, &n) ? SlotOf(t, frames, n) : nullptr;
  if (!s)
    return false;
  s->switches += 1;
  s->blocked_ns += blocked_ns;
  s->delay_ns += delay_ns;
  return true;
}

} // namespace scalana::rt
