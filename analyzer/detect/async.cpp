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

// Operations and bytes per target rank of the rows on one vertex.
struct Fanout {
  std::map<int, uint64_t> to[kMeasures];
  uint64_t total[kMeasures] = {0, 0};
  std::map<int, std::vector<int>> from; // target -> producing ranks
  DepKind kind = DepKind::Send;
};

std::map<VertexId, Fanout> FanoutByVertex(const Psg &psg, const Run &run) {
  std::map<VertexId, Fanout> out;
  for (const VertexSeries &s : run.series) {
    // A Wait/Test that completes sends carries rows for them too, but the
    // producers' loop is where they were issued.
    if (psg.vertex(s.vertex).mpi_class == MpiClass::Completion)
      continue;
    for (const DepEdge &e : s.edges) {
      if (!IssuesOperations(e.kind) || e.peer_rank < 0 || e.count == 0)
        continue;
      // Synchronisation rows (flush, unlock: no data) are not updates.
      if (e.kind == DepKind::Rma && e.bytes == 0)
        continue;
      Fanout &f = out[s.vertex];
      f.kind = e.kind;
      uint64_t amount[kMeasures];
      amount[kOperations] = e.count;
      amount[kBytes] = e.bytes;
      for (int m = 0; m < kMeasures; ++m) {
        f.to[m][e.peer_rank] += amount[m];
        f.total[m] += amount[m];
      }
      std::vector<int> &p = f.from[e.peer_rank];
      if (p.empty() || p.back() != e.rank)
        p.push_back(e.rank);
    }
  }
  return out;
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
  std::map<SourceCall, Fanout> out;
  for (const auto &[vertex, f] : fans) {
    Fanout &sum = out[SourceCallOf(psg, vertex)];
    for (int m = 0; m < kMeasures; ++m) {
      for (const auto &[target, n] : f.to[m])
        sum.to[m][target] += n;
      sum.total[m] += f.total[m];
    }
  }
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
    if (f.to[kOperations].size() < std::max<size_t>(2, size_t(run.world_size) / 2))
      continue;
    const Fanout &call = by_call.at(SourceCallOf(psg, vertex));
    std::vector<int> hot_by_operations;
    for (HotMeasure measure : {HotMeasure::Operations, HotMeasure::Bytes}) {
      const int m = int(measure);
      if (f.total[m] == 0 || call.total[m] == 0)
        continue;
      std::vector<std::pair<int, double>> shares;
      for (const auto &[target, n] : f.to[m])
        shares.push_back({target, double(n) / double(f.total[m])});
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
        auto it = call.to[m].find(target);
        if (it == call.to[m].end() ||
            double(it->second) / double(call.total[m]) < opts.call_share_factor / run.world_size)
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
        h.to_target = f.to[kOperations].at(target);
        h.total = f.total[kOperations];
        h.bytes_to_target = f.to[kBytes].at(target);
        h.bytes = f.total[kBytes];
        h.producers = f.from.at(target);
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
      for (const auto &[target, n] : it->second.to[m])
        if (double(n) / it->second.total[m] > sc.share)
          sc.target = target, sc.share = double(n) / it->second.total[m];
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
