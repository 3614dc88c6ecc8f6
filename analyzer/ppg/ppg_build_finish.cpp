// The end of a run's build (ppg_build.h): arrays per slot, inclusive times,
// warnings; the messages are matched in ppg_build_match.cpp.
#include "ppg/ppg_build_state.h"

#include <cstdio>

namespace scalana {

namespace {

template <class T> void Compact(std::vector<T> &a, const std::vector<int> &ranks, size_t width) {
  if (a.empty())
    return;
  for (size_t slot = 0; slot < ranks.size(); ++slot)
    for (size_t c = 0; c < width; ++c)
      a[slot * width + c] = a[size_t(ranks[slot]) * width + c];
  a.resize(ranks.size() * width);
  a.shrink_to_fit();
}

} // namespace

// The run's totals, then its arrays per slot, inclusive times, matched
// messages and warnings: each a step of its own below, or in
// ppg_build_match.cpp.
Run RunBuilder::State::Finish() {
  CompactToSlots();
  AddInclusiveTime();
  MatchPointToPoint();
  AddRunWarnings();
  return std::move(run);
}

// The sums into seconds; the ranks present numbered as slots and every array
// moved from world ranks to slots.
void RunBuilder::State::CompactToSlots() {
  run.outside_seconds = Seconds(sums.outside);
  run.unplaced_seconds = Seconds(sums.unplaced);
  run.unresolved_seconds = Seconds(sums.unresolved);
  run.approximated_seconds = Seconds(sums.approximated);
  run.omp_wait_cpu = Seconds(sums.omp_wait);
  rate_seconds = Seconds(sums.rate);
  run.world_size = declared > 0 ? declared : max_rank + 1;
  Reserve(size_t(run.world_size));
  run.slot_of_rank.assign(size_t(run.world_size), -1);
  for (int r = 0; r < run.world_size; ++r) {
    if (!seen[r]) {
      run.missing_ranks.push_back(r);
      continue;
    }
    run.slot_of_rank[r] = int32_t(run.ranks.size());
    run.ranks.push_back(r);
  }
  std::vector<uint8_t>().swap(seen);
  run.contexts = contexts.size();
  decltype(contexts)().swap(contexts);
  const int nslots = run.nslots();

  // Per world rank -> per slot (nothing moves when every rank is present).
  if (size_t(nslots) != cap) {
    Compact(run.rank_cpu, run.ranks, 1);
    Compact(run.omp_threads, run.ranks, 1);
    for (VertexSeries &s : run.series) {
      Compact(s.cpu, run.ranks, 1);
      Compact(s.off_cpu, run.ranks, 1);
      Compact(s.mpi, run.ranks, 1);
      Compact(s.calls, run.ranks, 1);
      Compact(s.counters, run.ranks, ncounters);
    }
  }
  if (run.rank_cpu.empty())
    run.rank_cpu.assign(size_t(nslots), 0.f);
  run.rank_time.assign(size_t(nslots), RankTime{});
  for (const ArrivedTime &a : arrived_time)
    run.rank_time[size_t(run.slot_of_rank[size_t(a.rank)])] = a.time;
  std::vector<ArrivedTime>().swap(arrived_time);
  for (VertexSeries &s : run.series) {
    for (ThreadTime &t : s.threads)
      t.slot = run.slot_of_rank[t.slot];
    std::stable_sort(s.threads.begin(), s.threads.end(),
                     [](const ThreadTime &a, const ThreadTime &b) {
                       return a.slot != b.slot ? a.slot < b.slot : a.thread < b.thread;
                     });
  }
  run.sample_rate = rate_seconds > 0 ? double(rate_samples) / rate_seconds : run.meta.sampling.hz;
  const double obtained_seconds = Seconds(sums.obtained);
  run.obtained_rate =
      obtained_seconds > 0 ? double(obtained_samples) / obtained_seconds : run.sample_rate;
}

// Inclusive time: every ancestor of a vertex with data gets a series too.
void RunBuilder::State::AddInclusiveTime() {
  const int nslots = run.nslots();
  size_t own_count = run.series.size();
  for (size_t i = 0; i < own_count; ++i) {
    VertexId p = psg.vertex(run.series[i].vertex).parent;
    while (p != kNoVertex) {
      bool had = size_t(p) < run.slot_of_vertex.size() && run.slot_of_vertex[p] >= 0;
      SeriesOf(p);
      if (had)
        break; // its ancestors were added when it was
      p = psg.vertex(p).parent;
    }
  }
  if (run.slot_of_vertex.size() < psg.vertices().size())
    run.slot_of_vertex.resize(psg.vertices().size(), -1);
  for (VertexSeries &s : run.series)
    s.incl.assign(size_t(nslots), 0.f);
  for (size_t i = 0; i < own_count; ++i) {
    for (int slot = 0; slot < nslots; ++slot) {
      float t = float(ExclusiveTime(psg, run.series[i], slot));
      if (t == 0)
        continue;
      for (VertexId v = run.series[i].vertex; v != kNoVertex; v = psg.vertex(v).parent)
        run.series[run.slot_of_vertex[v]].incl[slot] += t;
    }
  }
  // Total per rank: every top-level vertex (main, and the roots of thread
  // start routines that Resolve adds beside it).
  run.rank_total.assign(size_t(nslots), 0.f);
  for (const VertexSeries &s : run.series)
    if (psg.vertex(s.vertex).parent == kNoVertex)
      for (int slot = 0; slot < nslots; ++slot)
        run.rank_total[slot] += s.incl[slot];
  for (float t : run.rank_total)
    run.total_time = std::max(run.total_time, double(t));
}

// Which ranks are missing, how the others ended, and what could not be placed.
void RunBuilder::State::AddRunWarnings() {
  const std::string &label = run.label;
  const int nslots = run.nslots();
  // Samples a full context table dropped: their time is on no vertex, so
  // the ranks' computation reads short by that share.
  if (run.samples_dropped > 0) {
    auto percent = [](double share) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
      return std::string(buf);
    };
    const double share =
        double(run.samples_dropped) / double(std::max<uint64_t>(run.samples_taken, 1));
    run.warnings.push_back(
        label + ": " + std::to_string(run.samples_dropped) + " of " +
        std::to_string(run.samples_taken) + " samples (" + percent(share) + ") dropped on " +
        std::to_string(run.dropped_ranks) + (run.dropped_ranks == 1 ? " rank" : " ranks") +
        " (most: rank " + std::to_string(run.most_dropped_rank) + ", " +
        percent(run.most_dropped_share) +
        " of its samples): a thread's table of calling contexts (4,096 contexts, 128 Ki "
        "frames) was full; their time is on no vertex, so those ranks' computation reads "
        "short by that share");
  }
  if (!run.missing_ranks.empty()) {
    std::string list;
    for (size_t i = 0; i < run.missing_ranks.size() && i < 20; ++i)
      list += (i ? "," : "") + std::to_string(run.missing_ranks[i]);
    if (run.missing_ranks.size() > 20)
      list += ",...";
    run.warnings.push_back(label + ": " + std::to_string(run.missing_ranks.size()) + " of " +
                           std::to_string(run.world_size) + " ranks missing from the profile (" +
                           list + "); analysing the " + std::to_string(nslots) + " present");
  }
  // Which ranks ended before MPI_Finalize, and how; why the missing ones
  // left no data (one line per reason). The summary holds only the ranks
  // with something to say; with ranks missing or unwritten, the present
  // ones are listed too (rows left out) so that the missing are told apart.
  std::sort(summary.ranks.begin(), summary.ranks.end(),
            [](const RankData &a, const RankData &b) { return a.rank < b.rank; });
  if (!run.missing_ranks.empty() || !summary.unwritten.empty()) {
    Profile all;
    all.meta.world_size = run.world_size;
    all.unwritten = summary.unwritten;
    all.skipped = summary.skipped;
    size_t k = 0;
    for (int r : run.ranks) {
      if (k < summary.ranks.size() && summary.ranks[k].rank == r) {
        all.ranks.push_back(summary.ranks[k++]);
      } else {
        all.ranks.emplace_back();
        all.ranks.back().rank = r;
      }
    }
    for (const std::string &line : DescribeRankEnds(all))
      run.warnings.push_back(label + ": " + line);
  } else {
    for (const std::string &line : DescribeRankEnds(summary))
      run.warnings.push_back(label + ": " + line);
  }
  if (run.unresolved_contexts)
    run.warnings.push_back(label + ": " + std::to_string(run.unresolved_contexts) + " of " +
                           std::to_string(run.contexts) +
                           " contexts do not fit the binary's PSG (" +
                           std::to_string(run.unresolved_rows) + " rows ignored)");
  if (run.approximated_contexts) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3g", run.approximated_seconds);
    run.warnings.push_back(label + ": " + std::to_string(run.approximated_contexts) + " of " +
                           std::to_string(run.contexts) +
                           " contexts fit the PSG only in part (a chain of calls it does not "
                           "know); their " +
                           std::to_string(run.approximated_rows) + " rows (" + secs +
                           " s) are placed at the largest part that fits");
  }
  if (run.unmatched_p2p)
    run.warnings.push_back(label + ": " + std::to_string(run.unmatched_p2p) +
                           " point-to-point rows have no matching row on the peer rank");
  summary.meta.world_size = run.world_size;
  for (const std::string &w : SamplingWarnings(summary))
    run.warnings.push_back(label + ": " + w);
}

} // namespace scalana
