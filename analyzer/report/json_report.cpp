// The JSON sink of the detection results (docs/detect.md §6): every figure
// of the text report, as numbers, for machines.
#include "ppg/rank_time.h"
#include "report/async_report.h"
#include "report/model_scales.h"
#include "report/predict_report.h"
#include "report/report.h"
#include "report/report_common.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace scalana {

using namespace report_common;

namespace {

// The calls from the entry down to V (outermost first), each where it is
// made: what tells apart two contexts of one function's code.
nlohmann::json CallSitesJson(const Psg &psg, VertexId v) {
  nlohmann::json sites = nlohmann::json::array();
  for (const CallSite &c : psg.CallSites(v)) {
    if (c.loc.line == 0)
      continue; // the entry: called from nowhere in the program
    nlohmann::json site = nlohmann::json::object();
    site["function"] = c.function;
    site["file"] = c.loc.file;
    site["line"] = c.loc.line;
    sites.push_back(std::move(site));
  }
  return sites;
}

nlohmann::json StepJson(const ReportInput &in, const PathStep &ps) {
  const Vertex &x = in.psg.vertex(ps.vertex);
  return {{"kind", std::string(ToString(x.kind))},
          {"name", VertexName(in.psg, ps.vertex)},
          {"function", FunctionName(in.psg, ps.vertex)},
          {"file", FileOf(in.psg, ps.vertex)},
          {"line", x.loc.line},
          {"rank", ps.rank},
          {"time", ps.time},
          {"wait", ps.wait},
          {"via", ps.via},
          {"thread", ps.thread},
          {"problematic", ps.problematic}};
}

} // namespace

namespace {
// A rank list in the JSON: KEY holds at most kMaxJsonRanks of them (the
// lowest), KEY_count how many there are and KEY_ranges all of them as ranges
// ("0-3,7", cut past 4,096 characters), so a report of a million ranks stays
// small whatever it lists.
constexpr size_t kMaxJsonRanks = 256;
void PutRanks(nlohmann::json &obj, const std::string &key, std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  obj[key + "_count"] = ranks.size();
  obj[key + "_ranges"] = RankRanges(ranks, 4096);
  if (ranks.size() > kMaxJsonRanks)
    ranks.resize(kMaxJsonRanks);
  obj[key] = ranks;
}

// One cause as JSON: every figure of the text report's card.
nlohmann::json CauseJson(const ReportInput &in, const RootCause &rc) {
  using nlohmann::json;
  const Vertex &x = in.psg.vertex(rc.vertex);
  json path = json::array();
  for (const PathStep &ps : rc.path)
    path.push_back(StepJson(in, ps));
  json growth = json::object();
  if (rc.communication || !rc.growth.empty())
    growth["ranks"] = {rc.small_ranks, rc.big_ranks};
  for (const CommGrowth &g : rc.growth)
    growth[g.what] = {g.small, g.big};
  json ev = json::array();
  for (const CounterEvidence &e : rc.evidence)
    ev.push_back({{"counter", e.counter}, {"culprit", e.culprit}, {"median", e.median}});
  json cause = {{"file", FileOf(in.psg, rc.vertex)},
                {"line", x.loc.line},
                {"end_line", x.loc.end_line},
                {"kind", std::string(ToString(x.kind))},
                {"io", rc.io},
                {"name", VertexName(in.psg, rc.vertex)},
                {"function", FunctionName(in.psg, rc.vertex)},
                {"call_path", in.psg.CallPath(rc.vertex)},
                {"call_sites", CallSitesJson(in.psg, rc.vertex)},
                {"culprit_rank", rc.culprit_rank},
                {"culprit_thread", rc.culprit_thread},
                {"culprit", Culprit(rc)},
                {"thread_imbalance", rc.thread_imbalance},
                {"serial_fraction", rc.serial_fraction},
                {"thread_waits_caused", rc.thread_waits_caused},
                {"waiting_threads", rc.waiting_threads},
                {"score", rc.score},
                {"score_of", "cost over the busiest rank's measured time"},
                {"cost_seconds", rc.cost_seconds},
                {"cost_basis", rc.communication || rc.cost_is_growth ? "growth" : "over_median"},
                {"rank_time", rc.rank_time},
                {"rank_cpu_seconds", rc.rank_cpu},
                {"wall_time", rc.wall_time},
                {"saved_seconds", rc.saved_seconds},
                {"waits_caused", rc.waits_caused},
                {"waiting_ranks", rc.waiting_ranks},
                {"communication", rc.communication},
                {"comm_layer", rc.comm_layer},
                {"growth", growth},
                {"explanation", rc.explanation},
                {"culprit_time", rc.culprit_time},
                {"culprit_off_cpu", rc.culprit_off_cpu},
                {"median_time", rc.median_time},
                {"evidence_samples", rc.evidence_samples},
                {"signal_to_noise", rc.signal_to_noise},
                {"thin_data", rc.thin_data},
                {"contexts", rc.contexts},
                {"run_longer", rc.run_longer},
                {"abnormal", rc.abnormal},
                {"non_scalable", rc.non_scalable},
                {"alike_on_shared_cores", rc.alike_on_shared_cores},
                {"pmu", ev},
                {"bounds", rc.bounds},
                {"path", path}};
  PutRanks(cause, "ranks", rc.ranks);
  if (!rc.contention.empty())
    cause["contention"] = rc.contention;
  return cause;
}
} // namespace

