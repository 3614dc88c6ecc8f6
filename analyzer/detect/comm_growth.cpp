// Communication that grew with the rank count and that no computation
// explains: what grew (time, calls, messages, bytes, peers), in one sentence.
#include "detect/detect_stages.h"
#include "ppg/rank_time.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_set>

namespace scalana {

std::vector<CommGrowth> CommunicationGrowth(const Psg &psg, const Run &small, const Run &big,
                                            VertexId v) {
  const char *names[] = {"time", "calls", "messages", "bytes", "peers"};
  std::vector<CommGrowth> out;
  for (const char *n : names)
    out.push_back({n, 0, 0});
  for (int which = 0; which < 2; ++which) {
    const Run &run = which ? big : small;
    const VertexSeries *s = run.Find(v);
    const int n = run.nslots();
    if (!s || n == 0)
      continue;
    double sums[5] = {0, 0, 0, 0, 0};
    for (int slot = 0; slot < n; ++slot) {
      sums[0] += ExclusiveTime(psg, *s, slot);
      if (!s->calls.empty())
        sums[1] += s->calls[slot];
    }
    // Edges are sorted by rank: count distinct peers per rank as they pass.
    std::unordered_set<int32_t> peers;
    int32_t at = INT32_MIN;
    for (const DepEdge &e : s->edges) {
      if (e.rank != at)
        sums[4] += double(peers.size()), peers.clear(), at = e.rank;
      if (e.kind != DepKind::Coll) {
        sums[2] += double(e.count);
        peers.insert(e.peer_rank);
      }
      sums[3] += double(e.bytes);
    }
    sums[4] += double(peers.size());
    for (size_t k = 0; k < out.size(); ++k)
      (which ? out[k].big : out[k].small) = sums[k] / n;
  }
  return out;
}

namespace {

// G's big-to-small ratio of WHAT (infinite from nothing). 0 when there is
// none at either scale: nothing grew, whatever the scaling model expects
// (strong scaling names a ratio of 1, which none-to-none is not: PENNANT's
// Allreduce "messages per rank grow x1.0" with no messages at all).
double GrowthRatio(const std::vector<CommGrowth> &g, const char *what) {
  for (const CommGrowth &x : g)
    if (x.what == what)
      return x.small > 0 ? x.big / x.small : (x.big > 0 ? INFINITY : 0.0);
  return 0.0;
}

// Past x100 the small run's figure is near nothing and the ratio says more
// about it than about the growth (Kripke: "x2690"); the absolute figures are
// on the report's grows: line.
std::string Times(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf,
                std::isinf(r) ? "from none" : (r >= 100 ? "more than x100" : "x%.1f"), r);
  return std::string(buf);
}

// An I/O call's time is the device's: it grows with the ranks that share
// the file system, not with waiting for one another.
std::string ExplainIoGrowth(const std::vector<CommGrowth> &g) {
  return "I/O time per rank grows " + Times(GrowthRatio(g, "time")) +
         " while calls per rank grow " + Times(GrowthRatio(g, "calls")) +
         ": the ranks' I/O shares the file system and its devices, whose time grows with "
         "the data of all ranks";
}

// Per rank, weak scaling keeps the work (and usually the traffic) constant;
// strong scaling shrinks it. Growth beyond 1.5x is what we name.
double GrowthLimit(ScalingMode scaling) { return scaling == ScalingMode::Strong ? 1.0 : 1.5; }

} // namespace

