// The term space of the scaling models and their printing.
#include "detect/models.h"

#include <cmath>
#include <cstdio>

namespace scalana {

double ModelTerm::Eval(double p) const {
  double l = p > 0 ? std::log2(p) : 0;
  double v = num == 0 ? 1.0 : std::pow(p, Exponent());
  for (int k = 0; k < log_exp; ++k)
    v *= l;
  return v;
}

const std::vector<ModelTerm> &ModelTerms() {
  static const std::vector<ModelTerm> terms = [] {
    const int ex[][2] = {{0, 1}, {1, 4}, {1, 3}, {1, 2},  {2, 3}, {3, 4}, {1, 1},
                         {5, 4}, {4, 3}, {3, 2}, {5, 3},  {7, 4}, {2, 1}, {9, 4},
                         {7, 3}, {5, 2}, {8, 3}, {11, 4}, {3, 1}};
    std::vector<ModelTerm> out;
    for (const auto &e : ex)
      for (int j = 0; j <= 2; ++j)
        if (e[0] != 0 || j != 0) // p^0 * log^0 is the constant c0
          out.push_back({e[0], e[1], j});
    return out;
  }();
  return terms;
}

std::string TermText(const ModelTerm &t) {
  std::string s;
  if (t.num != 0) {
    if (t.den == 1)
      s = t.num == 1 ? "p" : "p^" + std::to_string(t.num);
    else
      s = "p^(" + std::to_string(t.num) + "/" + std::to_string(t.den) + ")";
  }
  if (t.log_exp > 0) {
    if (!s.empty())
      s += " * ";
    s += t.log_exp == 1 ? "log2(p)" : "log2(p)^" + std::to_string(t.log_exp);
  }
  return s.empty() ? "1" : s;
}

namespace {
std::string Coef(double c) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", c);
  return b;
}
} // namespace

std::string ModelText(const ScalingModel &m) {
  if (!m.ok)
    return "no model";
  std::string s = Coef(m.c0);
  for (size_t k = 0; k < m.terms.size(); ++k) {
    double c = m.coeffs[k];
    s += (c < 0 ? " - " : " + ") + Coef(std::fabs(c)) + " * " + TermText(m.terms[k]);
  }
  return s;
}

std::string LeadingText(const ScalingModel &m) {
  if (!m.ok)
    return "no model";
  return m.terms.empty() ? "constant" : TermText(m.Leading());
}

} // namespace scalana
