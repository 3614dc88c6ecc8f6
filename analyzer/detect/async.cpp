#include "detect/async.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace scalana {

namespace {

bool IssuesOperations(DepKind k) { return k == DepKind::Send || k == DepKind::Rma; }

// What a hot spot draws: operations (messages, puts) or bytes. exstack's
// puts go to every PE alike in number but 4.6x the bytes to PE 0.
constexpr int kOperations = int(HotMeasure::Operations), kBytes = int(HotMeasure::Bytes);
constexpr int kMeasures = 2;

// Whether a row on a vertex that is no Wait/Test counts as operations to its
// peer. Synchronisation rows (flush, unlock: no data) are not updates.
bool Draws(const DepEdge &e) {
  if (!IssuesOperations(e.kind) || e.peer_rank < 0 || e.count == 0)
    return false;
  return !(e.kind == DepKind::Rma && e.bytes == 0);
}

// Operations and bytes per target rank of the rows on one vertex (or one
// call in the source): flat arrays sorted by target, not maps, because a
// million ranks made a node per target the costliest part of detection.
struct Fanout {
  std::vector<int> targets;            // distinct, ascending
  std::vector<uint64_t> to[kMeasures]; // per target, as TARGETS
  uint64_t total[kMeasures] = {0, 0};
  DepKind kind = DepKind::Send;

  // The index of TARGET in targets, or -1.
  long Find(int target) const {
    auto it = std::lower_bound(targets.begin(), targets.end(), target);
    return it != targets.end() && *it == target ? long(it - targets.begin()) : -1;
  }
};

// (target, operations, bytes) rows summed per target.
struct Draw {
  int target;
  uint64_t amount[kMeasures];
};
void Fold(std::vector<Draw> &draws, Fanout &f) {
  std::sort(draws.begin(), draws.end(),
            [](const Draw &a, const Draw &b) { return a.target < b.target; });
  for (const Draw &d : draws) {
    if (f.targets.empty() || f.targets.back() != d.target) {
      f.targets.push_back(d.target);
      for (int m = 0; m < kMeasures; ++m)
        f.to[m].push_back(0);
    }
    for (int m = 0; m < kMeasures; ++m) {
      f.to[m].back() += d.amount[m];
      f.total[m] += d.amount[m];
    }
  }
}

// A Wait/Test that completes sends carries rows for them too, but the
// producers' loop is where they were issued.
bool Completes(const Psg &psg, VertexId v) {
  return psg.vertex(v).mpi_class == MpiClass::Completion;
}

std::map<VertexId, Fanout> FanoutByVertex(const Psg &psg, const Run &run) {
  std::map<VertexId, Fanout> out;
  std::vector<Draw> draws;
  for (const VertexSeries &s : run.series) {
    if (Completes(psg, s.vertex))
      continue;
    draws.clear();
    DepKind kind = DepKind::Send;
    for (const DepEdge &e : s.edges)
      if (Draws(e)) {
        draws.push_back({e.peer_rank, {e.count, e.bytes}});
        kind = e.kind;
      }
    if (draws.empty())
      continue;
    Fanout &f = out[s.vertex];
    f.kind = kind;
    Fold(draws, f);
  }
  return out;
}

// The ranks whose rows on VERTEX draw on TARGET, ascending.
std::vector<int> ProducersOf(const Run &run, VertexId vertex, int target) {
  std::vector<int> ranks;
  if (const VertexSeries *s = run.Find(vertex))
    for (const DepEdge &e : s->edges)
      if (e.peer_rank == target && Draws(e) && (ranks.empty() || ranks.back() != e.rank))
        ranks.push_back(e.rank);
  return ranks;
}

// The call in the source a vertex stands for, whatever the path to it: a
// helper's send reached from two loops is one call, two vertices.
using SourceCall = std::tuple<std::string, uint32_t, uint32_t>;
SourceCall SourceCallOf(const Psg &psg, VertexId v) {
  const SourceLoc &loc = psg.vertex(v).loc;
  return {loc.file, loc.line, loc.column};
}

// Operations per target of every call in the source, summed over the
// vertices (calling contexts) that stand for it.
std::map<SourceCall, Fanout> FanoutBySourceCall(const Psg &psg,
                                                const std::map<VertexId, Fanout> &fans) {
  std::map<SourceCall, std::vector<Draw>> draws;
  for (const auto &[vertex, f] : fans) {
    std::vector<Draw> &d = draws[SourceCallOf(psg, vertex)];
    for (size_t i = 0; i < f.targets.size(); ++i)
      d.push_back({f.targets[i], {f.to[kOperations][i], f.to[kBytes][i]}});
  }
  std::map<SourceCall, Fanout> out;
  for (auto &[call, d] : draws)
    Fold(d, out[call]);
  return out;
}

VertexId EnclosingLoop(const Psg &psg, VertexId v) {
  for (VertexId p = psg.vertex(v).parent; p != kNoVertex; p = psg.vertex(p).parent)
    if (psg.vertex(p).kind == VertexKind::Loop)
      return p;
  return kNoVertex;
}

} // namespace

