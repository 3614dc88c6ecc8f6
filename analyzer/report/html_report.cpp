// The self-contained HTML report: one file, no network, every piece of
// program text escaped. The answer comes first (the root causes, what each
// costs and what a fix saves, their scaling plots), then the PPG picture,
// then the details. Pictures are inline SVG: the PPG laid out by Graphviz (a
// table when Graphviz is missing), plots and bars drawn here (html_*.cpp).
#include "report/cause_lists.h"
#include "report/html_parts.h"
#include "report/report.h"
#include "report/report_common.h"

#include <algorithm>
#include <set>

namespace scalana {

using namespace report_common;

namespace {

const char kStyle[] = R"(<style>
body{font-family:sans-serif;margin:1em 1.5em;color:#222}
h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.15em;border-bottom:1px solid #ccc;margin-top:1.2em}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ddd;padding:2px 6px}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto}.hit{background:#ffe08a}
.cause{border:1px solid #ccc;border-radius:4px;padding:.5em 1em;margin:.8em 0;display:flex;flex-wrap:wrap;gap:0 1.5em}
.cause .facts{flex:1 1 520px}.cause .rankbars{flex:1 1 100%}.meta{font-size:.9em;color:#444}
#cause-table td,#cause-table th{padding:3px 8px;vertical-align:top}#cause-table .where{font-family:monospace;font-weight:bold;white-space:nowrap}
.inconclusive{margin:.3em 0}#ppg g.edge:target path{stroke-width:6}
.heat td{width:14px;height:14px;padding:0}.warn{color:#a40}
.prob{font-weight:bold;color:#b00}details summary{cursor:pointer}
#ppg{overflow:auto;border:1px solid #ddd;max-height:80vh}
#ppg .ppgnode a{cursor:pointer}.fig{display:inline-block;vertical-align:top;margin:0 1em 1em 0}
.fig p{margin:.2em 0;font-size:.85em;max-width:420px}
#psgtree details{margin-left:1.2em}#psgtree .leaf{margin-left:2.4em}#psgtree>details{margin-left:0}
.pn.match{background:#ffe08a}.src:target{outline:2px solid #c0392b}
.timebar{display:flex;width:420px;height:14px;border:1px solid #ccc}.timebar span{height:100%}
.timelegend span{margin-right:.8em;font-size:.85em}.timelegend i{display:inline-block;width:.8em;height:.8em;margin-right:.2em}
</style>)";

// Filters the PSG tree: matching vertices highlighted, their ancestors opened.
// Runs at the end of the body, after the tree it searches.
const char kScript[] = R"(<script>
function psgSearch(q){q=q.trim().toLowerCase();var n=0;
document.querySelectorAll('#psgtree .pn').forEach(function(e){
var m=q.length>0&&e.dataset.s.indexOf(q)>=0;e.classList.toggle('match',m);
if(m){n++;for(var p=e.parentElement;p&&p.id!=='psgtree';p=p.parentElement)if(p.tagName==='DETAILS')p.open=true;}});
document.getElementById('psgcount').textContent=q?n+(n===1?' match':' matches'):'';}
// report.html#search=cg.c:145 opens the page with that search done.
(function(){var h=location.hash.match(/^#search=(.*)$/);if(!h)return;
var q=decodeURIComponent(h[1]);document.getElementById('psgsearch').value=q;psgSearch(q);})();
</script>)";

} // namespace

void WriteHtmlReport(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  out << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ScalAna report</title>\n"
      << kStyle << "\n</head><body>\n<h1>ScalAna scaling-loss report</h1>\n";
  // One line of context; the full run list and the model's reasons are below.
  std::set<int> scales;
  for (const Run &run : in.runs)
    scales.insert(run.world_size);
  std::string at;
  for (int p : scales)
    at += (at.empty() ? "" : ", ") + std::to_string(p);
  out << "<p class=meta><code>" << HtmlEscape(BaseName(in.binary)) << "</code>, " << in.runs.size()
      << (in.runs.size() == 1 ? " run" : " runs") << " at " << at << " ranks; "
      << ToString(r.scaling_used) << " scaling (expected slope " << Fmt("%.2f", r.expected_slope)
      << "), merge " << ToString(in.options.merge) << "; <a href=#runs>runs and model</a>";
  if (!r.warnings.empty())
    out << "; <a class=warn href=#runs>" << r.warnings.size() << " warning"
        << (r.warnings.size() == 1 ? "" : "s") << "</a>";
  out << "</p>\n";
  if (!in.psg.structure_source().empty())
    out << "<p class=warn>structure: " << HtmlEscape(in.psg.structure_source()) << "</p>\n";
  // A hint may change the answer (a communication layer to declare): above
  // the causes it would change.
  for (const std::string &h : r.hints)
    out << "<p class=warn>hint: " << HtmlEscape(h) << "</p>\n";

  // Sources: one pane per vertex on a drawn path, the PPG's nodes link here.
  std::vector<VertexId> src_vertices;
  auto want_source = [&](VertexId v) {
    if (src_vertices.size() < 60 &&
        std::find(src_vertices.begin(), src_vertices.end(), v) == src_vertices.end())
      src_vertices.push_back(v);
  };
  const size_t kCauses = 5, kPlots = 10;
  for (size_t c = 0; c < r.root_causes.size(); ++c)
    if (c < kCauses || src_vertices.size() < 60)
      want_source(r.root_causes[c].vertex);
  for (size_t c = 0; c < r.root_causes.size() && c < kCauses; ++c)
    for (const PathStep &ps : r.root_causes[c].path)
      want_source(ps.vertex);
  auto src_link = [&](VertexId v) {
    return std::find(src_vertices.begin(), src_vertices.end(), v) == src_vertices.end()
               ? std::string()
               : "#src-v" + std::to_string(v);
  };

  html::WriteTimeSection(in, out);
  html::WriteCauseSummary(in, out);
  html::WriteCauseDetails(in, kPlots, out);
  // After the cards: what is small or the machine's never stands between
  // the table and the causes it lists.
  WriteCauseListsHtml(in, out);
  html::WritePpgSection(in, kCauses, src_link, out);
  html::WriteRunsSection(in, out);
  html::WriteSources(in, src_vertices, out);
  html::WriteNonScalable(in, out);
  html::WriteHeatTable(in, out);
  html::WriteAbnormal(in, out);
  html::WritePsgTree(in, out);
  out << kScript << "\n</body></html>\n";
}

} // namespace scalana
