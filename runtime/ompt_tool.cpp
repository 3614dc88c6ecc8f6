// The OMPT tool (docs/runtime.md, "OpenMP"): LLVM's libomp looks up
// ompt_start_tool when it initialises; this library, preloaded, provides it.
// A program without libomp never calls it, so nothing here runs.
//
// What the callbacks record, per thread (ThreadSamples, thread_samples.h):
//  - the calling context of each region's fork, captured on the encountering
//    thread (call_sites.h: unwound once per call site and stack depth) and
//    interned for good, which every worker of the region prefixes to its
//    samples, so a function called from two places forks two contexts;
//  - every wait in the runtime (barriers, taskwait, taskgroup, reductions,
//    and to enter a critical section, take a lock or an ordered turn) by
//    (region context, the wait's return address, kind): count and wall
//    time, and the samples taken while waiting go to the wait, not to a
//    context; a task the thread runs while it waits is work, not the wait;
//  - with --omp-worksharing, every worksharing loop by (region context,
//    return address): count, wall time in it and the loop's iterations.
// Callbacks run in normal context on hot paths, about six per region and
// thread: no allocation once a fork site has been seen, a few loads and, at
// each end of a wait or a construct, one read of a clock that is the TSC
// where it can be (wall_clock.h). parallel_end is not registered: what it
// told comes with the master's closing barrier (RegionState).
#include "call_sites.h"
#include "config.h"
#include "runtime.h"
#include "wall_clock.h"

namespace scalana::rt {
std::atomic<bool> g_ompt_active{false};
}

