// Least-squares fits of the normal-form hypotheses and their selection by
// leave-one-out cross-validation.
#include "detect/models.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace scalana {

double ScalingModel::Eval(double p) const {
  double v = c0;
  for (size_t k = 0; k < terms.size(); ++k)
    v += coeffs[k] * terms[k].Eval(p);
  return v;
}

ModelTerm ScalingModel::Leading() const {
  ModelTerm best;
  for (const ModelTerm &t : terms)
    if (t.Exponent() > best.Exponent() ||
        (t.Exponent() == best.Exponent() && t.log_exp > best.log_exp))
      best = t;
  return best;
}

std::string ScalingModel::Confidence() const {
  if (ok && scales >= 5 && cv_smape < 0.10)
    return "high";
  if (ok && scales >= 4 && cv_smape < 0.25)
    return "medium";
  return "low";
}

bool FitHypothesis(const std::vector<std::pair<double, double>> &points,
                   const std::vector<ModelTerm> &terms, double *c0, std::vector<double> *coeffs) {
  const size_t k = terms.size() + 1, n = points.size();
  if (n < k)
    return false;
  // Columns scaled to unit maximum so p^3 * log2(p)^2 and 1 share a
  // normal-equation system without losing the small one.
  std::vector<std::vector<double>> col(k, std::vector<double>(n));
  std::vector<double> scale(k, 1.0);
  for (size_t i = 0; i < n; ++i) {
    col[0][i] = 1;
    for (size_t t = 0; t < terms.size(); ++t)
      col[t + 1][i] = terms[t].Eval(points[i].first);
  }
  for (size_t c = 0; c < k; ++c) {
    double m = 0;
    for (double x : col[c])
      m = std::max(m, std::fabs(x));
    if (m == 0)
      return false;
    scale[c] = m;
    for (double &x : col[c])
      x /= m;
  }
  double a[3][4] = {};
  for (size_t r = 0; r < k; ++r) {
    for (size_t c = 0; c < k; ++c)
      for (size_t i = 0; i < n; ++i)
        a[r][c] += col[r][i] * col[c][i];
    for (size_t i = 0; i < n; ++i)
      a[r][k] += col[r][i] * points[i].second;
  }
  for (size_t c = 0; c < k; ++c) { // Gaussian elimination, partial pivoting
    size_t piv = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c]))
        piv = r;
    if (std::fabs(a[piv][c]) < 1e-12 * (1 + std::fabs(a[c][c])))
      return false;
    std::swap(a[c], a[piv]);
    for (size_t r = 0; r < k; ++r)
      if (r != c) {
        double f = a[r][c] / a[c][c];
        for (size_t cc = c; cc <= k; ++cc)
          a[r][cc] -= f * a[c][cc];
      }
  }
  *c0 = a[0][k] / a[0][0] / scale[0];
  coeffs->assign(terms.size(), 0);
  for (size_t t = 0; t < terms.size(); ++t)
    (*coeffs)[t] = a[t + 1][k] / a[t + 1][t + 1] / scale[t + 1];
  return std::isfinite(*c0);
}

namespace {

// The denominator is floored at FLOOR (a tenth of the largest value): a
// vertex absent at one rank (0 s there, as log2(1) = 0 makes a p log p loop)
// would otherwise score every hypothesis the maximum in that fold, and a
// floor of 1% still let that fold decide for a wrong form that passed
// through 0 there by chance (docs/detect.md, "Scaling models", step 3).
double Smape(double pred, double y, double floor) {
  double d = std::max(std::fabs(pred) + std::fabs(y), floor);
  return d > 0 ? 2 * std::fabs(pred - y) / d : 0;
}

struct Candidate {
  bool ok = false;
  double smape = 1e300, c0 = 0;
  std::vector<double> coeffs;
  std::vector<ModelTerm> terms;
};

// Leave-one-out SMAPE of TERMS over PTS; not ok when a fold is singular or
// the fit on all points grows with a negative coefficient (the model
// describes growth; a falling part belongs to the constant).
Candidate Evaluate(const std::vector<std::pair<double, double>> &pts,
                   const std::vector<ModelTerm> &terms) {
  Candidate c;
  c.terms = terms;
  if (!FitHypothesis(pts, terms, &c.c0, &c.coeffs))
    return c;
  for (double x : c.coeffs)
    if (!(x > 0))
      return c;
  double sum = 0, top = 0;
  for (auto [p, t] : pts)
    top = std::max(top, std::fabs(t));
  std::vector<std::pair<double, double>> rest;
  for (size_t i = 0; i < pts.size(); ++i) {
    rest.clear();
    for (size_t j = 0; j < pts.size(); ++j)
      if (j != i)
        rest.push_back(pts[j]);
    double c0;
    std::vector<double> co;
    if (!FitHypothesis(rest, terms, &c0, &co))
      return c;
    double pred = c0;
    for (size_t t = 0; t < terms.size(); ++t)
      pred += co[t] * terms[t].Eval(pts[i].first);
    sum += Smape(pred, pts[i].second, 0.1 * top);
  }
  c.smape = sum / double(pts.size());
  c.ok = true;
  return c;
}

} // namespace

