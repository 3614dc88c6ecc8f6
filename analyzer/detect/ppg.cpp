#include "detect/ppg.h"
#include "detect/ppg_threads.h"
#include "scalana/sampling_checks.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace scalana {

double ExclusiveTime(const Psg &psg, const VertexSeries &s, int slot) {
  double cpu = s.cpu.empty() ? 0.0 : s.cpu[slot];
  double mpi = s.mpi.empty() ? 0.0 : s.mpi[slot];
  if (psg.vertex(s.vertex).kind == VertexKind::Mpi)
    return std::max(cpu, mpi);
  return cpu + mpi;
}

double InclusiveTime(const VertexSeries &s, int slot) { return s.incl.empty() ? 0 : s.incl[slot]; }

namespace {

// Preference among several vertices carrying rows for the same message: the
// call that starts the transfer (Send/Isend/Recv/Irecv) says when the data was
// ready or the receive was posted; the Wait that completed it says less.
int InitiatorRank(const Psg &psg, VertexId v) {
  MpiClass c = psg.vertex(v).mpi_class;
  if (c == MpiClass::P2PBlocking || c == MpiClass::P2PNonBlocking)
    return 0;
  if (c == MpiClass::Completion)
    return 2;
  return 1;
}

struct P2PKey {
  int32_t rank, peer, tag;
  uint32_t comm;
  uint8_t kind;
  int pref;
  VertexId vertex;
  const DepRow *row;
  auto tie() const { return std::tie(rank, peer, tag, comm, kind, pref, vertex); }
  bool operator<(const P2PKey &o) const { return tie() < o.tie(); }
};

// Messages two rows share: both number the channel's messages the same way
// (docs/formats.md, `seqs`), so overlapping ranges are the same messages.
uint64_t SharedMessages(const std::vector<SeqRange> &a, const std::vector<SeqRange> &b) {
  uint64_t n = 0;
  for (const SeqRange &x : a)
    for (const SeqRange &y : b) {
      uint64_t lo = std::max(x.first, y.first), hi = std::min(x.last, y.last);
      if (lo <= hi)
        n += hi - lo + 1;
    }
  return n;
}

// The row on the peer that ROW's messages came from (or went to). Rows on one
// channel are told apart by their message numbers: when tags are reused
// across phases, only the numbers say which send a receive matched. Without
// numbers (older profiles) the initiating call is preferred.
const P2PKey *MatchP2P(const std::vector<P2PKey> &p2p, const DepRow &row, int rank) {
  uint8_t want = uint8_t(row.kind == DepKind::Send ? DepKind::Recv : DepKind::Send);
  P2PKey lo{row.peer, rank, row.tag, row.comm, want, INT32_MIN, INT32_MIN, nullptr};
  const P2PKey *first = nullptr, *best = nullptr;
  uint64_t best_shared = 0;
  for (auto it = std::lower_bound(p2p.begin(), p2p.end(), lo);
       it != p2p.end() && it->rank == row.peer && it->peer == rank && it->tag == row.tag &&
       it->comm == row.comm && it->kind == want;
       ++it) {
    if (!first)
      first = &*it;
    uint64_t shared = row.seqs.empty() ? 0 : SharedMessages(row.seqs, it->row->seqs);
    if (shared > best_shared) {
      best_shared = shared;
      best = &*it;
    }
  }
  return best ? best : first;
}

} // namespace