#ifdef SCALANA_OMP_TOOLS_H
#include SCALANA_OMP_TOOLS_H

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace scalana::rt {
namespace {

WallClock g_clock;               // set once in Initialize, before any callback
uint64_t g_tick_check_ticks = 0; // 10 ms in its ticks

// A fork's full calling context, interned: never freed, since workers'
// samples read it from signal context at any time.
struct ForkContext {
  std::vector<uint64_t> frames;
};

ForkContext *Intern(std::vector<uint64_t> frames) {
  static std::mutex *mu = new std::mutex;
  static auto *all = new std::map<std::vector<uint64_t>, ForkContext *>;
  std::lock_guard<std::mutex> lock(*mu);
  ForkContext *&c = (*all)[frames];
  if (!c)
    c = new ForkContext{std::move(frames)};
  return c;
}

// One region as its workers see it: its fork context, and when it ended
// (the master left its closing barrier: libomp calls parallel_end right
// after, so that callback is not needed), which bounds a worker's wait at
// that barrier: libomp reports the end of a worker's wait only when it is
// released for the next region. `end` is in g_clock's ticks.
struct RegionState {
  ForkContext *fork = nullptr;
  std::atomic<uint64_t> gen{0}, ended_gen{0}, end{0};
};

// Where each fork site of this thread leads (key: the fork's return address
// into the program, the runtime entry's frame, the context this thread's
// own stack continues).
struct SiteKey {
  uintptr_t ra, fa;
  const ForkContext *outer;
  bool operator==(const SiteKey &o) const { return ra == o.ra && fa == o.fa && outer == o.outer; }
};
struct SiteKeyHash {
  size_t operator()(const SiteKey &k) const {
    return size_t(k.ra * 0x9e3779b97f4a7c15ull ^ k.fa ^ uintptr_t(k.outer) * 31);
  }
};
struct Site {
  ForkContext *fork = nullptr;
  std::vector<call_sites::Slot> slots; // the chain of calls above the fork, checked on reuse
  bool checkable = false;
};

// A level of implicit tasks the thread is in (nested regions stack them).
struct Level {
  ForkContext *outer; // the fork context before it, restored at its end
  RegionState *region;
  uint64_t gen;
  bool master; // thread 0 of the region's team: its end is the region's
};

struct OmpThread {
  std::unordered_map<SiteKey, Site, SiteKeyHash> sites;
  SiteKey last_key{0, 0, nullptr};
  Site *last_site = nullptr;
  static constexpr unsigned kRing = 16; // regions this thread forked, reused in turn
  RegionState ring[kRing];
  unsigned next_region = 0;
  static constexpr unsigned kMaxLevels = 16;
  Level levels[kMaxLevels];
  unsigned depth = 0;                      // levels in use (deeper ones are not tracked)
  ForkContext *fork = nullptr;             // the fork context of this thread's stack, null: its own
  uint64_t wait_start = 0, work_start = 0; // g_clock's ticks
  uint64_t mutex_start = 0;                // g_clock's ticks
  OmpWaitSlot *mutex_slot = nullptr;       // the critical, lock or ordered the thread waits for
  OmpWaitSlot *mutex_outer = nullptr;      // the wait it was in then (a lock taken in a task)
  OmpWaitSlot *last_mutex = nullptr;       // the last one's slot: a loop enters the same one
  uint64_t tick_checked = 0;               // when this thread's sampling rate was last judged
  OmpWaitSlot *work_slot = nullptr;        // the worksharing construct the thread is in
};

bool StillValid(const Site &s) {
  if (!s.checkable)
    return false;
  for (const call_sites::Slot &slot : s.slots)
    if (*reinterpret_cast<const uintptr_t *>(slot.address) != slot.value)
      return false;
  return true;
}

// The worker's prefix, set so the handler never sees a length without its
// frames (same thread: compiler fences suffice).
void SetForkFrames(ThreadSamples *t, const ForkContext *c) {
  t->fork_frames_length = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->fork_frames = c ? c->frames.data() : nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->fork_frames_length = c ? uint32_t(c->frames.size()) : 0;
}

ForkContext *ForkOf(OmpThread &o, const void *codeptr, const ompt_frame_t *frame) {
  SiteKey key{uintptr_t(codeptr), frame ? uintptr_t(frame->enter_frame.ptr) : 0, o.fork};
  if (o.last_site && o.last_key == key && StillValid(*o.last_site))
    return o.last_site->fork;
  if (o.sites.size() >= 4096)
    o.sites.clear(); // a program whose stacks vary without end: start over
  Site &s = o.sites[key];
  if (!s.fork || !StillValid(s)) {
    // The fork's own chain of calls; the outer fork's frames go before it here.
    call_sites::Entry &e = ContextOfCall(call_sites::Key{uintptr_t(codeptr), key.fa, nullptr, 0});
    std::vector<uint64_t> frames;
    if (o.fork)
      frames = o.fork->frames;
    frames.insert(frames.end(), e.frames.begin(), e.frames.end());
    if (frames.size() > kMaxProgramFrames / 2) // leave room for the worker's own frames
      frames.erase(frames.begin(), frames.end() - kMaxProgramFrames / 2);
    s.fork = Intern(std::move(frames));
    s.slots = e.slots;
    s.checkable = e.checkable;
  }
  o.last_key = key;
  o.last_site = &s;
  return s.fork;
}

// This thread's wait slot for (FORK, CODEPTR, KIND); null when full (counted).
OmpWaitSlot *WaitSlot(ThreadSamples *t, const void *fork, const void *codeptr, uint32_t kind) {
  uint64_t h = (uintptr_t(fork) * 0x9e3779b97f4a7c15ull) ^ (uintptr_t(codeptr) * 31) ^ kind;
  h ^= h >> 29;
  for (uint32_t probe = 0; probe < kOmpWaitSlots / 2; ++probe) {
    OmpWaitSlot &s = t->omp_waits[(h + probe) & (kOmpWaitSlots - 1)];
    if (s.kind == 0) {
      s.fork = fork;
      s.codeptr = uintptr_t(codeptr);
      std::atomic_signal_fence(std::memory_order_release);
      __atomic_store_n(&s.kind, kind, __ATOMIC_RELEASE); // the snapshot reads slots with a kind
      return &s;
    }
    if (s.kind == kind && s.fork == fork && s.codeptr == uintptr_t(codeptr))
      return &s;
  }
  ++t->omp_waits_dropped;
  return nullptr;
}

OmpThread *Omp() { return &LateThreadLocal<OmpThread>::Get(); }

const ForkContext *RegionFork(const OmpThread &o) {
  return o.depth && o.depth <= OmpThread::kMaxLevels && o.levels[o.depth - 1].region
             ? o.levels[o.depth - 1].region->fork
             : o.fork;
}

void OnParallelBegin(ompt_data_t *, const ompt_frame_t *frame, ompt_data_t *parallel_data,
                     unsigned int, int, const void *codeptr) {
  if (!CurrentThread() || !parallel_data)
    return;
  OmpThread &o = *Omp();
  RegionState &r = o.ring[o.next_region++ % OmpThread::kRing];
  r.fork = ForkOf(o, codeptr, frame);
  r.gen.store(r.gen.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  parallel_data->ptr = &r;
}

void OnImplicitTask(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data, ompt_data_t *,
                    unsigned int, unsigned int index, int flags) {
  ThreadSamples *t = CurrentThread();
  if (!t || (flags & ompt_task_initial))
    return;
  OmpThread &o = *Omp();
  if (endpoint == ompt_scope_begin) {
    auto *r = parallel_data ? static_cast<RegionState *>(parallel_data->ptr) : nullptr;
    if (o.depth == 0)
      t->omp_thread = int(index);
    if (o.depth < OmpThread::kMaxLevels)
      o.levels[o.depth] =
          Level{o.fork, r, r ? r->gen.load(std::memory_order_acquire) : 0, index == 0};
    ++o.depth;
    // The master's own stack holds the fork; a worker's starts at the body.
    if (index != 0 && r) {
      o.fork = r->fork;
      SetForkFrames(t, o.fork);
    }
  } else if (o.depth > 0) {
    --o.depth;
    if (o.depth < OmpThread::kMaxLevels && o.fork != o.levels[o.depth].outer) {
      o.fork = o.levels[o.depth].outer;
      SetForkFrames(t, o.fork);
    }
  }
}

void OnSyncRegionWait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *,
                      ompt_data_t *, const void *codeptr) {
  ThreadSamples *t = CurrentThread();
  if (!t)
    return;
  OmpThread &o = *Omp();
  if (endpoint == ompt_scope_begin) {
    o.wait_start = g_clock.Now();
    t->omp_wait = WaitSlot(t, RegionFork(o), codeptr, uint32_t(kind));
    return;
  }
  OmpWaitSlot *w = t->omp_wait;
  t->omp_wait = nullptr;
  ResumeOffCpu(t); // the wait's time off the CPU was the wait's (off_cpu.cpp)
  const Level *l = kind == ompt_sync_region_barrier_implicit_parallel && o.depth &&
                           o.depth <= OmpThread::kMaxLevels && o.levels[o.depth - 1].region
                       ? &o.levels[o.depth - 1]
                       : nullptr;
  if (!w && !(l && l->master))
    return;
  uint64_t end = g_clock.Now();
  if (l && l->master) {
    // The master leaves the region's closing barrier: the region ends.
    l->region->end.store(end, std::memory_order_relaxed);
    l->region->ended_gen.store(l->gen, std::memory_order_release);
  } else if (l && l->region->ended_gen.load(std::memory_order_acquire) == l->gen) {
    // A worker's closing barrier: waiting ended when the region did.
    uint64_t region_end = l->region->end.load(std::memory_order_relaxed);
    if (region_end >= o.wait_start && region_end < end)
      end = region_end;
  }
  if (!w)
    return;
  w->count += 1;
  w->wall_ns += end > o.wait_start ? g_clock.ToNs(end - o.wait_start) : 0;
  // A worker the tick starves may have no sample to judge it at: judged here,
  // at most every 10 ms (its CPU clock is a system call).
  if (t->tick_rescue == 0 && t->has_timer && end - o.tick_checked >= g_tick_check_ticks) {
    o.tick_checked = end;
    RescueFromTick(t, ThreadCpuNs());
  }
}

// Waiting to enter a critical section, take a lock or an ordered turn (the
// serialisation a team can lose its time to): a wait like a barrier's, from
// mutex_acquire to mutex_acquired. Atomics are left out: libomp reports
// them too, at a cost per update, and they are not waited for long.
void OnMutexAcquire(ompt_mutex_t kind, unsigned int, unsigned int, ompt_wait_id_t,
                    const void *codeptr) {
  ThreadSamples *t = CurrentThread();
  if (!t || kind == ompt_mutex_atomic)
    return;
  OmpThread &o = *Omp();
  const void *fork = RegionFork(o);
  const uint32_t k = kOmpMutexKind | uint32_t(kind);
  OmpWaitSlot *w = o.last_mutex;
  if (!w || w->codeptr != uintptr_t(codeptr) || w->fork != fork || w->kind != k)
    w = o.last_mutex = WaitSlot(t, fork, codeptr, k);
  if (!(o.mutex_slot = w))
    return;
  o.mutex_outer = t->omp_wait;
  o.mutex_start = g_clock.Now();
  t->omp_wait = o.mutex_slot;
}

void OnMutexAcquired(ompt_mutex_t kind, ompt_wait_id_t, const void *) {
  ThreadSamples *t = CurrentThread();
  if (!t || kind == ompt_mutex_atomic)
    return;
  OmpThread &o = *Omp();
  OmpWaitSlot *w = o.mutex_slot;
  if (!w || t->omp_wait != w)
    return;
  uint64_t end = g_clock.Now();
  t->omp_wait = o.mutex_outer;
  o.mutex_slot = o.mutex_outer = nullptr;
  if (!t->omp_wait)
    ResumeOffCpu(t); // the wait's time off the CPU was the wait's (off_cpu.cpp)
  w->count += 1;
  w->wall_ns += end > o.mutex_start ? g_clock.ToNs(end - o.mutex_start) : 0;
}

// A thread waiting at a barrier or taskwait runs the team's tasks there:
// that is work, not waiting (an injected slow task was booked as the
// barrier's wait, and its line never named). When the thread leaves a
// waiting task for another, the wait so far is booked and its slot kept in
// the waiting task's data; the samples go to the task's code until the
// thread is back in that task, where the wait resumes. (Tied tasks nest on
// a thread, so each waiting task holds at most its own wait.)
void OnTaskSchedule(ompt_data_t *prior_task, ompt_task_status_t prior_status,
                    ompt_data_t *next_task) {
  ThreadSamples *t = CurrentThread();
  if (!t)
    return;
  OmpThread &o = *Omp();
  // A clock read only where a wait pauses or resumes, not at every task.
  if (OmpWaitSlot *w = t->omp_wait;
      w && w != o.mutex_slot && prior_task && prior_status != ompt_task_complete) {
    const uint64_t now = g_clock.Now();
    w->wall_ns += now > o.wait_start ? g_clock.ToNs(now - o.wait_start) : 0;
    prior_task->ptr = w;
    t->omp_wait = nullptr;
    ResumeOffCpu(t); // the wait's time off the CPU so far was the wait's
  }
  if (next_task && next_task->ptr) {
    t->omp_wait = static_cast<OmpWaitSlot *>(next_task->ptr);
    next_task->ptr = nullptr;
    o.wait_start = g_clock.Now();
  }
}

void OnWork(ompt_work_t work, ompt_scope_endpoint_t endpoint, ompt_data_t *, ompt_data_t *,
            uint64_t count, const void *codeptr) {
  ThreadSamples *t = CurrentThread();
  if (!t)
    return;
  OmpThread &o = *Omp();
  uint64_t now = g_clock.Now();
  if (endpoint == ompt_scope_begin) {
    // Looked up once per construct: its end closes the slot its begin took.
    o.work_slot = WaitSlot(t, RegionFork(o), codeptr, kOmpWorkKind | uint32_t(work));
    if (!o.work_slot)
      return;
    o.work_slot->count += 1;
    o.work_slot->iterations += count;
    o.work_start = now;
  } else if (OmpWaitSlot *w = o.work_slot) {
    if (now > o.work_start)
      w->wall_ns += g_clock.ToNs(now - o.work_start);
    o.work_slot = nullptr;
  }
}

int Initialize(ompt_function_lookup_t lookup, int, ompt_data_t *) {
  auto set = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set)
    return 0;
  g_clock.Calibrate();
  g_tick_check_ticks = g_clock.FromNs(10'000'000);
  // No parallel_end: the master's closing barrier tells when a region ends.
  set(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&OnParallelBegin));
  set(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(&OnImplicitTask));
  set(ompt_callback_sync_region_wait, reinterpret_cast<ompt_callback_t>(&OnSyncRegionWait));
  set(ompt_callback_mutex_acquire, reinterpret_cast<ompt_callback_t>(&OnMutexAcquire));
  set(ompt_callback_mutex_acquired, reinterpret_cast<ompt_callback_t>(&OnMutexAcquired));
  // Called only where tasks switch: programs without tasks pay nothing.
  set(ompt_callback_task_schedule, reinterpret_cast<ompt_callback_t>(&OnTaskSchedule));
  // The analyzer reads waits, not worksharing rows: unless asked for, the
  // work callback stays unregistered, and libomp skips two calls a construct
  // and thread (docs/runtime.md, "OpenMP").
  if (config::BoolValue(config::Id::OmpWorksharing))
    set(ompt_callback_work, reinterpret_cast<ompt_callback_t>(&OnWork));
  g_ompt_active.store(true, std::memory_order_relaxed);
  return 1; // keep the tool
}

void Finalize(ompt_data_t *) {}

ompt_start_tool_result_t g_tool = {&Initialize, &Finalize, {0}};

} // namespace
} // namespace scalana::rt

extern "C" ompt_start_tool_result_t *ompt_start_tool(unsigned int, const char *) {
  // Processes the profiler leaves alone (an MPI launcher's daemons) get no tool.
  return scalana::rt::RuntimeActive() ? &scalana::rt::g_tool : nullptr;
}

#endif // SCALANA_OMP_TOOLS_H

namespace scalana::rt {
const std::vector<uint64_t> *ForkFrames(const void *fork) {
#ifdef SCALANA_OMP_TOOLS_H
  return fork ? &static_cast<const ForkContext *>(fork)->frames : nullptr;
#else
  (void)fork;
  return nullptr;
#endif
}
} // namespace scalana::rt