ScalingModel FitScalingModel(const std::vector<std::pair<double, double>> &points) {
  std::map<double, std::pair<double, int>> by_p;
  for (auto [p, t] : points)
    if (p > 0 && std::isfinite(t))
      by_p[p].first += t, by_p[p].second++;
  std::vector<std::pair<double, double>> pts;
  for (auto &[p, s] : by_p)
    pts.push_back({p, s.first / s.second});
  ScalingModel m;
  m.scales = pts.size();
  if (pts.size() < 3)
    return m;
  // The best hypothesis of each size: the constant, one term, two terms.
  // A fold must keep one point more than the hypothesis has coefficients.
  const std::vector<ModelTerm> &all = ModelTerms();
  Candidate best[3];
  best[0] = Evaluate(pts, {});
  for (size_t a = 0; a < all.size() && pts.size() >= 4; ++a) {
    Candidate c = Evaluate(pts, {all[a]});
    if (c.ok && c.smape < best[1].smape)
      best[1] = c;
    for (size_t b = a + 1; b < all.size() && pts.size() >= 5; ++b) {
      Candidate d = Evaluate(pts, {all[a], all[b]});
      if (d.ok && d.smape < best[2].smape)
        best[2] = d;
    }
  }
  // With three scales one term is fitted on two points per fold.
  if (pts.size() == 3)
    for (const ModelTerm &t : all) {
      Candidate c = Evaluate(pts, {t});
      if (c.ok && c.smape < best[1].smape)
        best[1] = c;
    }
  // A larger hypothesis must beat the smaller one clearly, so noise does not
  // buy a term: one term must cut the constant's error by a fifth and more
  // than a percentage point, and grow over the measured range by more than
  // twice the constant's RMS residual (the noise, if the constant is
  // right); a second term must halve the error of the first, which must
  // exceed 5% (a term that fits within the run-to-run noise of timings is
  // not improved on by fitting that noise).
  double mean = 0;
  for (auto [p, t] : pts)
    mean += t;
  mean /= double(pts.size());
  double const_rms = 0;
  for (auto [p, t] : pts)
    const_rms += (t - mean) * (t - mean);
  const_rms = std::sqrt(const_rms / double(pts.size()));
  auto growth = [&](const Candidate &c) {
    double g = 0;
    for (size_t t = 0; t < c.terms.size(); ++t)
      g += c.coeffs[t] * (c.terms[t].Eval(pts.back().first) - c.terms[t].Eval(pts.front().first));
    return g;
  };
  // Every term of a two-term model must carry a share of it at the largest
  // scale: bench-models' log2(p) loop, measured 0 at one rank, bought
  // 2.5e-5 * p^(7/3) (0.4% of the model at 6 ranks) to fit that point, and
  // the negligible term became the leading one.
  auto every_term_counts = [&](const Candidate &c) {
    const double p = pts.back().first;
    double total = c.c0;
    for (size_t t = 0; t < c.terms.size(); ++t)
      total += c.coeffs[t] * c.terms[t].Eval(p);
    for (size_t t = 0; t < c.terms.size(); ++t)
      if (c.coeffs[t] * c.terms[t].Eval(p) < 0.02 * std::fabs(total))
        return false;
    return true;
  };
  Candidate *chosen = &best[0];
  if (best[1].ok && best[1].smape < best[0].smape * 0.8 && best[1].smape < best[0].smape - 0.01 &&
      growth(best[1]) > 2 * const_rms * 0.999)
    chosen = &best[1];
  if (chosen == &best[1] && best[2].ok && best[1].smape > 0.05 &&
      best[2].smape < best[1].smape * 0.5 && best[2].smape < best[1].smape - 0.005 &&
      every_term_counts(best[2]))
    chosen = &best[2];
  if (!best[0].ok && chosen == &best[0])
    for (int k = 1; k < 3 && !chosen->ok; ++k)
      chosen = &best[k];
  if (!chosen->ok)
    return m;
  m.ok = true;
  m.c0 = chosen->c0;
  m.coeffs = chosen->coeffs;
  m.terms = chosen->terms;
  m.cv_smape = chosen->smape;
  double rss = 0, tss = 0;
  for (auto [p, t] : pts)
    rss += (m.Eval(p) - t) * (m.Eval(p) - t), tss += (t - mean) * (t - mean);
  const double n = double(pts.size()), k = double(m.terms.size());
  m.r2_adj = tss > 0 && n - k - 1 > 0 ? 1 - (rss / (n - k - 1)) / (tss / (n - 1)) : 1;
  m.noise = mean > 0 ? std::sqrt(rss / n) / mean : 0;
  return m;
}

} // namespace scalana
