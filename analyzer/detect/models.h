// Scaling models in Extra-P's performance model normal form with one
// parameter p (the rank count): f(p) = c0 + sum_k c_k * p^(i_k) * log2(p)^(j_k),
// one or two terms, the hypothesis chosen by leave-one-out cross-validation
// (docs/detect.md, "Scaling models").
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace scalana {

// One term p^(num/den) * log2(p)^log_exp.
struct ModelTerm {
  int num = 0, den = 1, log_exp = 0;
  double Exponent() const { return double(num) / den; }
  double Eval(double p) const;
  bool operator==(const ModelTerm &o) const {
    return num == o.num && den == o.den && log_exp == o.log_exp;
  }
};

// Every term of the search space but the constant: i in {0, 1/4, 1/3, 1/2,
// 2/3, 3/4, 1, 5/4, 4/3, 3/2, 5/3, 7/4, 2, 9/4, 7/3, 5/2, 8/3, 11/4, 3},
// j in {0, 1, 2}.
const std::vector<ModelTerm> &ModelTerms();

struct ScalingModel {
  bool ok = false; // false: fewer than 3 scales (or no positive value)
  double c0 = 0;
  std::vector<double> coeffs;   // one per term
  std::vector<ModelTerm> terms; // 0, 1 or 2
  double cv_smape = 0;          // leave-one-out SMAPE of the chosen hypothesis (0..2)
  double r2_adj = 0;            // adjusted R^2 of the fit on all scales
  double noise = 0;             // relative RMS residual of the fit on all scales
  size_t scales = 0;            // distinct rank counts fitted
  double Eval(double p) const;
  // The term that grows fastest (largest exponent, then log power); the
  // constant (exponent 0, log 0) when there is none.
  ModelTerm Leading() const;
  // "high" (>= 5 scales, CV SMAPE under 10%), "medium" (>= 4 scales, under
  // 25%), else "low".
  std::string Confidence() const;
};

// Fits POINTS (rank count, seconds; equal rank counts averaged first).
ScalingModel FitScalingModel(const std::vector<std::pair<double, double>> &points);

// The least-squares fit of one hypothesis (c0 plus TERMS) to POINTS; false
// when the system is singular. Exposed for tests.
bool FitHypothesis(const std::vector<std::pair<double, double>> &points,
                   const std::vector<ModelTerm> &terms, double *c0, std::vector<double> *coeffs);

// "p^(3/4)", "p * log2(p)^2", "log2(p)": the term alone.
std::string TermText(const ModelTerm &t);
// "0.012 + 3.1e-3 * p^(3/4)": the whole model.
std::string ModelText(const ScalingModel &m);
// "p^(3/4)" or "constant": the leading term alone.
std::string LeadingText(const ScalingModel &m);

} // namespace scalana
