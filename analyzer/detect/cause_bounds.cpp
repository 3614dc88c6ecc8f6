// No figure of a cause past what the run can support (docs/detect.md,
// "Bounds"). The cost estimates come from models and medians over noisy
// ranks; a growth fitted across scales can exceed the time it was fitted
// from, and a wait traced along several paths can count one wait twice.
// Each figure is held to the measurement it rests on, and the report says
// which were, so a reader never sees a cost above the culprit's own time.
#include "detect/detect_stages.h"
#include "report/report_common.h"

#include <algorithm>
#include <cstdio>

namespace scalana {

using namespace detect_internal;

namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

// Past LIMIT by more than rounding: figures are printed to the millisecond.
bool Exceeds(double value, double limit) { return value > limit + 5e-4 + 1e-9 * limit; }

// Waiting that exists on the ranks other than CULPRIT's: their MPI time and
// the main thread's OpenMP waits (0 when no rank's split was measured).
double WaitsElsewhere(const Run &big, int culprit) {
  double sum = 0;
  for (int i = 0; i < big.nslots() && size_t(i) < big.rank_time.size(); ++i)
    if (big.ranks[i] != culprit)
      sum += double(big.rank_time[i].mpi) + double(big.rank_time[i].omp_wait);
  return sum;
}

} // namespace

void BoundCauseFigures(const Psg &psg, const Run &big, std::vector<RootCause> &causes) {
  for (RootCause &rc : causes) {
    // 1. The cost within the time it was measured from: a computation's
    // (or a thread's) own time there on the culprit; at a communication
    // or I/O call, the longest any rank spends there.
    const bool at_call = rc.communication && !rc.thread_imbalance;
    const double own = at_call ? std::max(rc.most_time_here, rc.culprit_time) : rc.culprit_time;
    if (own > 0 && Exceeds(rc.cost_seconds, own)) {
      const std::string whose =
          at_call               ? "the most any rank spends here"
          : rc.thread_imbalance ? "the culprit thread's own time here"
                                : "rank " + std::to_string(rc.culprit_rank) + "'s own time here";
      rc.bounds.push_back("cost held to " + Seconds(own) + ", " + whose + ": the estimate, " +
                          Seconds(rc.cost_seconds) + ", " +
                          (rc.cost_is_growth ? "a growth fitted across scales, " : "") +
                          "exceeded it");
      rc.cost_seconds = own;
      const double hz = big.sample_rate;
      if (hz > 0 && psg.vertex(rc.vertex).kind != VertexKind::Mpi)
        SetSampleEvidence(rc, rc.cost_seconds, rc.median_time, hz);
    }
    if (big.total_time > 0)
      rc.score = std::min(1.0, rc.cost_seconds / big.total_time);

    // 2. Waits traced to it within the waits that exist on the other ranks.
    if (const double waits = WaitsElsewhere(big, rc.culprit_rank);
        waits > 0 && Exceeds(rc.waits_caused, waits)) {
      rc.bounds.push_back("waits traced held to " + Seconds(waits) +
                          ", all the MPI and OpenMP waiting of the other ranks: the paths "
                          "counted " +
                          Seconds(rc.waits_caused) + ", some waits more than once");
      rc.waits_caused = waits;
    }

    // 3. A fix saves at most what the cause costs, and never more than the
    // run lasted.
    const double saved = std::min(rc.saved_seconds, rc.cost_seconds);
    if (rc.wall_time > 0 && Exceeds(saved, rc.wall_time)) {
      rc.bounds.push_back("saving held to the run's " + Seconds(rc.wall_time) + " wall time");
      rc.saved_seconds = rc.wall_time;
    } else {
      rc.saved_seconds = std::max(0.0, saved);
    }
  }
}

void HoldWaitsToTheUnexplained(const Psg &psg, const DetectOptions &opts,
                               std::vector<RootCause> &causes) {
  // The computation cause of another rank that costs the most: a rank
  // waits at most that much longer for the ranks it needs because of it.
  std::vector<bool> explained(causes.size(), false);
  for (size_t i = 0; i < causes.size(); ++i) {
    RootCause &rc = causes[i];
    if (!rc.communication || rc.io || rc.thread_imbalance)
      continue;
    const RootCause *late = nullptr;
    for (const RootCause &c : causes)
      if (!c.communication && !c.io && c.culprit_rank != rc.culprit_rank && c.saved_seconds > 0 &&
          (!late || c.cost_seconds > late->cost_seconds))
        late = &c;
    if (!late || late->cost_seconds < 5e-4)
      continue;
    const double left = std::max(0.0, rc.cost_seconds - late->cost_seconds);
    rc.bounds.push_back("cost held to " + Seconds(left) + ": up to " +
                        Seconds(std::min(rc.cost_seconds, late->cost_seconds)) +
                        " of its growth can be the wait for rank " +
                        std::to_string(late->culprit_rank) + ", late by the cause at " +
                        report_common::BaseName(report_common::FileOf(psg, late->vertex)) + ":" +
                        std::to_string(psg.vertex(late->vertex).loc.line));
    rc.cost_seconds = left;
    rc.saved_seconds = std::min(rc.saved_seconds, left);
    // All of it: a wait for that cause, which is listed; not a cause.
    explained[i] = left <= opts.min_wait;
  }
  std::vector<RootCause> kept;
  for (size_t i = 0; i < causes.size(); ++i)
    if (!explained[i])
      kept.push_back(std::move(causes[i]));
  causes = std::move(kept);
}

void SumSavings(DetectResult &res) {
  double sum = 0, wall = 0;
  for (const RootCause &rc : res.root_causes) {
    sum += rc.saved_seconds;
    wall = std::max(wall, rc.wall_time);
  }
  if (wall > 0 && Exceeds(sum, wall)) {
    res.savings_sum = sum;
    res.savings_wall = wall;
  }
}

} // namespace scalana
