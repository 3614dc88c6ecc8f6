// The state of a RunBuilder (ppg_build.h) while a run's parts arrive, shared
// by the two halves of the build: ppg_build.cpp takes the parts in,
// ppg_build_finish.cpp matches the messages and compacts the arrays.
#pragma once

#include "frames.h"
#include "ppg/ppg_build.h"
#include "ppg/ppg_threads.h"
#include "ppg/shard_link.h"
#include "scalana/context_hash.h"
#include "scalana/sampling_checks.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <unordered_map>

namespace scalana {

namespace ppg_build {

// Preference among several vertices carrying rows for the same message: the
// call that starts the transfer (Send/Isend/Recv/Irecv) says when the data was
// ready or the receive was posted; the Wait that completed it says less.
inline int InitiatorRank(const Psg &psg, VertexId v) {
  MpiClass c = psg.vertex(v).mpi_class;
  if (c == MpiClass::P2PBlocking || c == MpiClass::P2PNonBlocking)
    return 0;
  if (c == MpiClass::Completion)
    return 2;
  return 1;
}

struct Resolved {
  VertexId vertex = kNoVertex;
  // outside: no frame of the program; unplaced: frames of the program that
  // the debug information names nothing of (FrameResolver, a stripped binary).
  bool approximated = false, outside = false, unplaced = false;
};

// The message numbers of one edge during the build, in 8 bytes: one range
// that fits 32 bits inline (the usual row: messages 1 to n), else FIRST =
// kOverflow and LAST an index into the overflow store; {0, 0}: none.
struct SeqRef {
  uint32_t first = 0, last = 0;
};
inline constexpr uint32_t kOverflow = UINT32_MAX;

// The ranks' fields other than rows that the run's warnings read.
inline bool Notable(const RankData &r) {
  return r.snapshot || r.end_signal || !r.unwritten.empty() || !r.errors.empty() ||
         r.sampling_blocked > 0 || !r.thread_info.empty();
}

// A type, not a function: the sorts and searches over 10^8 edges inline it.
struct EdgeOrder {
  bool operator()(const DepEdge &x, const DepEdge &y) const {
    return x.rank != y.rank ? x.rank < y.rank : x.peer_rank < y.peer_rank;
  }
};
inline constexpr EdgeOrder EdgeBefore{};

// Sorts EDGES[start..] (and REFS with them) by (rank, peer), keeping the
// rows' order among equals.
inline void SortEdges(std::vector<DepEdge> &edges, std::vector<SeqRef> &refs, size_t start) {
  if (std::is_sorted(edges.begin() + start, edges.end(), EdgeBefore))
    return;
  std::vector<uint32_t> order(edges.size() - start);
  std::iota(order.begin(), order.end(), uint32_t(start));
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return EdgeBefore(edges[a], edges[b]); });
  std::vector<DepEdge> e(order.size());
  std::vector<SeqRef> r(order.size());
  for (size_t k = 0; k < order.size(); ++k)
    e[k] = edges[order[k]], r[k] = refs[order[k]];
  std::copy(e.begin(), e.end(), edges.begin() + start);
  std::copy(r.begin(), r.end(), refs.begin() + start);
}

} // namespace ppg_build
using namespace ppg_build;

