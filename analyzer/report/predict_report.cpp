// The prediction in the text and JSON reports.
#include "report/predict_report.h"
#include "report/report_common.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace scalana {

using namespace report_common;
using json = nlohmann::json;

namespace {

const VertexModel *ModelOf(const Prediction &pr, VertexId v) {
  for (const VertexModel &vm : pr.vertices)
    if (vm.vertex == v)
      return &vm;
  return nullptr;
}

std::string ModelLine(const ScalingModel &m) {
  if (!m.ok)
    return "no model (" + std::to_string(m.scales) + " scales; three or more needed)";
  return ModelText(m) + "  [" + m.Confidence() + " confidence: " + std::to_string(m.scales) +
         " scales, CV SMAPE " + Fmt("%.1f", 100 * m.cv_smape) + "%, adj. R^2 " +
         Fmt("%.2f", m.r2_adj) + "]";
}

} // namespace

std::vector<std::pair<double, double>> ModelCurve(const ScalingModel &m, double lo, double hi) {
  std::vector<std::pair<double, double>> out;
  if (!m.ok || !(lo > 0) || !(hi > lo))
    return out;
  for (int i = 0; i <= 40; ++i) {
    double p = lo * std::pow(hi / lo, i / 40.0), t = m.Eval(p);
    if (t > 0 && std::isfinite(t))
      out.push_back({p, t});
  }
  return out;
}

json ModelJson(const ScalingModel &m) {
  if (!m.ok)
    return {{"ok", false}, {"scales", m.scales}};
  json terms = json::array();
  for (size_t k = 0; k < m.terms.size(); ++k)
    terms.push_back(
        {{"coefficient", m.coeffs[k]},
         {"exponent", m.terms[k].Exponent()},
         {"exponent_text", std::to_string(m.terms[k].num) + "/" + std::to_string(m.terms[k].den)},
         {"log_exponent", m.terms[k].log_exp}});
  ModelTerm lead = m.Leading();
  return {{"ok", true},
          {"formula", ModelText(m)},
          {"constant", m.c0},
          {"terms", terms},
          {"leading", LeadingText(m)},
          {"leading_exponent", lead.Exponent()},
          {"leading_log_exponent", lead.log_exp},
          {"scales", m.scales},
          {"cv_smape", m.cv_smape},
          {"adjusted_r2", m.r2_adj},
          {"noise", m.noise},
          {"confidence", m.Confidence()}};
}

void WritePredictionText(const ReportInput &in, std::ostream &out) {
  const Prediction &pr = in.result.prediction;
  if (pr.ranks <= 0)
    return;
  out << "\n== Prediction at " << pr.ranks << " ranks ==\n";
  for (const std::string &n : pr.notes)
    out << "  note: " << Safe(n) << "\n";
  if (pr.vertices.empty()) {
    out << "  no vertex to model\n";
    return;
  }
  out << "  dominant at " << pr.ranks << " ranks: " << Safe(Where(in.psg, pr.dominant)) << "  "
      << Safe(Describe(in.psg, pr.dominant)) << ", " << Fmt("%.4g", pr.vertices[0].at_p)
      << " s on its busiest rank\n";
  if (pr.dominant != pr.dominant_measured)
    out << "  it overtakes " << Safe(Where(in.psg, pr.dominant_measured)) << "  "
        << Safe(Describe(in.psg, pr.dominant_measured)) << " (the largest now) at about "
        << Fmt("%.1f", pr.overtakes_at) << " ranks\n";
  else
    out << "  it is already the largest at the measured scales\n";
  out << "  vertices by modelled time at " << pr.ranks << " ranks (busiest rank):\n";
  size_t shown = 0;
  for (const VertexModel &vm : pr.vertices) {
    if (++shown > in.options.top)
      break;
    out << "    " << Fmt("%.4g", vm.at_p) << " s  " << Safe(Where(in.psg, vm.vertex)) << "  "
        << Safe(Describe(in.psg, vm.vertex)) << "\n      model: " << ModelLine(vm.model) << "\n";
  }
  if (!pr.causes.empty())
    out << "  root causes by what a fix saves at " << pr.ranks << " ranks:\n";
  for (const CausePrediction &cp : pr.causes) {
    const RootCause &rc = in.result.root_causes[cp.cause];
    out << "    #" << cp.cause + 1 << " " << Safe(Where(in.psg, rc.vertex)) << "  saves "
        << Fmt("%.4g", cp.saves_at_p) << " s (cost " << Fmt("%.4g", cp.own_at_p)
        << " s, waits it causes " << Fmt("%.4g", cp.waits_at_p) << " s; x" << Fmt("%.2f", cp.growth)
        << " from the largest run)\n";
  }
}

json PredictionJson(const ReportInput &in) {
  const Prediction &pr = in.result.prediction;
  if (pr.ranks <= 0)
    return nullptr;
  json verts = json::array();
  for (const VertexModel &vm : pr.vertices) {
    json pts = json::array();
    for (auto [p, t] : vm.points)
      pts.push_back({{"ranks", p}, {"time", t}});
    verts.push_back({{"file", FileOf(in.psg, vm.vertex)},
                     {"line", in.psg.vertex(vm.vertex).loc.line},
                     {"kind", std::string(ToString(in.psg.vertex(vm.vertex).kind))},
                     {"name", VertexName(in.psg, vm.vertex)},
                     {"function", FunctionName(in.psg, vm.vertex)},
                     {"call_path", in.psg.CallPath(vm.vertex)},
                     {"measured", pts},
                     {"model", ModelJson(vm.model)},
                     {"predicted", vm.at_p}});
  }
  json causes = json::array();
  for (const CausePrediction &cp : pr.causes)
    causes.push_back({{"cause", cp.cause + 1},
                      {"file", FileOf(in.psg, cp.vertex)},
                      {"line", in.psg.vertex(cp.vertex).loc.line},
                      {"growth", cp.growth},
                      {"cost", cp.own_at_p},
                      {"waits_caused", cp.waits_at_p},
                      {"saves", cp.saves_at_p}});
  auto where = [&](VertexId v) {
    return json{{"file", FileOf(in.psg, v)},
                {"line", in.psg.vertex(v).loc.line},
                {"name", VertexName(in.psg, v)}};
  };
  return {{"ranks", pr.ranks},
          {"dominant", pr.dominant == kNoVertex ? json(nullptr) : where(pr.dominant)},
          {"dominant_measured",
           pr.dominant_measured == kNoVertex ? json(nullptr) : where(pr.dominant_measured)},
          {"overtakes_at", pr.overtakes_at},
          {"vertices", verts},
          {"causes", causes},
          {"notes", pr.notes}};
}

} // namespace scalana
