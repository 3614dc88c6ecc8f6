// Abnormal OpenMP threads within a rank, and what their imbalance costs
// (threads.cpp; docs/detect.md, "Threads").
#pragma once

#include "detect/detect.h"
#include "detect/detect_stages.h"

#include <unordered_set>

namespace scalana {

// A vertex on one rank where one thread's CPU time exceeds ABNORM_THD times
// the median over the rank's team, by more than the noise.
struct AbnormalThread {
  VertexId vertex = kNoVertex;
  int slot = -1, rank = -1, thread = -1;
  double time = 0, median = 0, excess = 0;
  double waits = 0; // the team's other threads' waits in the same region
  int waiting = 0;  // threads among them that waited
};

// FLOOR: the smallest excess that counts (two samples' worth).
std::vector<AbnormalThread> FindAbnormalThreads(const Psg &psg, const Run &run,
                                                const DetectOptions &opts, double floor);

// Names the culprit thread of every root cause whose culprit rank has an
// abnormal thread at its vertex, counts the waits it causes, and adds the
// imbalances no root cause explains as causes of their own; SLOWEST tells
// whether a fix is on the critical path.
void AttachThreads(const Psg &psg, const Run &big, const DetectOptions &opts, double floor,
                   const detect_internal::SlowestRank &slowest, std::vector<RootCause> &causes);

// Growth first: marks as non-scalable the thread imbalances whose vertex
// is (NON_SCALABLE), or whose largest thread excess grows from RUNS[SMALLEST]
// to RUNS[LARGEST] beyond EXPECTED_SLOPE by min_slope_excess and the noise;
// the excess at both ends goes in their growth ("thread excess").
void MarkGrowingImbalance(const Psg &psg, const std::vector<Run> &runs, size_t smallest,
                          size_t largest, double expected_slope, const DetectOptions &opts,
                          const std::unordered_set<VertexId> &non_scalable,
                          std::vector<RootCause> &causes);

// Marks the non-scalable computation causes outside every OpenMP construct
// as the serial fraction, in runs whose ranks have teams of 2 or more.
void MarkSerialFraction(const Psg &psg, const Run &big, std::vector<RootCause> &causes);

} // namespace scalana
