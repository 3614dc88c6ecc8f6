#include "detect/detect_stages.h"

#include <algorithm>

namespace scalana {

namespace {

// Under the stated share by both measures a fix could give back: the wall
// time it saves, and for computation its cost against its rank's CPU time
// (where ranks share cores, a rank's CPU is what its own work is measured
// against; a wall-time share alone would call a 5% loop of one rank minor
// on an oversubscribed node).
bool Minor(const RootCause &c, double share) {
  if (c.wall_time > 0 && c.saved_seconds >= share * c.wall_time)
    return false;
  if (!c.communication && c.rank_cpu > 0 && c.cost_seconds >= share * c.rank_cpu)
    return false;
  return c.wall_time > 0 || c.rank_cpu > 0;
}

} // namespace

void RankCauses(const DetectOptions &opts, DetectResult &res) {
  std::vector<RootCause> &causes = res.root_causes;
  // One order whatever the kind: by the wall time a fix would save (held to
  // what the run supports by now), then by cost. Waits that grow only
  // because ranks share cores were moved out before (contention.cpp): they
  // were why computation used to be listed first whatever it saved.
  std::stable_sort(causes.begin(), causes.end(), [](const RootCause &a, const RootCause &b) {
    if (a.saved_seconds != b.saved_seconds)
      return a.saved_seconds > b.saved_seconds;
    return a.cost_seconds > b.cost_seconds;
  });
  // Growth alike on every rank of a run whose ranks share cores may be the
  // machine's: it never outranks a settled cause of one rank (HPCCG's
  // sparse mat-vec at 8 ranks on 2 cores, 0.24 s "saved"). A thin one may
  // be noise and does not hold it back (events' routing table, injected
  // to grow on every rank, fell below a 3-sample branch).
  size_t last_settled = 0; // one past the last settled cause of one rank
  for (size_t i = 0; i < causes.size(); ++i)
    if (!causes[i].alike_on_shared_cores && detect_internal::Settled(causes[i]))
      last_settled = i + 1;
  std::stable_partition(causes.begin(), causes.begin() + long(last_settled),
                        [](const RootCause &c) { return !c.alike_on_shared_cores; });
  std::vector<RootCause> major;
  for (RootCause &c : causes)
    (Minor(c, opts.minor_share) ? res.minor_causes : major).push_back(std::move(c));
  causes = std::move(major);
  // Only what is reported is cut to --top: every non-scalable vertex was a
  // start and a problematic step (cut before backtracking, --top 3 and 50
  // named Kripke's causes in different orders).
  res.minor_count = res.minor_causes.size();
  res.contention_count = res.contention.size();
  for (std::vector<RootCause> *list : {&causes, &res.minor_causes, &res.contention})
    if (list->size() > opts.top)
      list->resize(opts.top);
  if (res.non_scalable.size() > opts.top)
    res.non_scalable.resize(opts.top);
}

} // namespace scalana
