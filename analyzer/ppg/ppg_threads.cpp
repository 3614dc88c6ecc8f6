#include "ppg/ppg_threads.h"

#include <algorithm>
#include <map>

namespace scalana {

VertexId RegionOf(const Psg &psg, VertexId v) {
  for (VertexId p = v; p != kNoVertex; p = psg.vertex(p).parent)
    if (psg.vertex(p).region != OmpRegion::None)
      return p;
  return kNoVertex;
}

void AddThreadTimes(const Psg &psg, Run &run, const RankData &rd, int slot,
                    const std::function<VertexId(uint32_t)> &vertex_of,
                    const std::function<VertexSeries &(VertexId)> &series_of) {
  if (rd.thread_info.empty())
    return;
  std::map<uint32_t, int> omp_of; // thread index -> OpenMP thread number
  int team = 0;
  for (const ThreadInfo &t : rd.thread_info) {
    omp_of[t.index] = t.omp_thread;
    team += t.omp_thread >= 0;
  }
  if (run.omp_threads.size() < size_t(run.nslots()))
    run.omp_threads.assign(size_t(run.nslots()), 0);
  run.omp_threads[size_t(slot)] = team;
  if (team == 0)
    return;
  auto omp = [&](uint32_t index) {
    auto it = omp_of.find(index);
    return it == omp_of.end() ? -1 : it->second;
  };
  // (vertex, OpenMP thread) -> cpu, wait. The main thread's CPU at a vertex
  // is the rank's less the other threads': contexts only it sampled have no
  // thread rows.
  std::map<std::pair<VertexId, int>, std::pair<double, double>> times;
  std::map<VertexId, double> others_cpu;
  for (const ThreadRow &row : rd.thread_vertices) {
    VertexId v = vertex_of(row.ctx);
    int t = omp(row.thread);
    if (v == kNoVertex || t < 0 || row.thread == 0)
      continue;
    times[{v, t}].first += row.cpu_seconds;
    others_cpu[v] += row.cpu_seconds;
  }
  const int main_omp = omp(0);
  for (const OmpRow &row : rd.omp) {
    if (!IsOmpWait(row.kind))
      continue;
    run.omp_wait_cpu += row.cpu_seconds;
    VertexId v = vertex_of(row.ctx);
    int t = omp(row.thread);
    if (v == kNoVertex || t < 0)
      continue;
    times[{v, t}].second += row.seconds;
    if (row.thread != 0)
      others_cpu.try_emplace(v, 0.0);
  }
  // Code of a construct that only the main thread sampled (the slow part of
  // an imbalance, often) has no thread rows either: all of it is the main
  // thread's. Only vertices inside a construct: serial code has no team.
  if (main_omp >= 0)
    for (const VertexSeries &s : run.series)
      if (!s.cpu.empty() && s.cpu[size_t(slot)] > 0 && !others_cpu.count(s.vertex) &&
          RegionOf(psg, s.vertex) != kNoVertex)
        times[{s.vertex, main_omp}].first += s.cpu[size_t(slot)];
  if (main_omp >= 0)
    for (const auto &[v, cpu] : others_cpu) {
      VertexSeries &s = series_of(v);
      double all = s.cpu.empty() ? 0 : double(s.cpu[size_t(slot)]);
      times[{v, main_omp}].first += std::max(0.0, all - cpu);
    }
  for (const auto &[key, t] : times) {
    VertexSeries &s = series_of(key.first);
    s.threads.push_back(ThreadTime{slot, key.second, float(t.first), float(t.second)});
  }
}

} // namespace scalana
