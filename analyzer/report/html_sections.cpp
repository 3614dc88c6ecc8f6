// The HTML report's detail sections, after the answer and the picture:
// the runs and the scaling model, sources, non-scalable vertices, per-rank
// heat, abnormal vertices and the searchable PSG.
#include "report/html_parts.h"
#include "report/model_scales.h"
#include "report/names.h"
#include "report/report_common.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace scalana {
namespace html {

using namespace report_common;

std::string Desc(const Psg &psg, VertexId v) { return ReadableName(Describe(psg, v), 160); }

namespace {

// One <details> per PSG vertex with data in RUN, children in execution order.
void PsgTree(const ReportInput &in, const Run &run, VertexId v, int depth, size_t *budget,
             std::ostream &out) {
  const VertexSeries *s = run.Find(v);
  if (!s || *budget == 0)
    return;
  --*budget;
  double inc = 0, exc = 0;
  for (int i = 0; i < run.nslots(); ++i) {
    inc = std::max(inc, InclusiveTime(*s, i));
    exc = std::max(exc, ExclusiveTime(in.psg, *s, i));
  }
  const Vertex &x = in.psg.vertex(v);
  std::string file = FileOf(in.psg, v), fn = FunctionName(in.psg, v);
  std::string key = file + " " + fn + " " + VertexName(in.psg, v) + " " + BaseName(file) + ":" +
                    std::to_string(x.loc.line);
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  std::ostringstream label;
  label << "<span class=pn data-s=\"" << HtmlEscape(key) << "\"><b>" << ToString(x.kind) << "</b> "
        << HtmlEscape(VertexName(in.psg, v)) << " <code>"
        << HtmlEscape(BaseName(file) + ":" + std::to_string(x.loc.line)) << "</code> incl "
        << Fmt("%.3f", inc) << " s, excl " << Fmt("%.3f", exc) << " s</span>";
  bool has_children = false;
  for (VertexId c : x.children)
    has_children = has_children || run.Find(c);
  if (!has_children) {
    out << "<div class=leaf>" << label.str() << "</div>\n";
    return;
  }
  out << "<details" << (depth < 2 ? " open" : "") << "><summary>" << label.str() << "</summary>\n";
  for (VertexId c : x.children)
    PsgTree(in, run, c, depth + 1, budget, out);
  out << "</details>\n";
}

} // namespace

void WriteRunsSection(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  out << "<h2 id=runs>Runs and scaling model</h2>\n<p>binary <code>" << HtmlEscape(in.binary)
      << "</code>; runs:";
  for (const Run &run : in.runs)
    out << " <code>" << HtmlEscape(run.label) << "</code> (" << RankCount(run.world_size) << ", "
        << HtmlEscape(MeasuredText(run)) << ")";
  out << "; merge " << ToString(in.options.merge) << ", scaling " << ToString(in.options.scaling)
      << ", expected slope " << Fmt("%.2f", r.expected_slope) << "</p>\n";
  if (!r.scaling_reason.empty())
    out << "<p>" << HtmlEscape(r.scaling_reason) << "</p>\n";
  if (std::string few = FewScalesText(in.runs); !few.empty())
    out << "<p class=warn id=few-scales>" << HtmlEscape(few) << "</p>\n";
  for (const auto &[pattern, n] : r.comm_layer_vertices)
    out << "<p>communication layer: <code>" << HtmlEscape(pattern) << "</code> (" << n
        << " vertices; their time counts as waiting)</p>\n";
  for (const std::string &w : r.warnings)
    out << "<p class=warn>warning: " << HtmlEscape(w) << "</p>\n";
}

void WriteSources(const ReportInput &in, const std::vector<VertexId> &src_vertices,
                  std::ostream &out) {
  out << "<h2>Sources</h2>\n";
  for (VertexId v : src_vertices) {
    const Vertex &x = in.psg.vertex(v);
    bool found = false;
    auto lines = SourceSnippet(FileOf(in.psg, v), x.loc.line, 4, SourceDirsOf(in, v), &found);
    out << "<div class=src id=src-v" << v << "><b>" << HtmlEscape(Where(in.psg, v)) << "</b> "
        << HtmlEscape(Desc(in.psg, v));
    if (found) {
      out << "<pre>";
      for (const std::string &l : lines)
        out << (l.size() > 5 && l[5] == '>' ? "<span class=hit>" : "<span>") << HtmlEscape(l)
            << "</span>\n";
      out << "</pre>";
    } else {
      out << "<p>source: " << HtmlEscape(NotFound(in, v)) << "</p>";
    }
    out << "</div>\n";
  }
}

void WriteNonScalable(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  out << "<h2 id=nonscalable>Non-scalable vertices</h2>\n";
  if (r.non_scalable.empty())
    out << "<p>none found</p>\n";
  size_t k = 0;
  for (const NonScalableVertex &ns : r.non_scalable) {
    out << "<div class=fig><p><b>" << HtmlEscape(Desc(in.psg, ns.vertex)) << "</b> <code>"
        << HtmlEscape(Where(in.psg, ns.vertex)) << "</code>"
        << (ns.contexts > 1
                ? " (the line, summed over its " + std::to_string(ns.contexts) + " contexts)"
                : std::string())
        << "<br>slope " << Fmt("%.2f", ns.slope) << " (expected " << Fmt("%.2f", ns.expected)
        << "), " << Fmt("%.1f%%", 100 * ns.share) << " of the time, score " << Fmt("%.3f", ns.score)
        << "</p>" << ScalingPlot(PlotDataOf(ns), "plot" + std::to_string(k++), "plot")
        << "</div>\n";
  }
}

void WriteHeatTable(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  const Run &big = BigRun(in);
  // Per-rank heat table of the top vertices in the largest run. Wide runs are
  // bucketed (max per bucket) so the page stays small at any scale.
  std::vector<VertexId> top;
  auto add = [&](VertexId v) {
    if (top.size() < 16 && std::find(top.begin(), top.end(), v) == top.end() && big.Find(v))
      top.push_back(v);
  };
  for (const RootCause &rc : r.root_causes)
    add(rc.vertex);
  for (const NonScalableVertex &ns : r.non_scalable)
    add(ns.vertex);
  for (const AbnormalVertex &ab : r.abnormal)
    if (ab.run == r.backtrack_run)
      add(ab.vertex);
  // At most 128 columns: `per` ranks to a cell, and as many cells as that needs.
  const int per = std::max(1, (big.nslots() + 127) / 128);
  const int cols = (big.nslots() + per - 1) / per;
  out << "<h2>Per-rank time of the top vertices (" << HtmlEscape(big.label) << ")</h2>\n";
  if (cols > 0 && !top.empty()) {
    out << "<p>" << (per > 1 ? "each cell: max over " + std::to_string(per) + " ranks; " : "")
        << "darker = slower relative to the row's maximum; hover for values</p>"
        << "<table class=heat><tr><th>vertex</th>";
    for (int c = 0; c < cols; c += 8)
      out << "<th colspan=" << std::min(8, cols - c) << " style='text-align:left'>"
          << big.ranks[c * per] << "</th>";
    out << "</tr>\n";
    for (VertexId v : top) {
      const VertexSeries &s = *big.Find(v);
      std::vector<double> cell(cols, 0);
      double mx = 0;
      for (int i = 0; i < big.nslots(); ++i) {
        double t = ExclusiveTime(in.psg, s, i);
        cell[i / per] = std::max(cell[i / per], t);
        mx = std::max(mx, t);
      }
      out << "<tr><td style='width:auto;padding:0 6px'>" << HtmlEscape(Where(in.psg, v)) << " "
          << HtmlEscape(Desc(in.psg, v)) << "</td>";
      for (int c = 0; c < cols; ++c) {
        int shade = mx > 0 ? int(255 - 200 * cell[c] / mx) : 255;
        out << "<td title='rank " << big.ranks[std::min(c * per, big.nslots() - 1)] << ": "
            << Fmt("%.4f", cell[c]) << " s' style='background:rgb(255," << shade << "," << shade
            << ")'></td>";
      }
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
}

void WriteAbnormal(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  out << "<h2>Abnormal vertices</h2>\n<table><tr><th>run</th><th>where</th><th>vertex"
         "</th><th>ranks</th><th>worst</th><th>median</th></tr>\n";
  size_t shown = 0;
  for (const AbnormalVertex &ab : r.abnormal) {
    if (++shown > 200)
      break;
    out << "<tr><td>" << HtmlEscape(in.runs[ab.run].label) << "</td><td>"
        << HtmlEscape(Where(in.psg, ab.vertex)) << "</td><td>"
        << HtmlEscape(Desc(in.psg, ab.vertex)) << "</td><td>"
        << HtmlEscape(RankRanges(ab.ranks, 40)) << "</td><td>rank " << ab.worst_rank << ": "
        << Fmt("%.3f", ab.worst_time) << " s</td><td>" << Fmt("%.3f", ab.median)
        << " s</td></tr>\n";
  }
  out << "</table>\n";
}

void WritePsgTree(const ReportInput &in, std::ostream &out) {
  const Run &big = BigRun(in);
  // The PSG with the largest run's times, searchable.
  const size_t kTreeVertices = 4000;
  size_t budget = kTreeVertices;
  out << "<h2>Program Structure Graph (" << HtmlEscape(big.label)
      << ", max over ranks)</h2>\n<p><input id=psgsearch type=search size=40 placeholder='file, "
         "function or line' oninput='psgSearch(this.value)'> <span id=psgcount></span></p>\n"
         "<div id=psgtree>\n";
  if (in.psg.root() != kNoVertex)
    PsgTree(in, big, in.psg.root(), 0, &budget, out);
  out << "</div>\n";
  if (budget == 0)
    out << "<p>tree cut at " << kTreeVertices << " vertices</p>\n";
}

} // namespace html
} // namespace scalana
