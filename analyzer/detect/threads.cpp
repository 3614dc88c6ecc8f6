#include "detect/threads.h"

#include "detect/detect_stages.h"
#include "ppg/ppg_threads.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

namespace scalana {

namespace {
bool Inside(const Psg &psg, VertexId v, VertexId ancestor) {
  for (VertexId p = v; p != kNoVertex; p = psg.vertex(p).parent)
    if (p == ancestor)
      return true;
  return false;
}

// The waits in REGION on SLOT of every thread but THREAD that THREAD's
// EXCESS over its team's median can explain, and how many threads waited.
// A thread waits for the slow one at most that excess; the rest of its wait
// is other work's, or a core it shared (PENNANT, one thread's work injected:
// the other's whole 3.16 s barrier wait was traced to 0.098 s injected).
std::pair<double, int> WaitsInRegion(const Psg &psg, const Run &run, VertexId region, int slot,
                                     int thread, double excess, double min_wait) {
  std::map<int, double> per_thread;
  for (const VertexSeries &s : run.series) {
    if (s.threads.empty() || (region != kNoVertex && !Inside(psg, s.vertex, region)))
      continue;
    for (const ThreadTime &t : s.threads)
      if (t.slot == slot && t.thread != thread && t.wait > 0)
        per_thread[t.thread] += t.wait;
  }
  std::pair<double, int> out{0, 0};
  for (auto [t, w] : per_thread)
    if (w > min_wait) {
      out.first += std::min(w, excess);
      ++out.second;
    }
  return out;
}
// Whether S is work a team shares: not an MPI call, and not a region's own
// call vertex, which holds the master's fork and join in the runtime, work
// no other thread of the team has or could take over (LULESH: 0.55-0.62 s
// a rank at 8 ranks x 2 threads, named "thread 0" at every `omp parallel
// for` of a clean run).
bool TeamWork(const Psg &psg, const VertexSeries &s) {
  const Vertex &x = psg.vertex(s.vertex);
  return !s.threads.empty() && x.kind != VertexKind::Mpi &&
         !(x.kind == VertexKind::Call && x.region != OmpRegion::None);
}

// Calls F(slot, cpu) for each rank of S whose team has two or more
// threads; CPU[t] is thread t's CPU seconds at S.
template <class F> void ForEachTeam(const Run &run, const VertexSeries &s, F f) {
  for (size_t i = 0; i < s.threads.size();) {
    const int slot = s.threads[i].slot;
    const int team = slot < int(run.omp_threads.size()) ? run.omp_threads[size_t(slot)] : 0;
    std::vector<double> cpu(size_t(std::max(team, 0)), 0.0);
    for (; i < s.threads.size() && s.threads[i].slot == slot; ++i)
      if (s.threads[i].thread < team)
        cpu[size_t(s.threads[i].thread)] += s.threads[i].cpu;
    if (team >= 2)
      f(slot, cpu);
  }
}

// The median of the team's other threads (of two, the other one).
double OthersMedian(const std::vector<double> &cpu, int t) {
  std::vector<double> others;
  for (int o = 0; o < int(cpu.size()); ++o)
    if (o != t)
      others.push_back(cpu[size_t(o)]);
  return Median(std::move(others));
}

// The largest excess of one thread over its team's other threads at V, over
// RUN's ranks (0 where no team runs it): the imbalance as each scale has it.
double LargestThreadExcess(const Psg &psg, const Run &run, VertexId v) {
  const VertexSeries *s = run.Find(v);
  double most = 0;
  if (s && TeamWork(psg, *s))
    ForEachTeam(run, *s, [&](int, const std::vector<double> &cpu) {
      for (int t = 0; t < int(cpu.size()); ++t)
        most = std::max(most, cpu[size_t(t)] - OthersMedian(cpu, t));
    });
  return most;
}
} // namespace

std::vector<AbnormalThread> FindAbnormalThreads(const Psg &psg, const Run &run,
                                                const DetectOptions &opts, double floor) {
  std::vector<AbnormalThread> found;
  const double hz = run.sample_rate;
  for (const VertexSeries &s : run.series) {
    if (!TeamWork(psg, s))
      continue;
    ForEachTeam(run, s, [&](int slot, const std::vector<double> &cpu) {
      for (int t = 0; t < int(cpu.size()); ++t) {
        const double med = OthersMedian(cpu, t);
        // Noise: the median's Poisson spread in samples, as for ranks.
        const double noise =
            hz > 0 ? opts.noise_sigma * std::sqrt(std::max(med, 0.0) * hz) / hz : 0;
        double excess = cpu[size_t(t)] - med;
        if (cpu[size_t(t)] <= opts.abnorm_thd * med || excess <= std::max(floor, noise))
          continue;
        AbnormalThread a;
        a.vertex = s.vertex;
        a.slot = slot;
        a.rank = run.ranks[size_t(slot)];
        a.thread = t;
        a.time = cpu[size_t(t)];
        a.median = med;
        a.excess = excess;
        std::tie(a.waits, a.waiting) =
            WaitsInRegion(psg, run, RegionOf(psg, s.vertex), slot, t, excess, opts.min_wait);
        found.push_back(a);
      }
    });
  }
  std::sort(found.begin(), found.end(),
            [](const AbnormalThread &a, const AbnormalThread &b) { return a.excess > b.excess; });
  return found;
}

void AttachThreads(const Psg &psg, const Run &big, const DetectOptions &opts, double floor,
                   const detect_internal::SlowestRank &slowest, std::vector<RootCause> &causes) {
  std::vector<AbnormalThread> abnormal = FindAbnormalThreads(psg, big, opts, floor);
  if (abnormal.empty())
    return;
  std::map<std::pair<VertexId, int>, const AbnormalThread *> at; // (vertex, rank): worst
  for (const AbnormalThread &a : abnormal)
    at.try_emplace({a.vertex, a.rank}, &a);
  std::map<VertexId, size_t> cause_of;
  for (size_t i = 0; i < causes.size(); ++i) {
    RootCause &rc = causes[i];
    cause_of.emplace(rc.vertex, i);
    auto it = at.find({rc.vertex, rc.culprit_rank});
    if (rc.communication || it == at.end())
      continue;
    const AbnormalThread &a = *it->second;
    rc.culprit_thread = a.thread;
    rc.thread_waits_caused = a.waits;
    rc.waiting_threads = a.waiting;
    rc.path.push_back(PathStep{a.vertex, a.rank, a.time, a.waits, "barrier", true, a.thread});
  }
  const double big_max = big.total_time;
  // Imbalance within ranks that no rank-level path explains: a cause of
  // its own, on its worst rank, costing that thread's time over the median.
  for (const AbnormalThread &a : abnormal) {
    if (auto it = cause_of.find(a.vertex); it != cause_of.end()) {
      RootCause &rc = causes[it->second];
      if (rc.thread_imbalance &&
          std::find(rc.ranks.begin(), rc.ranks.end(), a.rank) == rc.ranks.end()) {
        rc.ranks.push_back(a.rank);
        std::sort(rc.ranks.begin(), rc.ranks.end());
      }
      continue;
    }
    cause_of.emplace(a.vertex, causes.size());
    RootCause rc;
    rc.vertex = a.vertex;
    rc.culprit_rank = a.rank;
    rc.culprit_thread = a.thread;
    rc.ranks = {a.rank};
    rc.thread_imbalance = rc.abnormal = true;
    rc.cost_seconds = a.excess;
    rc.culprit_time = a.time;
    rc.median_time = a.median;
    rc.thread_waits_caused = a.waits;
    rc.waiting_threads = a.waiting;
    rc.rank_time = big.rank_total[size_t(a.slot)];
    rc.wall_time = big.meta.wall_time > 0 ? big.meta.wall_time : big_max;
    rc.score = big_max > 0 ? std::min(1.0, a.excess / big_max) : 0;
    // The team waits for the thread: the region, and so its rank, ends
    // later by the excess; the run by it when the rank is the slowest or
    // others wait.
    const bool critical = a.waits > opts.min_wait || slowest.Is(a.slot);
    rc.saved_seconds = critical ? std::min(a.excess, rc.wall_time) : 0;
    if (big.sample_rate > 0)
      detect_internal::SetSampleEvidence(rc, a.excess, a.median, big.sample_rate);
    rc.path.push_back(PathStep{a.vertex, a.rank, a.time, a.waits, "barrier", true, a.thread});
    causes.push_back(std::move(rc));
  }
}

void MarkGrowingImbalance(const Psg &psg, const std::vector<Run> &runs, size_t smallest,
                          size_t largest, double expected_slope, const DetectOptions &opts,
                          const std::unordered_set<VertexId> &non_scalable,
                          std::vector<RootCause> &causes) {
  const Run &small = runs[smallest], &big = runs[largest];
  if (small.world_size == big.world_size)
    return;
  const double floor = detect_internal::NoiseFloor(runs, opts);
  const double hz = big.sample_rate;
  const double ratio = std::pow(double(big.world_size) / small.world_size, expected_slope);
  for (RootCause &rc : causes) {
    if (!rc.thread_imbalance || rc.communication || rc.non_scalable)
      continue;
    if (non_scalable.count(rc.vertex)) { // the vertex's time per rank grows
      rc.non_scalable = true;
      continue;
    }
    // The excess itself, scale by scale: a thread given a share of work that
    // grows with the ranks (an injected imbalance doubling as they double)
    // leaves the vertex's time per rank growing by less than its share.
    std::vector<std::pair<double, double>> pts;
    for (const Run &r : runs)
      pts.push_back({double(r.world_size), LargestThreadExcess(psg, r, rc.vertex)});
    const LogLogFit fit = FitLogLog(pts, floor);
    const double at_small = pts[smallest].second, at_big = pts[largest].second;
    const double expected_big = std::max(at_small, floor) * ratio;
    // Noise: the Poisson spread of the culprit's and its team's counts.
    const double noise =
        hz > 0 ? opts.noise_sigma * std::sqrt((rc.median_time + expected_big) * hz) / hz : 0;
    if (!fit.ok || fit.b - expected_slope < opts.min_slope_excess ||
        at_big - expected_big < std::max(floor, noise))
      continue;
    rc.non_scalable = true;
    rc.small_ranks = small.world_size;
    rc.big_ranks = big.world_size;
    rc.growth.push_back(CommGrowth{"thread excess", at_small, at_big});
  }
}

void MarkSerialFraction(const Psg &psg, const Run &big, std::vector<RootCause> &causes) {
  if (std::none_of(big.omp_threads.begin(), big.omp_threads.end(), [](int n) { return n >= 2; }))
    return;
  for (RootCause &rc : causes)
    if (rc.non_scalable && !rc.communication && !rc.thread_imbalance &&
        psg.vertex(rc.vertex).kind != VertexKind::Mpi && RegionOf(psg, rc.vertex) == kNoVertex)
      rc.serial_fraction = true;
}

} // namespace scalana
