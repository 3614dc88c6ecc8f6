// The statistics detection rests on: log-log fits, medians and merging
// per-rank values into one (detect.h, "Statistics").
#include "detect/detect.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace scalana {

LogLogFit FitLogLog(const std::vector<std::pair<double, double>> &points, double floor) {
  // Runs at the same scale are repetitions: average them so each scale weighs
  // the same in the fit.
  std::map<double, std::pair<double, int>> by_p;
  for (auto [p, y] : points) {
    if (!(p > 0))
      continue;
    auto &acc = by_p[p];
    acc.first += y;
    acc.second += 1;
  }
  LogLogFit fit;
  if (by_p.size() < 2)
    return fit;
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = double(by_p.size());
  floor = floor > 0 ? floor : 1e-12;
  for (auto &[p, acc] : by_p) {
    double x = std::log(p), y = std::log(std::max(acc.first / acc.second, floor));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  double den = n * sxx - sx * sx;
  if (den == 0)
    return fit;
  fit.b = (n * sxy - sx * sy) / den;
  fit.a = (sy - fit.b * sx) / n;
  fit.ok = true;
  return fit;
}

double Median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double hi = values[mid];
  if (values.size() % 2)
    return hi;
  double lo = *std::max_element(values.begin(), values.begin() + mid);
  return (lo + hi) / 2;
}

double SlowestClusterMean(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n < 2 || values.front() == values.back())
    return std::accumulate(values.begin(), values.end(), 0.0) / double(n);
  std::vector<double> sum(n + 1, 0), sq(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    sum[i + 1] = sum[i] + values[i];
    sq[i + 1] = sq[i] + values[i] * values[i];
  }
  auto sse_of = [&](size_t b, size_t e) { // squared error of values[b, e)
    if (e <= b)
      return 0.0;
    double s = sum[e] - sum[b], m = s / double(e - b);
    return std::max(0.0, sq[e] - sq[b] - s * m);
  };
  // Lloyd's algorithm in one dimension: on sorted values every cluster is a
  // contiguous range, so one iteration is k binary searches.
  struct Clustering {
    std::vector<size_t> bounds; // k+1 boundaries
    double sse = 0;
  };
  auto kmeans = [&](size_t k) {
    std::vector<double> c(k);
    for (size_t i = 0; i < k; ++i)
      c[i] = values[std::min(n - 1, (2 * i + 1) * n / (2 * k))];
    Clustering cl;
    for (int iter = 0; iter < 100; ++iter) {
      std::vector<size_t> b(k + 1, 0);
      b[k] = n;
      for (size_t i = 1; i < k; ++i) {
        double mid = (c[i - 1] + c[i]) / 2;
        b[i] = std::upper_bound(values.begin(), values.end(), mid) - values.begin();
        b[i] = std::max(b[i], b[i - 1]);
      }
      bool same = b == cl.bounds;
      cl.bounds = b;
      if (same)
        break;
      for (size_t i = 0; i < k; ++i)
        if (b[i + 1] > b[i])
          c[i] = (sum[b[i + 1]] - sum[b[i]]) / double(b[i + 1] - b[i]);
    }
    cl.sse = 0;
    for (size_t i = 0; i < k; ++i)
      cl.sse += sse_of(cl.bounds[i], cl.bounds[i + 1]);
    return cl;
  };
  Clustering two = kmeans(2), three = n >= 3 ? kmeans(3) : two;
  // A third cluster must pay for itself: it has to halve the squared error
  // of two, and remove at least 5% of the total (not just split noise).
  const double total = sse_of(0, n);
  const Clustering &best =
      three.sse < 0.5 * two.sse && two.sse - three.sse > 0.05 * total ? three : two;
  for (size_t i = best.bounds.size() - 1; i > 0; --i)
    if (best.bounds[i] > best.bounds[i - 1])
      return (sum[best.bounds[i]] - sum[best.bounds[i - 1]]) /
             double(best.bounds[i] - best.bounds[i - 1]);
  return values.back();
}

double MergeValues(std::vector<double> values, MergeStrategy how) {
  if (values.empty())
    return 0;
  switch (how) {
  case MergeStrategy::Max:
    return *std::max_element(values.begin(), values.end());
  case MergeStrategy::Mean:
    return std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  case MergeStrategy::Median:
    return Median(std::move(values));
  case MergeStrategy::Cluster:
    return SlowestClusterMean(std::move(values));
  }
  return 0;
}

} // namespace scalana