bool TrafficExplains(const std::vector<CommGrowth> &g, ScalingMode scaling, double cost) {
  // Grown beyond the model; by enough to matter at a slow network's rates
  // (15 more messages of 8 bytes, master/worker's Waitany at 8 ranks,
  // explain no second of waiting); and with the time growing no more than
  // twice as fast as the traffic, as it does when the bytes are what takes
  // the time (an all-to-all's time x208 for x4 the bytes, on 8 ranks
  // sharing 2 cores, is each byte waiting longer, not more bytes). From
  // none (one rank sends nothing) says nothing.
  constexpr double kSlowLatency = 50e-6, kSlowBandwidth = 100e6; // s a message, bytes a second
  constexpr double kMatters = 0.1;                               // of the cost
  constexpr double kAsFast = 2;
  const double limit = GrowthLimit(scaling);
  double traffic = 0;
  for (const char *what : {"bytes", "messages", "peers"})
    if (const double r = GrowthRatio(g, what); std::isfinite(r) && r >= limit)
      traffic = std::max(traffic, r);
  double more = 0;
  for (const CommGrowth &x : g)
    if (x.what == "bytes")
      more += std::max(0.0, x.big - x.small) / kSlowBandwidth;
    else if (x.what == "messages")
      more += std::max(0.0, x.big - x.small) * kSlowLatency;
  const double time = GrowthRatio(g, "time");
  return traffic > 0 && more >= kMatters * cost && time <= kAsFast * traffic;
}

std::string ExplainGrowth(const std::vector<CommGrowth> &g, ScalingMode scaling) {
  auto ratio = [&](const char *what) { return GrowthRatio(g, what); };
  auto times = Times;
  const double limit = GrowthLimit(scaling);
  std::vector<std::string> grew;
  if (ratio("bytes") >= limit)
    grew.push_back("bytes per rank grow " + times(ratio("bytes")));
  if (ratio("messages") >= limit)
    grew.push_back("messages per rank grow " + times(ratio("messages")));
  if (ratio("peers") >= limit)
    grew.push_back("peers per rank grow " + times(ratio("peers")));
  if (ratio("calls") >= limit && ratio("messages") < limit)
    grew.push_back("calls per rank grow " + times(ratio("calls")) +
                   " with no more messages (polling: the calls wait, not work)");
  std::string time = "time per rank grows " + times(ratio("time"));
  if (grew.empty())
    return time + " while messages, bytes and calls per rank do not: the ranks wait longer "
                  "for each other (latency, or an imbalance too small to sample)";
  std::string out = time + ": ";
  for (size_t i = 0; i < grew.size(); ++i)
    out += (i ? (i + 1 == grew.size() ? " and " : ", ") : "") + grew[i];
  return out;
}

void AddCommunicationCauses(const Psg &psg, const Run &small, const Run &big,
                            const detect_internal::CommLayer &layer, TracedCauses &traced,
                            DetectResult &res) {
  // "None found" is no answer: the communication vertex itself is the root
  // cause, with what grew.
  for (auto [v, rank] : traced.unexplained) {
    if (traced.index.count(v))
      continue;
    traced.index.emplace(v, res.root_causes.size());
    RootCause rc;
    rc.vertex = v;
    rc.culprit_rank = rank;
    rc.ranks = {rank};
    rc.communication = true;
    for (const std::vector<PathStep> &path : res.paths)
      if (!path.empty() && path[0].vertex == v && path[0].rank == rank) {
        rc.path = path;
        break;
      }
    rc.small_ranks = small.world_size;
    rc.big_ranks = big.world_size;
    rc.growth = CommunicationGrowth(psg, small, big, v);
    rc.explanation = IsIoVertex(psg, big, v) ? ExplainIoGrowth(rc.growth)
                                             : ExplainGrowth(rc.growth, res.scaling_used);
    // A layer's polling loop makes no calls the wrappers count: its samples
    // are all there is, and they are time spent waiting for other ranks.
    rc.comm_layer = layer.PatternOf(v);
    if (!rc.comm_layer.empty())
      rc.explanation = "communication layer (--comm-layer " + rc.comm_layer +
                       "): its time per rank grows, waiting for other ranks in the layer's own "
                       "code, and no computation on the ranks it waited for explains it";
    res.root_causes.push_back(std::move(rc));
    traced.waits.emplace_back();
  }
}

} // namespace scalana
