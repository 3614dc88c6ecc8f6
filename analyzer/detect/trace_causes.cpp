#include "detect/detect_stages.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace scalana {

using namespace detect_internal;

namespace {

// Non-scalable MPI vertices whose paths reached no computation cause, or
// one that explains less than this share of their loss, are unexplained.
constexpr double kExplainsShare = 0.25;

// Root cause: the problematic computation vertex of the path that costs the
// most; of equal costs, the one farthest back (the paper's "last
// problematic vertex", which alone would pass over a large cause to a
// noise-level one behind it). Null when there is none; COST: its cost.
const PathStep *CostliestStep(const std::vector<PathStep> &path, CauseCosts &costs, double &cost) {
  const PathStep *cause = nullptr;
  cost = -1;
  for (const PathStep &ps : path) {
    if (!ps.problematic || costs.Communication(ps.vertex))
      continue;
    double c = costs.Cost(ps.vertex, ps.rank);
    if (c >= cost) {
      cause = &ps;
      cost = c;
    }
  }
  return cause;
}

// The root cause that PATH's step CAUSE stands for, into RES.root_causes the
// first time its vertex is reached, with one more rank where it is
// problematic; returns its index there.
size_t AddCause(const std::vector<PathStep> &path, const PathStep &cause, CauseCosts &costs,
                TracedCauses &traced, DetectResult &res) {
  const VertexId cause_vertex = costs.CostliestInside(cause.vertex, cause.rank);
  auto [pos, fresh] = traced.index.try_emplace(cause_vertex, res.root_causes.size());
  if (fresh) {
    if (cause_vertex != cause.vertex)
      traced.call_site_cost[cause_vertex] = {cause.rank, costs.Cost(cause.vertex, cause.rank)};
    RootCause rc;
    rc.vertex = cause_vertex;
    rc.culprit_rank = cause.rank;
    rc.path = path;
    res.root_causes.push_back(std::move(rc));
    traced.waits.emplace_back();
  }
  RootCause &rc = res.root_causes[pos->second];
  if (std::find(rc.ranks.begin(), rc.ranks.end(), cause.rank) == rc.ranks.end())
    rc.ranks.push_back(cause.rank);
  return pos->second;
}

// The waiting this path starts with, at its first crossing: the start
// rank's wait, and at a collective every member's (the culprit
// arrived last; one path stands for all of them). Into WAITS, the largest
// per waiting rank other than CULPRIT.
void AddFirstCrossingWaits(const Psg &psg, const Run &big, const std::vector<PathStep> &path,
                           int culprit, const DetectOptions &opts, std::map<int, double> &waits) {
  auto add_wait = [&](int r, double w) {
    if (r != culprit && w > opts.min_wait)
      waits[r] = std::max(waits[r], w);
  };
  auto add_members = [&](VertexId collective) {
    if (const VertexSeries *cs = big.Find(collective))
      for (const DepEdge &e : cs->edges)
        if (e.kind == DepKind::Coll)
          add_wait(e.rank, e.wait);
  };
  // A path that starts at a collective on the culprit's own rank started
  // at its latest arrival: everyone else there waited for it.
  if (path.front().rank == culprit && IsCollective(psg, path.front().vertex))
    add_members(path.front().vertex);
  for (size_t i = 1; i < path.size(); ++i)
    if (path[i].via == "p2p" || path[i].via == "collective" || path[i].via == "rma") {
      add_wait(path[i - 1].rank, path[i].wait);
      if (path[i].via == "collective")
        add_members(path[i - 1].vertex);
      break;
    }
}

} // namespace

TracedCauses TraceCauses(const Psg &psg, const BacktrackStarts &starts, const DetectOptions &opts,
                         CauseCosts &costs, DetectResult &res) {
  const Run &big = costs.big();
  const std::function<bool(VertexId, int)> problematic = [&costs](VertexId v, int rank) {
    return costs.Problematic(v, rank);
  };
  TracedCauses traced;
  // An abnormal start is walked from unless an earlier path named it its
  // cause. Merely lying on an earlier path is not enough: a path names only
  // its costliest step, and Quicksilver's injected loop, abnormal on rank 7,
  // lay on the path of a loop that grew 30% under load and was never named.
  std::unordered_set<uint64_t> chosen;
  for (size_t si = 0; si < starts.at.size(); ++si) {
    auto [v, rank] = starts.at[si];
    if (si >= starts.non_scalable && chosen.count(StepKey(v, rank, false)))
      continue;
    std::vector<PathStep> path = Backtrack(psg, big, v, rank, opts, problematic);
    double cause_cost;
    const PathStep *cause = CostliestStep(path, costs, cause_cost);
    // An abnormal computation vertex is the cause of its own excess: nothing
    // behind it made it slow, and a costlier vertex behind it on its rank
    // is named from its own start. (Quicksilver: the injected loop, 0.133 s
    // over its median on rank 7, gave way to a loop grown 0.25 s under load
    // that lay behind it.)
    if (si >= starts.non_scalable && !costs.Communication(v) && !path.empty() &&
        path.front().vertex == v && path.front().problematic) {
      cause = &path.front();
      cause_cost = costs.Cost(v, rank);
    }
    if (cause) {
      chosen.insert(StepKey(cause->vertex, cause->rank, false));
      size_t ci = AddCause(path, *cause, costs, traced, res);
      AddFirstCrossingWaits(psg, big, path, cause->rank, opts, traced.waits[ci]);
    }
    // A non-scalable communication vertex is explained by computation that
    // could have made it wait: a cause costing a small part of its loss
    // leaves the rest unexplained (alltoall's fill loop, 0.018 s growing
    // with p, under an all-to-all that grew by 0.87 s with its bytes), and
    // it is named too.
    if (si < starts.non_scalable && costs.Communication(v) &&
        (!cause || cause_cost < kExplainsShare * costs.Cost(v, rank)))
      traced.unexplained.push_back({v, rank});
    res.paths.push_back(std::move(path));
  }
  return traced;
}

} // namespace scalana
