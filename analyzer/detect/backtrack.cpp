// Backtracking (paper Algorithm 1): where the walks start in the largest run
// and the walk itself, back along control, data and communication
// dependence.
#include "detect/detect_stages.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace scalana {

using namespace detect_internal;

namespace {

std::pair<std::vector<DepEdge>::const_iterator, std::vector<DepEdge>::const_iterator>
EdgesAt(const VertexSeries &s, int rank) {
  return std::equal_range(s.edges.begin(), s.edges.end(), DepEdge{rank},
                          [](const DepEdge &a, const DepEdge &b) { return a.rank < b.rank; });
}

// For a collective vertex on a rank: the member that waited least (arrived
// last) and its wait; falls back to the least MPI time when there are no rows.
int LatestArrival(const Run &run, const VertexSeries &s) {
  std::unordered_map<int, double> wait;
  for (const DepEdge &e : s.edges)
    if (e.kind == DepKind::Coll)
      wait[e.rank] += e.wait;
  int best = -1;
  double best_wait = 0;
  for (auto [rank, w] : wait)
    if (best < 0 || w < best_wait || (w == best_wait && rank < best))
      best = rank, best_wait = w;
  if (best >= 0)
    return best;
  if (s.mpi.empty())
    return run.ranks.empty() ? -1 : run.ranks[0];
  int slot = int(std::min_element(s.mpi.begin(), s.mpi.end()) - s.mpi.begin());
  return run.ranks[slot];
}

} // namespace

BacktrackStarts FindStarts(const Psg &psg, const Run &big, size_t largest, const DetectResult &res,
                           const DetectOptions &opts) {
  BacktrackStarts starts;
  for (const NonScalableVertex &ns : res.non_scalable) {
    const VertexSeries *s = big.Find(ns.vertex);
    if (!s || big.nslots() == 0)
      continue;
    int rank;
    if (IsCollective(psg, ns.vertex)) {
      rank = LatestArrival(big, *s);
    } else {
      std::vector<double> t = TimesOverRanks(psg, big, *s);
      rank = big.ranks[std::max_element(t.begin(), t.end()) - t.begin()];
    }
    starts.at.push_back({ns.vertex, rank});
  }
  starts.non_scalable = starts.at.size();
  size_t abnormal_starts = 0;
  for (const AbnormalVertex &ab : res.abnormal) {
    if (ab.run != largest)
      continue;
    if (++abnormal_starts > opts.max_abnormal_starts)
      break;
    starts.at.push_back({ab.vertex, ab.worst_rank});
  }
  return starts;
}

std::vector<PathStep> Backtrack(const Psg &psg, const Run &run, VertexId start, int rank,
                                const DetectOptions &opts,
                                const std::function<bool(VertexId, int)> &is_problematic) {
  enum class How { Start, Arrive, Up, Crossed };
  std::vector<PathStep> path;
  std::unordered_set<uint64_t> visited; // cycle guard: recursion, p2p rings
  VertexId v = start;
  How how = How::Start;
  std::string via = "start";
  double via_wait = 0;
  const VertexId root = psg.root();

  for (size_t step = 0; step < opts.max_path_steps; ++step) {
    const int slot = run.SlotOf(rank);
    if (v == kNoVertex || slot < 0)
      break;
    // A structural vertex is met twice: once when the walk reaches it from
    // after (it descends), once from its first child (it steps before it).
    if (!visited.insert(StepKey(v, rank, how == How::Up)).second)
      break;
    const Vertex &x = psg.vertex(v);
    const VertexSeries *s = run.Find(v);
    if (how != How::Up) {
      bool has_data = s && InclusiveTime(*s, slot) > 0;
      if (how == How::Start || how == How::Crossed || has_data || x.kind == VertexKind::Mpi) {
        PathStep ps;
        ps.vertex = v;
        ps.rank = rank;
        ps.time = s ? ExclusiveTime(psg, *s, slot) : 0;
        ps.wait = via_wait;
        ps.via = via;
        ps.problematic = is_problematic && is_problematic(v, rank);
        path.push_back(std::move(ps));
      }
    }
    if (v == root && how != How::Start)
      break;
    via_wait = 0;

    bool moved = false;
    if (how != How::Up && how != How::Crossed && x.kind == VertexKind::Mpi) {
      const bool collective = x.mpi_class == MpiClass::Collective;
      if (collective && how != How::Start)
        break; // a collective synchronises everyone
      if (s) {
        auto [b, e] = EdgesAt(*s, rank);
        if (collective) {
          double own = 0;
          uint32_t comm = 0;
          for (auto it = b; it != e; ++it)
            if (it->kind == DepKind::Coll)
              own += it->wait, comm = it->comm;
          if (own > opts.min_wait) {
            // Go to the member that waited least: it arrived last.
            int best = -1;
            double best_wait = 0;
            for (const DepEdge &d : s->edges)
              if (d.kind == DepKind::Coll && d.comm == comm && (best < 0 || d.wait < best_wait))
                best = d.rank, best_wait = d.wait;
            if (best >= 0 && best != rank) {
              via = "collective", via_wait = own, rank = best, how = How::Crossed;
              moved = true;
            }
          }
        } else {
          // Keep only edges with waiting; follow the one that waited most.
          // Receives come first: a Wait completing both sends and receives
          // reports one wait on all its rows, and it is the data that came
          // late, not the send, that explains it.
          auto better = [](const DepEdge &a, const DepEdge *b) {
            if (!b)
              return true;
            bool ra = a.kind == DepKind::Recv, rb = b->kind == DepKind::Recv;
            return ra != rb ? ra : a.wait > b->wait;
          };
          const DepEdge *pick = nullptr;
          for (auto it = b; it != e; ++it)
            if (it->wait > opts.min_wait && it->peer_vertex != kNoVertex &&
                run.SlotOf(it->peer_rank) >= 0 && better(*it, pick))
              pick = &*it;
          if (pick) {
            via = pick->kind == DepKind::Rma ? "rma" : "p2p";
            via_wait = pick->wait;
            v = pick->peer_vertex, rank = pick->peer_rank, how = How::Crossed;
            moved = true;
          }
        }
      }
      if (moved)
        continue;
    } else if ((how == How::Start || how == How::Arrive) && !x.children.empty() &&
               !(x.kind == VertexKind::Function && v == root && how != How::Start)) {
      // Control dependence: an unscanned loop/branch/call is entered from its
      // end, i.e. its last child that ran on this rank (skip it if none did).
      VertexId last = kNoVertex;
      for (auto it = x.children.rbegin(); it != x.children.rend(); ++it) {
        const VertexSeries *cs = run.Find(*it);
        if (cs && InclusiveTime(*cs, slot) > 0) {
          last = *it;
          break;
        }
      }
      if (last != kNoVertex) {
        v = last, how = How::Arrive, via = "control";
        continue;
      }
    }
    // Data dependence: the previous vertex in execution order.
    if (x.parent == kNoVertex)
      break;
    const Vertex &p = psg.vertex(x.parent);
    auto pos = std::find(p.children.begin(), p.children.end(), v);
    if (pos != p.children.begin() && pos != p.children.end() &&
        (p.kind != VertexKind::Branch || psg.vertex(*(pos - 1)).arm == x.arm)) {
      v = *(pos - 1), how = How::Arrive, via = "prev";
    } else {
      v = x.parent, how = How::Up, via = "parent";
    }
  }
  return path;
}

} // namespace scalana
