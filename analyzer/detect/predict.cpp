// The prediction at P ranks: vertices and root causes ranked by their
// modelled time there.
#include "detect/predict.h"
#include "detect/detect.h"

#include <algorithm>
#include <cmath>

namespace scalana {

namespace {

// The model at P, never below zero; the last measured value when the vertex
// has no model (fewer than three scales).
double At(const VertexModel &vm, double p) {
  if (vm.model.ok)
    return std::max(0.0, vm.model.Eval(p));
  return vm.points.empty() ? 0 : vm.points.back().second;
}

} // namespace

Prediction PredictAt(const Psg &psg, const std::vector<Run> &runs, const DetectResult &res,
                     int ranks) {
  Prediction pr;
  pr.ranks = ranks;
  if (runs.empty() || ranks <= 0)
    return pr;
  std::vector<VertexId> also;
  for (const RootCause &rc : res.root_causes)
    also.push_back(rc.vertex);
  for (const NonScalableVertex &ns : res.non_scalable)
    also.push_back(ns.vertex);
  pr.vertices = ModelVertices(psg, runs, also, 40);
  double p_min = 1e300, p_max = 0;
  for (const Run &r : runs)
    p_min = std::min(p_min, double(r.world_size)), p_max = std::max(p_max, double(r.world_size));
  size_t scales = pr.vertices.empty() ? 0 : pr.vertices[0].model.scales;
  if (scales < 3)
    pr.notes.push_back("runs at " + std::to_string(scales) +
                       " rank counts: models need three or more; the largest run's times stand "
                       "for every scale");
  for (VertexModel &vm : pr.vertices)
    vm.at_p = At(vm, ranks);
  std::stable_sort(pr.vertices.begin(), pr.vertices.end(),
                   [](const VertexModel &a, const VertexModel &b) { return a.at_p > b.at_p; });
  if (pr.vertices.empty())
    return pr;
  pr.dominant = pr.vertices[0].vertex;
  auto argmax = [&](double p) {
    size_t best = 0;
    for (size_t i = 1; i < pr.vertices.size(); ++i)
      if (At(pr.vertices[i], p) > At(pr.vertices[best], p))
        best = i;
    return pr.vertices[best].vertex;
  };
  pr.dominant_measured = argmax(p_max);
  // Walks a geometric grid from the smallest measured scale to P: the last
  // point where the largest vertex changed to DOMINANT.
  const double lo = std::min(p_min, double(ranks)), hi = std::max(p_max, double(ranks));
  const int steps = 400;
  pr.overtakes_at = lo;
  VertexId prev = argmax(lo);
  for (int s = 1; s <= steps; ++s) {
    double p = lo * std::pow(hi / lo, double(s) / steps);
    VertexId now = argmax(p);
    if (now != prev && now == pr.dominant)
      pr.overtakes_at = p;
    prev = now;
    if (p >= ranks)
      break;
  }
  for (size_t i = 0; i < res.root_causes.size(); ++i) {
    const RootCause &rc = res.root_causes[i];
    CausePrediction cp;
    cp.cause = i;
    cp.vertex = rc.vertex;
    for (const VertexModel &vm : pr.vertices)
      if (vm.vertex == rc.vertex) {
        double big = At(vm, p_max);
        cp.growth = big > 0 ? At(vm, ranks) / big : 1;
      }
    cp.own_at_p = rc.cost_seconds * cp.growth;
    cp.waits_at_p = rc.waits_caused * cp.growth;
    // The waits overlap the cost (other ranks wait while it runs): a fix
    // saves the wall time it saves now, grown, not the two summed.
    cp.saves_at_p = rc.saved_seconds * cp.growth;
    pr.causes.push_back(cp);
  }
  std::stable_sort(pr.causes.begin(), pr.causes.end(),
                   [](const CausePrediction &a, const CausePrediction &b) {
                     return a.saves_at_p > b.saves_at_p;
                   });
  return pr;
}

} // namespace scalana