void WriteJsonReport(const ReportInput &in, std::ostream &out) {
  using nlohmann::json;
  const DetectResult &r = in.result;
  json doc;
  doc["format"] = "scalana-detect";
  doc["version"] = 1;
  doc["binary"] = in.binary;
  // Where the structure came from: the wrappers' PSG, or the binary itself.
  doc["structure"] = {{"source", in.psg.structure_source().empty() ? "psg" : "binary"},
                      {"text", in.psg.structure_source()}};
  json runs = json::array();
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const Run &run = in.runs[i];
    runs.push_back({{"dir", run.label},
                    {"world_size", run.world_size},
                    {"ranks_present", run.nslots()},
                    {"total_time", run.total_time},
                    {"wall_time", run.meta.wall_time},
                    {"psg_id", run.meta.psg_id},
                    {"build_id", run.meta.build_id},
                    {"sampling_source", run.meta.sampling.source},
                    {"sampling_hz", run.meta.sampling.hz},
                    {"sampling_obtained_hz", run.obtained_rate},
                    {"counters_real", run.meta.sampling.counters_real},
                    {"contexts", run.contexts},
                    {"unresolved_contexts", run.unresolved_contexts},
                    {"unresolved_rows", run.unresolved_rows},
                    {"approximated_contexts", run.approximated_contexts},
                    {"approximated_rows", run.approximated_rows},
                    {"outside_seconds", run.outside_seconds},
                    {"unplaced_samples", run.unplaced_samples},
                    {"unplaced_ranks", run.unplaced_ranks},
                    {"unplaced_seconds", run.unplaced_seconds},
                    {"backtracked", i == r.backtrack_run}});
    PutTimeJson(runs.back(), SummariseTime(run));
    PutRanks(runs.back(), "missing_ranks", run.missing_ranks);
  }
  doc["runs"] = runs;
  doc["options"] = {
      {"abnorm_thd", in.options.abnorm_thd},
      {"merge", ToString(in.options.merge)},
      {"scaling", ToString(in.options.scaling)},
      {"scaling_used", ToString(r.scaling_used)},
      {"scaling_reason", r.scaling_reason},
      {"computation_slope", r.inference.vertices > 0 ? json(r.inference.median_slope) : json()},
      {"expected_slope", r.expected_slope},
      {"program_slope", r.program_slope_ok ? json(r.program_slope) : json()}};
  // The scales the models rest on, against Extra-P's minimum, and what to add.
  doc["model_scales"] = {{"scales", ScalesOf(in.runs)},
                         {"extrap_minimum", kExtrapMinScales},
                         {"add", ScalesToAdd(ScalesOf(in.runs))}};
  doc["warnings"] = r.warnings;
  json layers = json::array();
  for (const auto &[pattern, n] : r.comm_layer_vertices)
    layers.push_back({{"pattern", pattern}, {"vertices", n}});
  doc["comm_layers"] = layers;
  doc["hints"] = r.hints;
  // The same object in all three lists; a contention entry also says why
  // its growth is the machine's.
  for (const auto &[key, list] :
       {std::pair{"root_causes", &r.root_causes}, std::pair{"minor_causes", &r.minor_causes},
        std::pair{"contention", &r.contention}}) {
    json causes = json::array();
    for (const RootCause &rc : *list)
      causes.push_back(CauseJson(in, rc));
    doc[key] = causes;
  }
  doc["minor_share"] = in.options.minor_share;
  doc["minor_causes_count"] = r.minor_count;
  doc["contention_count"] = r.contention_count;
  // found: a cause clear of noise (or communication alone); inconclusive:
  // computation causes, all too thin to tell from noise; none.
  doc["verdict"] = r.root_causes.empty()    ? "none"
                   : r.inconclusive.empty() ? "found"
                                            : "inconclusive";
  if (!r.inconclusive.empty())
    doc["inconclusive"] = r.inconclusive;
  if (r.savings_sum > 0)
    doc["savings_overlap"] = {{"sum_seconds", r.savings_sum},
                              {"wall_seconds", r.savings_wall},
                              {"text", SavingsOverlapText(r)}};
  WriteHotSpotsJson(in, doc);
  json ns = json::array();
  for (const NonScalableVertex &n : r.non_scalable) {
    json merged = json::array();
    for (auto [p, t] : n.merged)
      merged.push_back({{"ranks", p}, {"time", t}});
    ns.push_back({{"file", FileOf(in.psg, n.vertex)},
                  {"line", in.psg.vertex(n.vertex).loc.line},
                  {"kind", std::string(ToString(in.psg.vertex(n.vertex).kind))},
                  {"name", VertexName(in.psg, n.vertex)},
                  {"function", FunctionName(in.psg, n.vertex)},
                  {"call_path", in.psg.CallPath(n.vertex)},
                  {"slope", n.slope},
                  {"expected_slope", n.expected},
                  {"share", n.share},
                  {"share_ahead", n.share_ahead},
                  {"score", n.score},
                  {"contexts", n.contexts},
                  {"merged", merged},
                  {"model", ModelJson(n.model)}});
  }
  doc["non_scalable"] = ns;
  json ab = json::array();
  for (const AbnormalVertex &a : r.abnormal)
    ab.push_back({{"run", in.runs[a.run].label},
                  {"file", FileOf(in.psg, a.vertex)},
                  {"line", in.psg.vertex(a.vertex).loc.line},
                  {"kind", std::string(ToString(in.psg.vertex(a.vertex).kind))},
                  {"name", VertexName(in.psg, a.vertex)},
                  {"function", FunctionName(in.psg, a.vertex)},
                  {"worst_rank", a.worst_rank},
                  {"worst_time", a.worst_time},
                  {"median", a.median},
                  {"excess", a.excess}});
  for (size_t i = 0; i < r.abnormal.size(); ++i)
    PutRanks(ab[i], "ranks", r.abnormal[i].ranks);
  doc["abnormal"] = ab;
  doc["prediction"] = PredictionJson(in);
  // ASCII only (\uXXXX): the same document, with nothing a terminal acts on;
  // invalid UTF-8 (directory names from the command line) becomes U+FFFD.
  out << doc.dump(1, ' ', true, json::error_handler_t::replace) << "\n";
}

} // namespace scalana