struct RunBuilder::State {
  Psg &psg;
  ProgressFn progress;
  Run run;
  bool started = false;
  int declared = 0;
  int max_rank = -1;
  size_t cap = 0; // world ranks the arrays below hold
  std::vector<uint8_t> seen;
  // Each rank's time split as it arrives, placed into slots at the end: 36
  // bytes a rank would be 150 MB for a world of 2^22 declared ranks with few
  // present, while only the present ranks have one.
  struct ArrivedTime {
    int32_t rank;
    RankTime time;
  };
  std::vector<ArrivedTime> arrived_time;
  std::unordered_map<Context, Resolved, ContextHash> contexts;
  std::unordered_multimap<uint64_t, uint32_t> comm_ids; // CommMembers::Hash -> Run::comms
  uint64_t rate_samples = 0;
  double rate_seconds = 0;
  uint64_t obtained_samples = 0; // all samples, for Run::obtained_rate
  size_t ncounters = 0;
  std::vector<std::vector<SeqRef>> seq_refs; // per series, parallel to its edges
  std::vector<std::vector<SeqRange>> seq_overflow;
  std::vector<std::pair<size_t, size_t>> touched; // (series, first new edge) of one rank
  Profile summary; // meta, unwritten markers, notable ranks without rows
  size_t parts = 0, ranks_added = 0;
  int min_rank = INT32_MAX;
  // The run's distinct contexts in the order first met: a sharded build
  // (ppg_build_merge.cpp) resolves another process's contexts in this order
  // after its own, as one process given all the parts would have.
  std::vector<Context> context_order;
  // Seconds summed over rows: each rank's in a double, in its rows' order,
  // then the ranks' in fixed point (2^-64 s), where addition is exact and so
  // the total does not depend on how the ranks were grouped into parts or
  // parts shared among processes (ppg_build_merge.cpp).
  struct Sums {
    __int128 outside = 0, unresolved = 0, approximated = 0, omp_wait = 0, rate = 0, unplaced = 0;
    __int128 obtained = 0; // the CPU seconds samples could come in (RankRateTerms)
  };
  Sums sums;
  static __int128 Fixed(double seconds) { return __int128(std::ldexp((long double)seconds, 64)); }
  static double Seconds(__int128 fixed) { return double(std::ldexp((long double)fixed, -64)); }

  State(Psg &p, const std::string &label, const ProgressFn &prog) : psg(p), progress(prog) {
    run.label = label;
  }

  VertexSeries &SeriesOf(VertexId v) {
    if (size_t(v) >= run.slot_of_vertex.size())
      run.slot_of_vertex.resize(size_t(v) + 1, -1);
    if (run.slot_of_vertex[v] < 0) {
      run.slot_of_vertex[v] = int32_t(run.series.size());
      run.series.emplace_back();
      run.series.back().vertex = v;
      seq_refs.emplace_back();
    }
    return run.series[run.slot_of_vertex[v]];
  }

  // Arrays are indexed by world rank while parts arrive (compacted to slots
  // at the end): grown only for profiles that do not declare their size.
  void Reserve(size_t n) {
    if (n <= cap)
      return;
    cap = n;
    seen.resize(cap, 0);
    run.rank_cpu.resize(cap, 0.f);
    for (VertexSeries &s : run.series) {
      if (!s.cpu.empty())
        s.cpu.resize(cap, 0.f);
      if (!s.mpi.empty())
        s.mpi.resize(cap, 0.f), s.calls.resize(cap, 0);
      if (!s.counters.empty())
        s.counters.resize(cap * ncounters, 0.f);
    }
    if (!run.omp_threads.empty())
      run.omp_threads.resize(cap, 0);
  }

  // CONTEXT's vertex, resolved once per distinct context of the run.
  Resolved ResolveContext(const Context &context) {
    auto [it, fresh] = contexts.try_emplace(context);
    if (fresh) {
      context_order.push_back(context);
      Resolved &r = it->second;
      r.outside = context.empty();
      r.unplaced = IsUnplacedContext(context);
      size_t cut = 0;
      // A context that does not fit whole is placed at its largest part that
      // does, never dropped while any part fits; counted and reported.
      r.vertex = r.outside || r.unplaced ? kNoVertex : psg.ResolveNearest(context, &cut);
      if (r.vertex == kNoVertex && !r.outside && !r.unplaced)
        ++run.unresolved_contexts;
      if (cut) {
        r.approximated = true;
        ++run.approximated_contexts;
      }
    }
    return it->second;
  }

  uint32_t CommId(const CommMembers &members, int occurrence) {
    uint64_t h = members.Hash();
    auto [b, e] = comm_ids.equal_range(h);
    int same = 0;
    for (auto it = b; it != e; ++it)
      if (run.comms[it->second] == members && same++ == occurrence)
        return it->second;
    uint32_t id = uint32_t(run.comms.size());
    run.comms.push_back(members);
    comm_ids.emplace(h, id);
    return id;
  }

  void AddPart(const Profile &part);
  Run Finish();
  // Finish's steps, in order.
  void CompactToSlots();
  void AddInclusiveTime();
  void MatchPointToPoint(); // ppg_build_match.cpp
  void AddRunWarnings();
  void SendTo(ShardLink &link, int to);
  void ReceiveFrom(ShardLink &link, int from);
};

} // namespace scalana
