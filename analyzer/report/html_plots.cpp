// The HTML report's plots, drawn here as inline SVG: scaling plots (log-log
// time over ranks) and per-rank bars.
#include "report/html_parts.h"
#include "report/predict_report.h"
#include "report/report_common.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace scalana {
namespace html {

using namespace report_common;

namespace {

std::string Num(double x) { return Fmt("%.1f", x); }

// "0.012 s", "3.4 s": tick labels.
std::string Seconds(double s) { return Fmt(s < 0.1 ? "%.3g s" : "%.2f s", s); }

Points Positive(const Points &pts) {
  Points out;
  for (auto [p, t] : pts)
    if (p > 0 && t > 0 && std::isfinite(t))
      out.push_back({p, t});
  return out;
}

} // namespace

ScalingPlotData PlotDataOf(const NonScalableVertex &ns) {
  ScalingPlotData d;
  for (const auto &[p, t] : ns.merged)
    d.measured.push_back({double(p), t});
  d.has_fit = true;
  d.slope = ns.slope;
  d.intercept = ns.intercept;
  d.has_expected = true;
  d.expected = ns.expected;
  // One growth figure: a model that does not grow as the fit does is left
  // out of the plot (the text report says why).
  if (ns.model.ok && !d.measured.empty() && ModelFollowsSlope(ns)) {
    d.model = ModelCurve(ns.model, d.measured.front().first, d.measured.back().first);
    d.model_label = ModelText(ns.model);
  }
  return d;
}

ScalingPlotData PlotDataOf(const ReportInput &in, const RootCause &rc) {
  ScalingPlotData d;
  for (const NonScalableVertex &ns : in.result.non_scalable)
    if (ns.vertex == rc.vertex)
      d = PlotDataOf(ns);
  const bool from_ns = d.has_fit;
  for (const Run &run : in.runs) {
    const VertexSeries *s = run.Find(rc.vertex);
    std::vector<double> t;
    double most = 0;
    for (int i = 0; s && i < run.nslots(); ++i) {
      double x = ExclusiveTime(in.psg, *s, i);
      most = std::max(most, x);
      if (x > 0)
        t.push_back(x);
    }
    if (!from_ns)
      d.measured.push_back(
          {double(run.world_size), t.empty() ? 0 : MergeValues(t, in.options.merge)});
    d.measured_max.push_back({double(run.world_size), most});
  }
  std::sort(d.measured.begin(), d.measured.end());
  std::sort(d.measured_max.begin(), d.measured_max.end());
  if (!from_ns && in.runs.size() > 1) {
    d.has_expected = true;
    d.expected = in.result.expected_slope;
  }
  // --predict: the model carried on to P and its value there. The merged
  // values' model when the cause is non-scalable, else its busiest rank's
  // (the squares).
  const Prediction &pr = in.result.prediction;
  if (pr.ranks > 0 && !d.measured.empty()) {
    const ScalingModel *m = nullptr;
    std::string which;
    for (const NonScalableVertex &ns : in.result.non_scalable)
      if (ns.vertex == rc.vertex && ns.model.ok)
        m = &ns.model;
    if (!m)
      for (const VertexModel &vm : pr.vertices)
        if (vm.vertex == rc.vertex && vm.model.ok)
          m = &vm.model, which = "(slowest rank) ";
    if (m) {
      const double lo = d.measured.front().first;
      d.model = ModelCurve(*m, lo, std::max(lo * 1.01, double(pr.ranks)));
      d.model_label = which + ModelText(*m);
      if (m->Eval(pr.ranks) > 0)
        d.predicted = {{double(pr.ranks), m->Eval(pr.ranks)}};
    }
  }
  return d;
}

std::string ScalingPlot(const ScalingPlotData &d, const std::string &id, const std::string &cls) {
  const double W = 380, H = 240, L = 64, R = 12, T = 14, B = 40;
  const Points pts = Positive(d.measured), most = Positive(d.measured_max),
               model = Positive(d.model), predicted = Positive(d.predicted);
  std::ostringstream o;
  o << "<svg class='" << cls << "' id=" << id << " width=" << W << " height=" << H
    << " viewBox='0 0 " << W << " " << H << "' role=img>";
  if (pts.empty())
    return o.str() + "<text x=10 y=20 font-size=11>no positive times to plot</text></svg>";
  double p0 = pts[0].first, p1 = p0, y0 = pts[0].second, y1 = y0;
  auto take = [&](const Points &v) {
    for (auto [p, t] : v)
      p0 = std::min(p0, p), p1 = std::max(p1, p), y0 = std::min(y0, t), y1 = std::max(y1, t);
  };
  take(pts), take(most), take(model), take(predicted);
  const double m0 = pts.front().first, m1 = pts.back().first; // the measured range
  auto fit = [&](double p) { return std::exp(d.intercept + d.slope * std::log(p)); };
  // The expected line starts where the fit (else the first point) starts.
  const double base = d.has_fit ? fit(m0) : pts.front().second;
  auto expected = [&](double p) { return base * std::pow(p / m0, d.expected); };
  for (double p : {m0, m1})
    for (double y : {d.has_fit ? fit(p) : base, d.has_expected ? expected(p) : base})
      if (y > 0 && std::isfinite(y))
        y0 = std::min(y0, y), y1 = std::max(y1, y);
  double lx0 = std::log(p0) - 0.15, lx1 = std::log(p1) + 0.15;
  double ly0 = std::log(y0) - 0.2, ly1 = std::log(y1) + 0.2;
  auto X = [&](double p) { return L + (std::log(p) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto Y = [&](double y) { return H - B - (std::log(y) - ly0) / (ly1 - ly0) * (H - T - B); };
  o << "<rect x=" << L << " y=" << T << " width=" << W - L - R << " height=" << H - T - B
    << " fill=none stroke='#999'/>";
  std::set<double> ticks;
  for (const Points *v : {&pts, &predicted})
    for (auto [p, t] : *v)
      ticks.insert(p);
  double last_tick = -1e9; // ticks closer than a label's width are skipped
  for (double p : ticks)
    if (X(p) - last_tick >= 22) {
      last_tick = X(p);
      o << "<text class=tick x=" << Num(X(p)) << " y=" << H - B + 14
        << " text-anchor=middle font-size=10>" << p << "</text>";
    }
  // Ticks nearer than a label's height are skipped: on a flat series the
  // three fall on one another (IOR's).
  double last_y = 1e9;
  for (double y : {y0, std::sqrt(y0 * y1), y1})
    if (last_y - Y(y) >= 12) {
      last_y = Y(y);
      o << "<text class=tick x=" << L - 4 << " y=" << Num(Y(y) + 3)
        << " text-anchor=end font-size=10>" << Seconds(y) << "</text>";
    }
  o << "<text x=" << (W + L) / 2 << " y=" << H - 6
    << " text-anchor=middle font-size=11>ranks (log)</text>"
    << "<text x=12 y=" << (H - B + T) / 2 << " font-size=11 transform='rotate(-90 12 "
    << (H - B + T) / 2 << ")' text-anchor=middle>seconds (log)</text>";
  auto line = [&](const char *c, double ya, double yb, const char *style, const std::string &t) {
    o << "<line class=" << c << " x1=" << Num(X(m0)) << " y1=" << Num(Y(ya)) << " x2=" << Num(X(m1))
      << " y2=" << Num(Y(yb)) << " " << style << "><title>" << t << "</title></line>";
  };
  std::vector<std::pair<std::string, std::string>> legend; // text, colour
  if (d.has_fit && m1 > m0) {
    line("fit", fit(m0), fit(m1), "stroke='#c0392b' stroke-width=2",
         "fitted slope " + Fmt("%.2f", d.slope));
    legend.push_back({"fit slope " + Fmt("%.2f", d.slope), "#c0392b"});
  }
  if (d.has_expected && m1 > m0) {
    line("expected", expected(m0), expected(m1),
         "stroke='#2471a3' stroke-width=2 stroke-dasharray='6 4'",
         "expected slope " + Fmt("%.2f", d.expected));
    legend.push_back({"expected " + Fmt("%.2f", d.expected), "#2471a3"});
  }
  if (model.size() > 1) {
    o << "<polyline class=model fill=none stroke='#1e8449' stroke-width=2 points='";
    for (auto [p, t] : model)
      o << Num(X(p)) << "," << Num(Y(t)) << " ";
    o << "'><title>" << HtmlEscape(d.model_label) << "</title></polyline>";
    legend.push_back({"model " + d.model_label, "#1e8449"});
  }
  for (auto [p, t] : most)
    o << "<rect class=ptmax x=" << Num(X(p) - 3.5) << " y=" << Num(Y(t) - 3.5)
      << " width=7 height=7 fill=none stroke='#7f8c8d' stroke-width=1.5><title>" << p
      << " ranks, slowest rank: " << Fmt("%.4f s", t) << "</title></rect>";
  if (!most.empty())
    legend.push_back({"squares: slowest rank", "#7f8c8d"});
  for (auto [p, t] : pts)
    o << "<circle class=pt cx=" << Num(X(p)) << " cy=" << Num(Y(t)) << " r=4 fill='#222'><title>"
      << p << " ranks: " << Fmt("%.4f s", t) << "</title></circle>";
  for (auto [p, t] : predicted)
    o << "<circle class=predicted cx=" << Num(X(p)) << " cy=" << Num(Y(t))
      << " r=4 fill=white stroke='#1e8449' stroke-width=2><title>predicted at " << p
      << " ranks: " << Fmt("%.4f s", t) << "</title></circle>";
  // The legend under the axes, where it covers no point.
  for (size_t i = 0; i < legend.size(); ++i)
    o << "<text class=legend x=" << L << " y=" << H + 14 * double(i) + 4 << " font-size=10 fill='"
      << legend[i].second << "'>" << HtmlEscape(legend[i].first) << "</text>";
  std::string svg = o.str() + "</svg>";
  // Room for the legend: the picture grows by its rows.
  const double full = H + 14 * double(legend.size()) + 4;
  std::ostringstream head;
  head << "<svg class='" << cls << "' id=" << id << " width=" << W << " height=" << full
       << " viewBox='0 0 " << W << " " << full << "' role=img>";
  svg = head.str() + svg.substr(svg.find('>') + 1);
  return svg;
}

std::string RankBars(const Run &run, const std::vector<double> &values, int culprit,
                     const std::string &unit, const std::string &cls) {
  const int n = int(values.size());
  const int per = std::max(1, (n + 63) / 64), cols = (n + per - 1) / per;
  const double W = 320, H = 80, L = 8, B = 16;
  std::vector<double> cell(cols, 0);
  std::vector<bool> hot(cols, false);
  double mx = 0;
  for (int i = 0; i < n; ++i) {
    cell[i / per] = std::max(cell[i / per], values[i]);
    hot[i / per] = hot[i / per] || run.ranks[i] == culprit;
    mx = std::max(mx, values[i]);
  }
  std::ostringstream o;
  o << "<svg class='bars " << cls << "' width=" << W << " height=" << H << " viewBox='0 0 " << W
    << " " << H << "' role=img>";
  const double bw = (W - 2 * L) / std::max(1, cols);
  for (int c = 0; c < cols; ++c) {
    double h = mx > 0 ? cell[c] / mx * (H - B - 6) : 0;
    int first = run.ranks[c * per], last = run.ranks[std::min(n, (c + 1) * per) - 1];
    o << "<rect class=bar x=" << Num(L + c * bw + 1) << " y=" << Num(H - B - h)
      << " width=" << Num(std::max(1.0, bw - 2)) << " height=" << Num(h) << " fill='"
      << (hot[c] ? "#c0392b" : "#7f8c8d") << "'><title>rank " << first
      << (last != first ? "-" + std::to_string(last) : "") << ": " << Fmt("%.4g ", cell[c])
      << HtmlEscape(unit) << "</title></rect>";
  }
  o << "<text x=" << L << " y=" << H - 3 << " font-size=10>rank " << run.ranks.front()
    << "</text><text x=" << W - L << " y=" << H - 3 << " font-size=10 text-anchor=end>rank "
    << run.ranks.back() << (per > 1 ? " (max of " + std::to_string(per) + " per bar)" : "")
    << "</text></svg>";
  return o.str();
}

} // namespace html
} // namespace scalana
