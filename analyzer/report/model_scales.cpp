#include "report/model_scales.h"

#include <cmath>
#include <set>

namespace scalana {

namespace {
bool IsPower(int n, int k) {
  const int r = int(std::lround(std::pow(double(n), 1.0 / k)));
  for (int c = std::max(1, r - 1); c <= r + 1; ++c) {
    long long p = 1;
    for (int i = 0; i < k; ++i)
      p *= c;
    if (p == n)
      return true;
  }
  return false;
}
} // namespace

std::vector<int> ScalesOf(const std::vector<Run> &runs) {
  std::set<int> s;
  for (const Run &r : runs)
    s.insert(r.world_size);
  return {s.begin(), s.end()};
}

std::vector<int> ScalesToAdd(const std::vector<int> &scales) {
  std::vector<int> add;
  if (scales.empty() || scales.size() >= kExtrapMinScales)
    return add;
  const size_t need = kExtrapMinScales - scales.size();
  const int last = scales.back();
  bool geometric = scales.size() >= 2 && scales[0] > 0 && scales[1] % scales[0] == 0;
  const int ratio = geometric ? scales[1] / scales[0] : 2;
  for (size_t i = 1; geometric && i < scales.size(); ++i)
    geometric = scales[i] == scales[i - 1] * ratio;
  for (int k : {3, 2}) { // cubes, then squares
    bool all = !geometric && scales.size() >= 2;
    for (int s : scales)
      all = all && IsPower(s, k);
    if (!all)
      continue;
    int base = int(std::lround(std::pow(double(last), 1.0 / k)));
    while (add.size() < need) {
      ++base;
      add.push_back(k == 3 ? base * base * base : base * base);
    }
    return add;
  }
  long long next = last;
  while (add.size() < need && next < (1LL << 30)) {
    next *= geometric && ratio > 1 ? ratio : 2;
    add.push_back(int(next));
  }
  return add;
}

std::string FewScalesText(const std::vector<Run> &runs) {
  const std::vector<int> scales = ScalesOf(runs);
  if (scales.size() < 2 || scales.size() >= kExtrapMinScales)
    return "";
  std::string list, more;
  for (size_t i = 0; i < scales.size(); ++i)
    list += (i ? ", " : "") + std::to_string(scales[i]);
  const std::vector<int> add = ScalesToAdd(scales);
  for (size_t i = 0; i < add.size(); ++i)
    more += std::string(i == 0                ? ""
                        : i + 1 == add.size() ? " and "
                                              : ", ") +
            std::to_string(add[i]);
  return "the models rest on " + std::to_string(scales.size()) + " scales (" + list +
         "): Extra-P's modeler needs " + std::to_string(kExtrapMinScales) +
         " per parameter and warns on every model below that (the exports carry the same "
         "points); add runs at " +
         more + " ranks";
}

} // namespace scalana
