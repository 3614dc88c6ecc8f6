#include "detect/detect_stages.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace scalana {

using namespace detect_internal;

namespace detect_internal {
LineKey LineOf(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  return {x.loc.file, x.loc.line, x.kind, psg.FunctionOf(v).key};
}
} // namespace detect_internal

namespace {
bool Summable(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  return x.kind != VertexKind::Mpi && x.loc.line > 0;
}
} // namespace

void MergeLineContexts(const Psg &psg, const Run &big, std::vector<RootCause> &causes) {
  // Every context of each line that has data in the largest run.
  std::map<LineKey, std::vector<VertexId>> contexts_of;
  for (const VertexSeries &s : big.series)
    if (s.own_data && Summable(psg, s.vertex))
      contexts_of[LineOf(psg, s.vertex)].push_back(s.vertex);
  // One cause per (line, culprit rank): the first takes the others in.
  std::map<std::pair<LineKey, int>, size_t> first;
  std::vector<RootCause> kept;
  std::vector<std::set<VertexId>> members;
  for (RootCause &c : causes) {
    if (c.communication || !Summable(psg, c.vertex)) {
      kept.push_back(std::move(c));
      members.emplace_back();
      continue;
    }
    auto [it, fresh] = first.try_emplace({LineOf(psg, c.vertex), c.culprit_rank}, kept.size());
    if (fresh) {
      members.push_back({c.vertex});
      kept.push_back(std::move(c));
      continue;
    }
    RootCause &into = kept[it->second];
    members[it->second].insert(c.vertex);
    if (c.cost_seconds > into.cost_seconds) {
      // The costlier context stands for the line: its vertex, path, evidence.
      std::swap(into.vertex, c.vertex);
      std::swap(into.path, c.path);
      std::swap(into.evidence, c.evidence);
    }
    into.cost_seconds += c.cost_seconds;
    // A sum with a growth term in it is growth (Kripke: 0.220 s of growth
    // across scales read "time over its median").
    into.cost_is_growth = into.cost_is_growth || c.cost_is_growth;
    into.culprit_time += c.culprit_time;
    into.most_time_here += c.most_time_here;
    into.median_time += c.median_time;
    // Waits traced from either context are mostly the same waits: the
    // larger, not the sum, is what a fix of the line gives back.
    if (c.waits_caused > into.waits_caused) {
      into.waits_caused = c.waits_caused;
      into.waiting_ranks = c.waiting_ranks;
    }
    if (into.culprit_thread < 0)
      into.culprit_thread = c.culprit_thread;
    if (c.thread_waits_caused > into.thread_waits_caused) {
      into.thread_waits_caused = c.thread_waits_caused;
      into.waiting_threads = c.waiting_threads;
    }
    into.abnormal = into.abnormal || c.abnormal;
    into.non_scalable = into.non_scalable || c.non_scalable;
    into.saved_seconds = std::max(into.saved_seconds, c.saved_seconds);
    for (int r : c.ranks)
      if (std::find(into.ranks.begin(), into.ranks.end(), r) == into.ranks.end())
        into.ranks.push_back(r);
  }
  // The line's other contexts on the culprit rank, no path's cause (a path
  // from one context walks through the other): their time and median join
  // the line's, and the line costs at least its time over its median. Not
  // their costs one by one: each is the positive part of a noisy
  // difference, and a sum of those grows with the number of contexts even
  // where there is nothing but noise.
  for (size_t i = 0; i < kept.size(); ++i) {
    RootCause &c = kept[i];
    const int slot = big.SlotOf(c.culprit_rank);
    if (members[i].empty() || slot < 0)
      continue;
    for (VertexId v : contexts_of[LineOf(psg, c.vertex)]) {
      const VertexSeries *s = big.Find(v);
      if (members[i].count(v) || ExclusiveTime(psg, *s, slot) <= 0)
        continue;
      members[i].insert(v);
      c.culprit_time += ExclusiveTime(psg, *s, slot);
      c.median_time += Median(TimesOverRanks(psg, big, *s));
    }
    if (c.culprit_time - c.median_time > c.cost_seconds) {
      c.cost_seconds = c.culprit_time - c.median_time;
      c.cost_is_growth = false;
    }
    c.contexts = members[i].size();
    if (c.contexts < 2)
      continue;
    std::sort(c.ranks.begin(), c.ranks.end());
    const double big_max = big.total_time;
    c.score = big_max > 0 ? std::min(1.0, c.cost_seconds / big_max) : 0;
    if (c.saved_seconds > 0)
      c.saved_seconds = std::min(c.cost_seconds, c.wall_time);
    if (const double hz = big.sample_rate; hz > 0)
      SetSampleEvidence(c, c.cost_seconds, c.median_time, hz);
  }
  causes = std::move(kept);
}

} // namespace scalana