Run BuildRun(Psg &psg, const Profile &profile, const std::string &label,
             const ProgressFn &progress) {
  Run run;
  run.label = label;
  run.meta = profile.meta;
  run.comms = profile.comms;
  // Arrays below are sized by world_size and indexed by rank ids. The
  // reader checks both for files; profiles made in memory must hold too.
  const int declared = profile.meta.world_size;
  if (declared < 0 || declared > kMaxWorldSize)
    throw Error(label + ": world_size " + std::to_string(declared) + " is outside 0 to " +
                std::to_string(kMaxWorldSize));
  int max_rank = -1;
  for (const RankData &rd : profile.ranks) {
    if (rd.rank < 0 || rd.rank >= (declared > 0 ? declared : kMaxWorldSize))
      throw Error(label + ": rank " + std::to_string(rd.rank) + " is outside the run (" +
                  std::to_string(declared) + " ranks)");
    max_rank = std::max(max_rank, rd.rank);
  }
  run.world_size = declared > 0 ? declared : max_rank + 1;
  run.slot_of_rank.assign(run.world_size, -1);
  std::vector<size_t> rank_index; // slot -> index into profile.ranks
  for (size_t i = 0; i < profile.ranks.size(); ++i) {
    int r = profile.ranks[i].rank;
    if (run.slot_of_rank[r] >= 0) {
      run.warnings.push_back(label + ": rank " + std::to_string(r) +
                             " appears twice in the profile; keeping the first");
      continue;
    }
    run.slot_of_rank[r] = 0;
  }
  for (int r = 0; r < run.world_size; ++r) {
    if (run.slot_of_rank[r] < 0) {
      run.missing_ranks.push_back(r);
      continue;
    }
    run.slot_of_rank[r] = int32_t(run.ranks.size());
    run.ranks.push_back(r);
  }
  rank_index.assign(run.ranks.size(), SIZE_MAX);
  for (size_t i = 0; i < profile.ranks.size(); ++i) {
    int slot = run.slot_of_rank[profile.ranks[i].rank];
    if (rank_index[slot] == SIZE_MAX)
      rank_index[slot] = i;
  }
  const int nslots = run.nslots();

  // 1. Contexts -> contracted vertices. Each distinct context is resolved once.
  run.contexts = profile.contexts.size();
  std::vector<VertexId> ctx_vertex(profile.contexts.size(), kNoVertex);
  std::vector<uint8_t> approximated(profile.contexts.size(), 0);
  for (size_t i = 0; i < profile.contexts.size(); ++i) {
    bool outside = profile.contexts[i].empty();
    size_t cut = 0;
    // A context that does not fit whole is placed at its largest part that
    // does, never dropped while any part fits; counted and reported.
    ctx_vertex[i] = outside ? kNoVertex : psg.ResolveNearest(profile.contexts[i], &cut);
    if (ctx_vertex[i] == kNoVertex && !outside)
      ++run.unresolved_contexts;
    if (cut) {
      approximated[i] = 1;
      ++run.approximated_contexts;
    }
    if (progress && (i + 1) % 4096 == 0)
      progress(label + ": resolved " + std::to_string(i + 1) + "/" +
               std::to_string(profile.contexts.size()) + " contexts");
  }
  // Empty: no frame of the program was on the stack (FrameResolver); its
  // time is outside the program, not unresolved.
  auto is_outside = [&](uint32_t ctx) {
    return ctx < profile.contexts.size() && profile.contexts[ctx].empty();
  };
  auto vertex_of = [&](uint32_t ctx) -> VertexId {
    return ctx < ctx_vertex.size() ? ctx_vertex[ctx] : kNoVertex;
  };
  auto count_approximated = [&](uint32_t ctx, double seconds) {
    if (ctx < approximated.size() && approximated[ctx]) {
      ++run.approximated_rows;
      run.approximated_seconds += seconds;
    }
  };

  uint64_t rate_samples = 0;
  double rate_seconds = 0;
  const size_t ncounters = profile.meta.sampling.counters.size();
  auto slot_for = [&](VertexId v) -> VertexSeries & {
    if (size_t(v) >= run.slot_of_vertex.size())
      run.slot_of_vertex.resize(v + 1, -1);
    if (run.slot_of_vertex[v] < 0) {
      run.slot_of_vertex[v] = int32_t(run.series.size());
      run.series.emplace_back();
      run.series.back().vertex = v;
    }
    return run.series[run.slot_of_vertex[v]];
  };
  run.slot_of_vertex.assign(psg.vertices().size(), -1);

  // 2. Per-vertex arrays over ranks.
  run.rank_cpu.assign(nslots, 0.f);
  for (int slot = 0; slot < nslots; ++slot) {
    if (rank_index[slot] == SIZE_MAX)
      continue;
    const RankData &rd = profile.ranks[rank_index[slot]];
    double sampled = 0;
    for (const VertexRow &row : rd.vertices) {
      VertexId v = vertex_of(row.ctx);
      // Measured CPU time: each sample stands for the time since the one
      // before, so this holds when fewer samples came than were asked.
      double secs = row.cpu_seconds;
      rate_samples += row.samples;
      rate_seconds += secs;
      sampled += secs;
      if (is_outside(row.ctx)) {
        run.outside_seconds += secs;
        continue;
      }
      if (v == kNoVertex) {
        ++run.unresolved_rows;
        run.unresolved_seconds += secs;
        continue;
      }
      count_approximated(row.ctx, secs);
      VertexSeries &s = slot_for(v);
      s.own_data = true;
      if (s.cpu.empty())
        s.cpu.assign(nslots, 0.f);
      s.cpu[slot] += float(secs);
      if (ncounters && !row.counters.empty()) {
        if (s.counters.empty())
          s.counters.assign(size_t(nslots) * ncounters, 0.f);
        for (size_t c = 0; c < ncounters && c < row.counters.size(); ++c)
          s.counters[slot * ncounters + c] += float(row.counters[c]);
      }
    }
    // The rank's CPU clock where the runtime read it, else its samples' sum.
    run.rank_cpu[slot] = float(rd.cpu_time > 0 ? rd.cpu_time : sampled);
    for (const MpiRow &row : rd.mpi) {
      VertexId v = vertex_of(row.ctx);
      if (is_outside(row.ctx)) {
        run.outside_seconds += row.seconds;
        continue;
      }
      if (v == kNoVertex) {
        ++run.unresolved_rows;
        run.unresolved_seconds += row.seconds;
        continue;
      }
      count_approximated(row.ctx, row.seconds);
      VertexSeries &s = slot_for(v);
      s.own_data = true;
      if (s.mpi.empty()) {
        s.mpi.assign(nslots, 0.f);
        s.calls.assign(nslots, 0);
      }
      s.mpi[slot] += float(row.seconds);
      s.calls[slot] += uint32_t(std::min<uint64_t>(row.calls, UINT32_MAX - s.calls[slot]));
    }
    AddThreadTimes(psg, run, rd, slot, vertex_of,
                   [&](VertexId v) -> VertexSeries & { return slot_for(v); });
    if (progress && (slot + 1) % 8192 == 0)
      progress(label + ": loaded " + std::to_string(slot + 1) + "/" + std::to_string(nslots) +
               " ranks");
  }

  run.sample_rate =
      rate_seconds > 0 ? double(rate_samples) / rate_seconds : profile.meta.sampling.hz;

  // 3. Inclusive time: every ancestor of a vertex with data gets a series too.
  size_t own_count = run.series.size();
  for (size_t i = 0; i < own_count; ++i) {
    VertexId p = psg.vertex(run.series[i].vertex).parent;
    while (p != kNoVertex) {
      bool had = size_t(p) < run.slot_of_vertex.size() && run.slot_of_vertex[p] >= 0;
      slot_for(p);
      if (had)
        break; // its ancestors were added when it was
      p = psg.vertex(p).parent;
    }
  }
  for (VertexSeries &s : run.series)
    s.incl.assign(nslots, 0.f);
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
  run.rank_total.assign(nslots, 0.f);
  for (const VertexSeries &s : run.series)
    if (psg.vertex(s.vertex).parent == kNoVertex)
      for (int slot = 0; slot < nslots; ++slot)
        run.rank_total[slot] += s.incl[slot];
  for (float t : run.rank_total)
    run.total_time = std::max(run.total_time, double(t));

  // 4. Dependence edges. p2p rows are matched to the opposite rows on the peer.
  std::vector<P2PKey> p2p;
  for (int slot = 0; slot < nslots; ++slot) {
    if (rank_index[slot] == SIZE_MAX)
      continue;
    for (const DepRow &row : profile.ranks[rank_index[slot]].deps) {
      VertexId v = vertex_of(row.ctx);
      if (v == kNoVertex || (row.kind != DepKind::Send && row.kind != DepKind::Recv))
        continue;
      p2p.push_back({run.ranks[slot], row.peer, row.tag, row.comm, uint8_t(row.kind),
                     InitiatorRank(psg, v), v, &row});
    }
  }
  std::sort(p2p.begin(), p2p.end());
  for (int slot = 0; slot < nslots; ++slot) {
    if (rank_index[slot] == SIZE_MAX)
      continue;
    const int rank = run.ranks[slot];
    for (const DepRow &row : profile.ranks[rank_index[slot]].deps) {
      ++run.dep_rows;
      VertexId v = vertex_of(row.ctx);
      if (v == kNoVertex) {
        if (!is_outside(row.ctx))
          ++run.unresolved_rows;
        continue;
      }
      DepEdge e;
      e.rank = rank;
      e.kind = row.kind;
      e.comm = row.comm;
      e.tag = row.tag;
      e.wait = float(row.wait_seconds);
      e.count = row.count;
      e.bytes = row.bytes;
      e.peer_rank = row.kind == DepKind::Coll ? -1 : row.peer;
      if (row.kind == DepKind::Send || row.kind == DepKind::Recv) {
        if (const P2PKey *m = MatchP2P(p2p, row, rank))
          e.peer_vertex = m->vertex;
        else
          ++run.unmatched_p2p;
      } else if (row.kind == DepKind::Rma) {
        e.peer_vertex = v; // SPMD: the target runs the same synchronisation vertex
      }
      slot_for(v).edges.push_back(e);
    }
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
  // left no data (one line per reason).
  for (const std::string &line : DescribeRankEnds(profile))
    run.warnings.push_back(label + ": " + line);
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
  for (const std::string &w : SamplingWarnings(profile))
    run.warnings.push_back(label + ": " + w);
  return run;
}

} // namespace scalana
