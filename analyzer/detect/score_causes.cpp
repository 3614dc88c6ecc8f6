#include "detect/detect_stages.h"

#include <algorithm>

namespace scalana {

using namespace detect_internal;

namespace {

// Every rank's wait for CULPRIT: TRACED (the waits backtracking traced to
// it) and, point to point and one-sided, the waits on it found in the edges,
// per waiting vertex (a Waitall reports its wait on each of its rows),
// whether or not a path started there (abnormal starts are one per vertex).
std::map<int, double> WaitsFor(const Run &big, int culprit, std::map<int, double> traced,
                               const DetectOptions &opts) {
  std::map<int, double> direct;
  for (const VertexSeries &vs : big.series) {
    std::map<int, double> at_vertex;
    for (const DepEdge &e : vs.edges)
      if (e.peer_rank == culprit && e.rank != culprit &&
          (e.kind == DepKind::Recv || e.kind == DepKind::Rma) && e.wait > opts.min_wait)
        at_vertex[e.rank] = std::max(at_vertex[e.rank], double(e.wait));
    for (auto [r, w] : at_vertex)
      direct[r] += w;
  }
  for (auto [r, w] : direct)
    traced[r] = std::max(traced[r], w);
  return traced;
}

// The hardware counters of S on the culprit's SLOT against their median over
// the ranks, when the run has real counters.
void AddCounterEvidence(const Run &big, const VertexSeries &s, int slot, RootCause &rc) {
  const size_t nc = big.meta.sampling.counters.size();
  if (big.meta.sampling.counters_real && nc && !s.counters.empty() && slot >= 0) {
    for (size_t c = 0; c < nc; ++c) {
      std::vector<double> vals(big.nslots());
      for (int i = 0; i < big.nslots(); ++i)
        vals[i] = s.counters[size_t(i) * nc + c];
      rc.evidence.push_back({big.meta.sampling.counters[c], vals[slot], Median(std::move(vals))});
    }
  }
}

} // namespace

void ScoreCauses(const Psg &psg, const TracedCauses &traced, const DetectOptions &opts,
                 const SlowestRank &slowest, CauseCosts &costs, DetectResult &res) {
  const Run &big = costs.big();
  const double big_max = big.total_time;
  for (size_t ci = 0; ci < res.root_causes.size(); ++ci) {
    RootCause &rc = res.root_causes[ci];
    const VertexSeries *s = big.Find(rc.vertex);
    rc.non_scalable = costs.NonScalable(rc.vertex);
    double cost = costs.Cost(rc.vertex, rc.culprit_rank, &rc.cost_is_growth);
    if (auto it = traced.call_site_cost.find(rc.vertex);
        it != traced.call_site_cost.end() && it->second.first == rc.culprit_rank)
      cost += it->second.second;
    // A rank cannot wait for a cause longer than the cause makes its rank
    // late: each of its waits for the culprit is at most the excess the
    // culprit had then, and those excesses add up to the cost. The rest of
    // what it waited there is the culprit's rank being late for other
    // reasons (oversubscription, other causes); without the bound every
    // cause of one rank, however small, claimed that rank's whole wait.
    for (auto [r, w] : WaitsFor(big, rc.culprit_rank, traced.waits[ci], opts)) {
      rc.waits_caused += std::min(w, cost);
      ++rc.waiting_ranks;
    }
    rc.wall_time = big.meta.wall_time > 0 ? big.meta.wall_time : big_max;
    if (int slot = big.SlotOf(rc.culprit_rank); slot >= 0) {
      rc.rank_time = big.rank_total[slot];
      rc.rank_cpu = big.rank_cpu[slot];
    }
    if (!s)
      continue;
    double med = costs.MedianOf(rc.vertex, *s);
    int slot = big.SlotOf(rc.culprit_rank);
    rc.culprit_time = slot >= 0 ? ExclusiveTime(psg, *s, slot) : 0;
    rc.culprit_off_cpu = slot >= 0 && !s->off_cpu.empty() ? s->off_cpu[size_t(slot)] : 0;
    rc.median_time = med;
    for (int i = 0; i < big.nslots(); ++i)
      rc.most_time_here = std::max(rc.most_time_here, ExclusiveTime(psg, *s, i));
    for (int i = 0; i < big.nslots(); ++i)
      if (costs.Abnormal(rc.vertex, big.ranks[i])) {
        rc.abnormal = true;
        if (std::find(rc.ranks.begin(), rc.ranks.end(), big.ranks[i]) == rc.ranks.end())
          rc.ranks.push_back(big.ranks[i]);
      }
    std::sort(rc.ranks.begin(), rc.ranks.end());
    rc.cost_seconds = cost;
    rc.score = big_max > 0 ? std::min(1.0, cost / big_max) : 0;
    // Off the critical path (nobody waits for it, its rank is not the
    // slowest) a fix shortens nothing; on it, the wall time by the cost.
    // A collective's growth is every member's, and so is that of code that
    // grows on every rank alike (non-scalable, abnormal nowhere): the
    // slowest rank has it too (events' routing table at 8 ranks read "no
    // wall time saved" on the rank chosen as its culprit).
    const bool everywhere = rc.non_scalable && !rc.abnormal;
    const bool critical = rc.waits_caused > opts.min_wait ||
                          slowest.Is(big.SlotOf(rc.culprit_rank)) || everywhere ||
                          (rc.communication && IsCollective(psg, rc.vertex));
    rc.saved_seconds = critical ? std::min(cost, rc.wall_time) : 0;
    // How many samples the conclusion rests on: the cost in samples against
    // the Poisson noise of the median's count (at least one sample). Below
    // kSettled standard deviations a repetition may not find it again;
    // samples grow with run length (or rate), noise with its square root.
    const double hz = big.sample_rate;
    if (hz > 0 && psg.vertex(rc.vertex).kind != VertexKind::Mpi)
      SetSampleEvidence(rc, cost, med, hz);
    AddCounterEvidence(big, *s, slot, rc);
  }
}

} // namespace scalana