double HotShareThreshold(int ranks, const HotSpotOptions &opts) {
  if (ranks < 2)
    return 2; // never: one rank has no one to skew towards
  double fair = 1.0 / ranks;
  return std::min(opts.share_factor * fair, (1 + fair) / 2);
}

std::vector<HotSpot> FindHotSpots(const Psg &psg, const std::vector<Run> &runs, size_t big,
                                  const HotSpotOptions &opts) {
  std::vector<HotSpot> out;
  if (big >= runs.size())
    return out;
  const Run &run = runs[big];
  const double threshold = HotShareThreshold(run.world_size, opts);
  std::vector<std::map<VertexId, Fanout>> fans;
  for (const Run &r : runs)
    fans.push_back(FanoutByVertex(psg, r));
  const std::map<SourceCall, Fanout> by_call = FanoutBySourceCall(psg, fans[big]);
  for (const auto &[vertex, f] : fans[big]) {
    if (f.total[kOperations] < opts.min_operations)
      continue;
    // A call that addresses one or two ranks by design (workers reporting to
    // a master, a pipeline's next stage) funnels, it has no hot spot: a hot
    // spot is one target of many drawing more than its share.
    if (f.targets.size() < std::max<size_t>(2, size_t(run.world_size) / 2))
      continue;
    const Fanout &call = by_call.at(SourceCallOf(psg, vertex));
    std::vector<int> hot_by_operations;
    for (HotMeasure measure : {HotMeasure::Operations, HotMeasure::Bytes}) {
      const int m = int(measure);
      if (f.total[m] == 0 || call.total[m] == 0)
        continue;
      std::vector<std::pair<int, double>> shares;
      for (size_t i = 0; i < f.targets.size(); ++i)
        shares.push_back({f.targets[i], double(f.to[m][i]) / double(f.total[m])});
      std::sort(shares.begin(), shares.end(),
                [](const auto &a, const auto &b) { return a.second > b.second; });
      for (const auto &[target, share] : shares) {
        if (share < threshold)
          break;
        // A target hot by operations is reported once, by them.
        if (std::count(hot_by_operations.begin(), hot_by_operations.end(), target))
          continue;
        // The target must also draw more than its share of the call's
        // operations (bytes) over every path to it. Where it does not, the
        // call's operations were only split between paths by timing
        // (replies to a late rank sent from the termination phase's polling
        // rather than the main loop's): the target receives no more than
        // the others.
        const long at_call = call.Find(target);
        if (at_call < 0 || double(call.to[m][size_t(at_call)]) / double(call.total[m]) <
                               opts.call_share_factor / run.world_size)
          continue;
        if (measure == HotMeasure::Operations)
          hot_by_operations.push_back(target);
        HotSpot h;
        h.vertex = vertex;
        h.loop = EnclosingLoop(psg, vertex);
        h.kind = f.kind;
        h.measure = measure;
        h.target_rank = target;
        h.share = share;
        h.fair_share = 1.0 / run.world_size;
        const size_t at = size_t(f.Find(target));
        h.to_target = f.to[kOperations][at];
        h.total = f.total[kOperations];
        h.bytes_to_target = f.to[kBytes][at];
        h.bytes = f.total[kBytes];
        h.producers = ProducersOf(run, vertex, target);
        h.top_targets.assign(shares.begin(), shares.begin() + std::min<size_t>(shares.size(), 4));
        out.push_back(std::move(h));
      }
    }
  }
  // The same call's hottest target at every scale (another rank id at
  // another scale: a skew toward "the last rank" moves with the rank count).
  // A hot spot that holds its share while the fair share falls grows with
  // the rank count.
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    for (HotSpot &h : out) {
      const int m = int(h.measure);
      auto it = fans[ri].find(h.vertex);
      if (it == fans[ri].end() || it->second.total[m] == 0)
        continue;
      HotSpot::Scale sc{runs[ri].world_size, -1, 0};
      const Fanout &f = it->second;
      for (size_t i = 0; i < f.targets.size(); ++i)
        if (double(f.to[m][i]) / f.total[m] > sc.share)
          sc.target = f.targets[i], sc.share = double(f.to[m][i]) / f.total[m];
      h.by_scale.push_back(sc);
    }
  }
  std::sort(out.begin(), out.end(), [](const HotSpot &a, const HotSpot &b) {
    if (a.to_target != b.to_target)
      return a.to_target > b.to_target; // most operations drawn first
    return a.vertex < b.vertex;
  });
  return out;
}

} // namespace scalana
