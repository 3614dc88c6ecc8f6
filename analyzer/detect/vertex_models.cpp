// Scaling models of PPG vertices, each on its busiest rank: the rank that
// sets the run's pace where the vertex is the bottleneck.
#include "detect/detect_stages.h"
#include "detect/predict.h"

#include <algorithm>
#include <set>

namespace scalana {

using namespace detect_internal;

double BusiestTime(const Psg &psg, const Run &run, VertexId v) {
  const VertexSeries *s = run.Find(v);
  double most = 0;
  for (int i = 0; s && i < run.nslots(); ++i)
    most = std::max(most, ExclusiveTime(psg, *s, i));
  return most;
}

std::vector<VertexModel> ModelVertices(const Psg &psg, const std::vector<Run> &runs,
                                       const std::vector<VertexId> &also, size_t limit) {
  std::vector<VertexModel> out;
  if (runs.empty())
    return out;
  size_t largest = 0;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].world_size > runs[largest].world_size)
      largest = i;
  const Run &big = runs[largest];
  std::vector<std::pair<double, VertexId>> cost;
  std::set<VertexId> seen;
  for (const Run &r : runs)
    for (const VertexSeries &s : r.series)
      if (s.own_data && !IsStartupOrTeardown(psg, s.vertex) && seen.insert(s.vertex).second)
        cost.push_back({BusiestTime(psg, big, s.vertex), s.vertex});
  std::sort(cost.begin(), cost.end(), [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<VertexId> chosen;
  for (size_t i = 0; i < cost.size() && i < limit; ++i)
    chosen.push_back(cost[i].second);
  for (VertexId v : also)
    if (std::find(chosen.begin(), chosen.end(), v) == chosen.end())
      chosen.push_back(v);
  for (VertexId v : chosen) {
    VertexModel vm;
    vm.vertex = v;
    for (const Run &r : runs)
      vm.points.push_back({double(r.world_size), BusiestTime(psg, r, v)});
    std::sort(vm.points.begin(), vm.points.end());
    vm.model = FitScalingModel(vm.points);
    out.push_back(std::move(vm));
  }
  return out;
}

} // namespace scalana
