#include "detect/detect_stages.h"
#include "scalana/io_operations.h"

#include <algorithm>
#include <cmath>

namespace scalana {
namespace detect_internal {

CauseCosts::CauseCosts(const Psg &psg, const std::vector<Run> &runs, size_t smallest,
                       size_t largest, const std::unordered_set<uint64_t> &abnormal,
                       const std::unordered_set<VertexId> &non_scalable,
                       const std::vector<NonScalableVertex> &ns, const CommLayer &layer)
    : psg_(psg), runs_(runs), smallest_(smallest), largest_(largest), big_(runs[largest]),
      abnormal_(abnormal), non_scalable_(non_scalable), ns_(ns), layer_(layer) {}

// A POSIX I/O call is the rank's own work, like computation: it waits for
// the device, not for another rank, so it can be the cause a wait is traced
// to (rank 0 writing what it gathered while the others wait at the barrier).
// A call that holds MPI rows calls MPI through a pointer (IOR's MPI-IO
// access function): its time is the MPI call's, not computation.
bool CauseCosts::Communication(VertexId v) const {
  const Vertex &x = psg_.vertex(v);
  if (x.kind == VertexKind::Mpi)
    return !IsPosixIoOperation(x.label);
  if (x.kind == VertexKind::Call)
    if (const VertexSeries *s = big_.Find(v); s && s->mpi_rows)
      return true;
  return layer_.Contains(v);
}

bool CauseCosts::Abnormal(VertexId v, int rank) const {
  return abnormal_.count(StepKey(v, rank, false)) > 0;
}

bool CauseCosts::NonScalable(VertexId v) const { return non_scalable_.count(v) > 0; }

double CauseCosts::MedianOf(VertexId v, const VertexSeries &s) {
  auto [it, fresh] = medians_.try_emplace(v, 0.0);
  if (fresh)
    it->second = Median(TimesOverRanks(psg_, big_, s));
  return it->second;
}

// A non-scalable vertex is problematic on the ranks where it takes at least
// its median time: on a rank where it is quicker than usual it is not what
// made that rank late (and the path should go on to what did).
// (Communication vertices are never root causes: they stay marked on every
// rank, so a path shows which waits are part of the loss.)
bool CauseCosts::Problematic(VertexId v, int rank) {
  if (Abnormal(v, rank))
    return true;
  if (Communication(v))
    return NonScalable(v);
  if (!NonScalable(v))
    return false;
  const VertexSeries *s = big_.Find(v);
  int slot = big_.SlotOf(rank);
  return s && slot >= 0 && ExclusiveTime(psg_, *s, slot) >= MedianOf(v, *s);
}

// What a vertex costs on a rank: its time there over its median over the
// ranks, and for a non-scalable vertex at least its growth beyond the
// expected scaling from the smallest run.
double CauseCosts::Cost(VertexId v, int rank, bool *growth) {
  const double p_small = runs_[smallest_].world_size, p_big = big_.world_size;
  const VertexSeries *s = big_.Find(v);
  int slot = big_.SlotOf(rank);
  if (!s || slot < 0)
    return 0.0;
  double cost = std::max(0.0, ExclusiveTime(psg_, *s, slot) - MedianOf(v, *s));
  if (NonScalable(v))
    for (const NonScalableVertex &ns : ns_)
      if (ns.vertex == v && ns.merged.size() == runs_.size()) {
        double expected = ns.merged[smallest_].second * std::pow(p_big / p_small, ns.expected);
        if (ns.merged[largest_].second - expected > cost) {
          cost = ns.merged[largest_].second - expected;
          if (growth)
            *growth = true;
        }
      }
  return cost;
}

// A call chosen as the cause holds only the samples taken at the call site
// itself: instructions of the inlined callee that carry the call's line
// (hoisted or merged into the caller). The work is the callee's, so the
// cause is the vertex of the called code that costs the most on that rank,
// if any costs more than its median there: its loop is the line to fix.
// (On bench-accuracy's RAJA-style forall, rank 7's extra series terms put
// 19 samples on the lambda's call line against a median of 3, and only 28
// against 22 in the loop itself: too few alone to pass the noise test.)
VertexId CauseCosts::CostliestInside(VertexId v, int rank) {
  if (psg_.vertex(v).kind != VertexKind::Call)
    return v;
  VertexId best = v;
  double best_cost = 0;
  std::vector<VertexId> todo(psg_.vertex(v).children.begin(), psg_.vertex(v).children.end());
  while (!todo.empty()) {
    VertexId c = todo.back();
    todo.pop_back();
    const Vertex &x = psg_.vertex(c);
    if (Communication(c))
      continue;
    if (double cost = Cost(c, rank); cost > best_cost)
      best = c, best_cost = cost;
    todo.insert(todo.end(), x.children.begin(), x.children.end());
  }
  return best;
}

} // namespace detect_internal
} // namespace scalana
