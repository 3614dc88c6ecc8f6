// The thread dimension of a snapshot (docs/formats.md section 3, "Threads"):
// each thread's samples per context where a thread other than the main one
// sampled it, and the OpenMP waits and worksharing loops the OMPT tool
// recorded (ompt_tool.cpp). Called by SnapshotMpi with the contexts' lock held.
#include "thread_snapshot.h"
#include "runtime.h"
#include "signal_safe/schedstat.h"
#include "wall_clock.h"

#include <algorithm>
#include <map>
#include <time.h>

namespace scalana::rt {

namespace {
const char *OmpKindName(uint32_t kind) {
  if (kind & kOmpWorkKind) {
    uint32_t work = kind & ~kOmpWorkKind;
    // ompt_work_loop (1) and the schedules of OpenMP 5.2 (10-13).
    return work == 1 || (work >= 10 && work <= 13) ? "loop" : "work";
  }
  if (kind & kOmpMutexKind) {
    switch (kind & ~kOmpMutexKind) { // ompt_mutex_t
    case 5:
      return "critical";
    case 7:
      return "ordered";
    case 3:
    case 4:
      return "nest_lock";
    default:
      return "lock";
    }
  }
  switch (kind) { // ompt_sync_region_t
  case 9:
    return "barrier"; // the implicit barrier closing a parallel region
  case 8:
    return "loop_barrier"; // closing a worksharing construct
  case 3:
    return "explicit_barrier";
  case 5:
    return "taskwait";
  case 6:
    return "taskgroup";
  case 7:
    return "reduction";
  default:
    return "other_barrier";
  }
}
// The CPU time thread T used since sampling started on it: up to its end, or
// to now while it lives (another thread's CPU clock reads while it exists).
// A thread that left by pthread_exit has no end recorded and its clock fails
// to read (0: not measured); only if a new thread of this process took its
// id since would the clock read that one's time.
uint64_t CpuWhileSampled(const ThreadSamples *t) {
  uint64_t end = t->end_cpu_ns;
  struct timespec now;
  if (!end && t->cpu_clock != -1 && clock_gettime(clockid_t(t->cpu_clock), &now) == 0)
    end = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  return end > t->start_cpu_ns ? end - t->start_cpu_ns : 0;
}

struct SchedSpan {
  double on_cpu = 0, run_delay = 0, wall = 0;
};
// The kernel's account of thread T while profiled: up to its end, or to now
// while it lives. False when it could not be read (no schedstat, or a thread
// that left by pthread_exit, whose end was not recorded and whose file is gone).
bool SchedWhileProfiled(const ThreadSamples *t, SchedSpan *out) {
  if (!t->sched_ok)
    return false;
  SchedTimes end{t->end_on_cpu_ns, t->end_run_delay_ns};
  uint64_t end_wall = t->end_wall_ns;
  if (!end_wall) {
    if (!ReadSchedTimes(t->tid, &end))
      return false;
    end_wall = MonotonicNs();
  } else if (!end.on_cpu_ns) {
    return false; // its end could not be read
  }
  auto span = [](uint64_t from, uint64_t to) { return 1e-9 * double(to > from ? to - from : 0); };
  out->on_cpu = span(t->start_on_cpu_ns, end.on_cpu_ns);
  out->run_delay = span(t->start_run_delay_ns, end.run_delay_ns);
  out->wall = span(t->start_wall_ns, end_wall);
  return true;
}

// T's time off the CPU (off_cpu.cpp) as rows of R, by context; whether
// it had any (the thread is then listed, as its rows name it).
bool SnapshotOffCpu(RankData &r, const ThreadSamples *t,
                    const std::function<uint32_t(Context &&)> &intern) {
  std::map<uint32_t, OffCpuRow> rows;
  auto add = [&](Context &&c, uint64_t switches, uint64_t blocked_ns, uint64_t delay_ns) {
    OffCpuRow &row = rows[intern(std::move(c))];
    row.switches += switches;
    row.blocked += 1e-9 * double(blocked_ns);
    row.run_delay += 1e-9 * double(delay_ns);
  };
  for (uint32_t i = 0; i < kSampleSlots; ++i) {
    const SampleSlot &slot = t->slots[i];
    if (!slot.hash || !slot.switches)
      continue;
    std::atomic_thread_fence(std::memory_order_acquire);
    add(Context(t->frames + slot.frames_offset,
                t->frames + slot.frames_offset + slot.frames_length),
        slot.switches, slot.blocked_ns, slot.delay_ns);
  }
  if (t->off_cpu_unplaced_ns)
    add(Context(), 0, t->off_cpu_unplaced_ns, 0); // no context: the analyzer's "outside"
  for (auto &[ctx, row] : rows) {
    row.ctx = ctx;
    row.thread = t->index;
    r.off_cpu.push_back(row);
  }
  return !rows.empty();
}

// A thread without samples or OpenMP number is worth a row from this much
// CPU time: a dozen timer ticks.
constexpr double kListedCpuSeconds = 0.05;
} // namespace

void SnapshotThreads(RankData &r, const std::function<uint32_t(Context &&)> &intern) {
  struct PerThread {
    uint64_t samples = 0, cpu_ns = 0;
  };
  std::map<uint32_t, std::map<uint32_t, PerThread>> by_ctx;
  bool omp = false;
  for (ThreadSamples *t = FirstThreadSamples(); t; t = t->next) {
    bool sampled = false;
    for (uint32_t i = 0; i < kSampleSlots; ++i) {
      const SampleSlot &slot = t->slots[i];
      if (!slot.hash)
        continue;
      std::atomic_thread_fence(std::memory_order_acquire);
      sampled = true;
      // The main thread's share is the rank's row less the others': all its
      // slots say here is that it sampled.
      if (t->index == 0)
        break;
      if (!slot.samples)
        continue; // time off the CPU only: its row is below
      uint32_t ctx = intern(Context(t->frames + slot.frames_offset,
                                    t->frames + slot.frames_offset + slot.frames_length));
      PerThread &p = by_ctx[ctx][t->index];
      p.samples += slot.samples;
      p.cpu_ns += slot.cpu_ns;
    }
    for (uint32_t i = 0; i < kOmpWaitSlots; ++i) {
      const OmpWaitSlot &w = t->omp_waits[i];
      uint32_t kind = __atomic_load_n(&w.kind, __ATOMIC_ACQUIRE);
      if (!kind || (!w.count && !w.samples))
        continue;
      Context c;
      if (const std::vector<uint64_t> *fork = ForkFrames(w.fork))
        c.assign(fork->begin(), fork->end());
      // The construct's own return address, unless it is the fork's.
      void *raw[1] = {reinterpret_cast<void *>(w.codeptr)};
      uint64_t frame[kMaxProgramFrames + 1];
      if (w.codeptr && ProgramContext(raw, 1, 0, false, false, frame) == 1 &&
          (c.empty() || c.back() != frame[0]))
        c.push_back(frame[0]);
      OmpRow row;
      row.ctx = intern(std::move(c));
      row.thread = t->index;
      row.kind = OmpKindName(kind);
      row.count = w.count;
      row.seconds = 1e-9 * double(w.wall_ns);
      row.samples = w.samples;
      row.cpu_seconds = 1e-9 * double(w.cpu_ns);
      row.iterations = w.iterations;
      r.omp.push_back(std::move(row));
      sampled = omp = true;
    }
    const bool off_cpu = SnapshotOffCpu(r, t, intern);
    if (t->omp_waits_dropped)
      r.errors["omp_waits_dropped"] += t->omp_waits_dropped;
    double cpu = 1e-9 * double(CpuWhileSampled(t));
    // A thread that used CPU but has no sample is listed too: the sampler
    // missed it (show and detect say so), it was not idle.
    SchedSpan sched;
    bool timed = SchedWhileProfiled(t, &sched);
    if (t->index == 0 && timed) {
      r.on_cpu = sched.on_cpu;
      r.run_delay = sched.run_delay;
    }
    if (sampled || off_cpu || t->omp_thread >= 0 || cpu >= kListedCpuSeconds)
      r.thread_info.push_back(ThreadInfo{t->index, t->omp_thread, t->samples, cpu,
                                         timed ? sched.run_delay : 0, timed ? sched.wall : 0});
  }
  // Rows of the threads other than the main one only: its own would repeat
  // what the rank's row already says (LULESH, 2 threads: 30% of the rows).
  for (const auto &[ctx, threads] : by_ctx)
    for (const auto &[thread, p] : threads)
      r.thread_vertices.push_back(ThreadRow{ctx, thread, p.samples, 1e-9 * double(p.cpu_ns)});
  bool others = std::any_of(r.thread_info.begin(), r.thread_info.end(),
                            [](const ThreadInfo &i) { return i.index != 0; });
  if (r.thread_vertices.empty() && !omp && !others)
    r.thread_info.clear(); // one thread's program: nothing to add
  std::sort(r.thread_info.begin(), r.thread_info.end(),
            [](const ThreadInfo &a, const ThreadInfo &b) { return a.index < b.index; });
}

} // namespace scalana::rt
