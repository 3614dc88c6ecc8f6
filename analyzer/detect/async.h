// Fine-grained asynchronous programs (one-sided MPI, aggregated actor
// messaging): hot-spot targets, found from the dependence rows' operation
// counts per peer (docs/async.md).
#pragma once

#include "ppg/ppg.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace scalana {

// One target rank that receives far more than its fair share of the
// operations (sends or one-sided operations) issued at one call site.
// What a hot spot's target draws more than its share of.
enum class HotMeasure { Operations, Bytes };

struct HotSpot {
  VertexId vertex = kNoVertex; // the send or one-sided call issuing them
  VertexId loop = kNoVertex;   // the innermost loop around it: the producers' loop
  DepKind kind = DepKind::Send;
  // Operations, or bytes when the target is hot by bytes only.
  HotMeasure measure = HotMeasure::Operations;
  int target_rank = -1;
  double share = 0;                  // of the call's MEASURE, in the run it was found in
  double fair_share = 0;             // 1 / ranks
  uint64_t to_target = 0, total = 0; // operations
  uint64_t bytes_to_target = 0, bytes = 0;
  std::vector<int> producers; // ranks that sent to the target
  // The largest shares of that call's MEASURE, by target rank, largest first.
  std::vector<std::pair<int, double>> top_targets;
  // The call's hottest target and its share in every run where it has rows.
  struct Scale {
    int ranks = 0, target = -1;
    double share = 0;
  };
  std::vector<Scale> by_scale;
};

struct HotSpotOptions {
  // A target is hot when its share reaches twice the fair share 1/P (at most
  // half-way from the fair share to all of it, so 2 ranks can show one)...
  double share_factor = 2;
  // ... over enough operations that the share is not noise...
  uint64_t min_operations = 100;
  // ... and it draws at least this many fair shares of the call's
  // operations over all the paths to the call, not of one path's only.
  double call_share_factor = 1.5;
};

// Hot spots of RUNS[BIG] (the largest run), most operations drawn to the
// target first; the call's hottest target at every scale is filled from RUNS.
std::vector<HotSpot> FindHotSpots(const Psg &psg, const std::vector<Run> &runs, size_t big,
                                  const HotSpotOptions &opts = {});

// The share threshold at P ranks.
double HotShareThreshold(int ranks, const HotSpotOptions &opts = {});

} // namespace scalana
