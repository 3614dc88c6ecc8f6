// Models per PPG vertex and the prediction at a rank count not measured
// (`scalana detect --predict P`; docs/detect.md, "Prediction").
#pragma once

#include "detect/models.h"
#include "ppg/ppg.h"

#include <string>
#include <utility>
#include <vector>

namespace scalana {

// One vertex's time on its busiest rank per run, and its model.
struct VertexModel {
  VertexId vertex = kNoVertex;
  std::vector<std::pair<double, double>> points; // (ranks, seconds on the busiest rank)
  ScalingModel model;
  double at_p = 0; // the model at the predicted rank count (>= 0)
};

// What fixing one root cause saves at the predicted rank count: its cost
// and the waits it causes in the largest run, each grown as its vertex's
// model grows from that run's rank count to P.
struct CausePrediction {
  size_t cause = 0; // index into DetectResult::root_causes
  VertexId vertex = kNoVertex;
  double growth = 1; // model(P) / model(largest measured)
  double own_at_p = 0, waits_at_p = 0, saves_at_p = 0;
};

struct Prediction {
  int ranks = 0;                          // P; 0: no prediction asked
  std::vector<VertexModel> vertices;      // modelled vertices, largest at P first
  VertexId dominant = kNoVertex;          // largest at P
  VertexId dominant_measured = kNoVertex; // largest at the largest measured scale
  // The rank count from which DOMINANT stays the largest up to P (the
  // smallest measured scale when it always was).
  double overtakes_at = 0;
  std::vector<CausePrediction> causes; // largest saving first
  std::vector<std::string> notes;      // what the prediction could not do, and why
};

// Models the vertices that cost the most on their busiest rank in the
// largest run (at most LIMIT) and the vertices in ALSO.
std::vector<VertexModel> ModelVertices(const Psg &psg, const std::vector<Run> &runs,
                                       const std::vector<VertexId> &also, size_t limit);

// The busiest rank's time of V in RUN.
double BusiestTime(const Psg &psg, const Run &run, VertexId v);

} // namespace scalana
