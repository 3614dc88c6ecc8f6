// The end of a run's build (ppg_build.h): each point-to-point row matched to
// the opposite rows on its peer.
#include "ppg/ppg_build_state.h"

#include <atomic>
#include <thread>
#include <tuple>

namespace scalana {

namespace {

// Messages two rows share: both number the channel's messages the same way
// (docs/formats.md, `seqs`), so overlapping ranges are the same messages.
uint64_t SharedMessages(const SeqRange *a, uint32_t na, const SeqRange *b, uint32_t nb) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < na; ++i)
    for (uint32_t j = 0; j < nb; ++j) {
      uint64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].last, b[j].last);
      if (lo <= hi)
        n += hi - lo + 1;
    }
  return n;
}

} // namespace

// Edges are sorted by (rank, peer) so the peer's rows towards a rank are
// found by binary search in each vertex that has such rows: no index over all
// rows.
void RunBuilder::State::MatchPointToPoint() {
  std::vector<size_t> p2p; // series with send/recv edges, by (preference, vertex)
  for (size_t i = 0; i < run.series.size(); ++i) {
    VertexSeries &s = run.series[i];
    if (s.edges.empty())
      continue;
    SortEdges(s.edges, seq_refs[i], 0); // only parts out of rank order move anything
    for (const DepEdge &e : s.edges)
      if (e.kind == DepKind::Send || e.kind == DepKind::Recv) {
        p2p.push_back(i);
        break;
      }
  }
  std::sort(p2p.begin(), p2p.end(), [&](size_t a, size_t b) {
    VertexId va = run.series[a].vertex, vb = run.series[b].vertex;
    int pa = InitiatorRank(psg, va), pb = InitiatorRank(psg, vb);
    return pa != pb ? pa < pb : va < vb;
  });
  // Where each rank's edges start in each such vertex: the peer's rows
  // towards a rank are then found in a few dozen edges, not by a binary
  // search over all of them (cache misses at 10^8 edges).
  // And which kinds of rows each has: a vertex with no receive rows (an
  // Isend) is not looked into for a send's match, which saves a cache miss
  // per edge and vertex.
  std::vector<std::vector<uint32_t>> first_edge(p2p.size());
  std::vector<uint8_t> has_kind(p2p.size(), 0); // bit 0: Send rows, bit 1: Recv rows
  for (size_t k = 0; k < p2p.size(); ++k) {
    const std::vector<DepEdge> &edges = run.series[p2p[k]].edges;
    std::vector<uint32_t> &f = first_edge[k];
    f.assign(size_t(run.world_size) + 1, 0);
    for (const DepEdge &e : edges) {
      ++f[size_t(e.rank) + 1];
      has_kind[k] |= e.kind == DepKind::Send ? 1 : e.kind == DepKind::Recv ? 2 : 0;
    }
    for (size_t r = 1; r < f.size(); ++r)
      f[r] += f[r - 1];
  }
  auto ranges_of = [&](const SeqRef &ref, const SeqRange **p, SeqRange *one) -> uint32_t {
    if (ref.first == kOverflow) {
      *p = seq_overflow[ref.last].data();
      return uint32_t(seq_overflow[ref.last].size());
    }
    if (ref.first == 0)
      return 0;
    *one = {ref.first, ref.last};
    *p = one;
    return 1;
  };
  // One edge's match reads only the peer's rows and writes only its own
  // peer_vertex: the edges are cut into ranges matched by threads (the
  // cores idle while the run is finished; 10^8 edges at a million ranks).
  auto match = [&](size_t i, size_t k0, size_t k1) -> uint64_t {
    VertexSeries &s = run.series[i];
    uint64_t unmatched = 0;
    for (size_t k = k0; k < k1; ++k) {
      DepEdge &e = s.edges[k];
      if (e.kind != DepKind::Send && e.kind != DepKind::Recv)
        continue;
      const DepKind want = e.kind == DepKind::Send ? DepKind::Recv : DepKind::Send;
      const uint8_t want_bit = want == DepKind::Send ? 1 : 2;
      SeqRange mine_one, theirs_one;
      const SeqRange *mine = nullptr, *theirs = nullptr;
      const uint32_t nmine = ranges_of(seq_refs[i][k], &mine, &mine_one);
      uint64_t all_mine = 0; // no vertex can share more: the first that shares all wins
      for (uint32_t r = 0; r < nmine; ++r)
        all_mine += mine[r].last - mine[r].first + 1;
      VertexId first = kNoVertex, best = kNoVertex;
      uint64_t best_shared = 0;
      const bool peer_in = e.peer_rank >= 0 && e.peer_rank < run.world_size;
      for (size_t j = 0; j < p2p.size() && peer_in && !(nmine && best_shared >= all_mine); ++j) {
        if (!(has_kind[j] & want_bit))
          continue;
        const VertexSeries &o = run.series[p2p[j]];
        auto b = o.edges.begin() + first_edge[j][size_t(e.peer_rank)];
        auto end = o.edges.begin() + first_edge[j][size_t(e.peer_rank) + 1];
        DepEdge key;
        key.rank = e.peer_rank, key.peer_rank = e.rank;
        for (auto it = std::lower_bound(b, end, key, EdgeBefore);
             it != end && it->peer_rank == e.rank; ++it) {
          if (it->kind != want || it->tag != e.tag || it->comm != e.comm)
            continue;
          if (first == kNoVertex)
            first = o.vertex;
          if (!nmine)
            break;
          const uint32_t ntheirs =
              ranges_of(seq_refs[p2p[j]][size_t(it - o.edges.begin())], &theirs, &theirs_one);
          uint64_t shared = SharedMessages(mine, nmine, theirs, ntheirs);
          if (shared > best_shared)
            best_shared = shared, best = o.vertex;
        }
        if (first != kNoVertex && !nmine)
          break;
      }
      e.peer_vertex = best != kNoVertex ? best : first;
      if (e.peer_vertex == kNoVertex)
        ++unmatched;
    }
    return unmatched;
  };
  std::vector<std::tuple<size_t, size_t, size_t>> ranges; // (series, first edge, end)
  size_t total = 0;
  for (size_t i : p2p)
    total += run.series[i].edges.size();
  const size_t threads =
      total < (size_t(1) << 20) ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  const size_t piece = std::max<size_t>(total / (threads * 16), 1);
  for (size_t i : p2p)
    for (size_t k = 0; k < run.series[i].edges.size(); k += piece)
      ranges.emplace_back(i, k, std::min(run.series[i].edges.size(), k + piece));
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> unmatched{0};
  auto worker = [&] {
    uint64_t n = 0;
    for (size_t r; (r = next++) < ranges.size();)
      n += match(std::get<0>(ranges[r]), std::get<1>(ranges[r]), std::get<2>(ranges[r]));
    unmatched += n;
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
  run.unmatched_p2p += unmatched;
  decltype(seq_refs)().swap(seq_refs);
  decltype(seq_overflow)().swap(seq_overflow);
}

} // namespace scalana
