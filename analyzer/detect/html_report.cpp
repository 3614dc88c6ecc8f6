// The self-contained HTML report: one file, no network, every piece of
// program text escaped. Pictures are inline SVG: the PPG laid out by Graphviz
// (a table when Graphviz is missing), plots and bars drawn here.
#include "detect/names.h"
#include "detect/report.h"
#include "detect/report_common.h"

#include "scalana/text_escape.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <set>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace scalana {

using namespace report_common;

namespace {

std::string Desc(const Psg &psg, VertexId v) { return ReadableName(Describe(psg, v), 160); }

// Runs Graphviz on DOT (neato with the pinned positions BuildPpgPicture
// gives). $SCALANA_DOT names the dot program; "dot" on PATH otherwise.
bool RunDot(const std::string &dot, std::string *svg, std::string *why) {
  const char *env = std::getenv("SCALANA_DOT");
  std::string prog = env && *env ? env : "dot";
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  std::string in_path = dir + "/scalana-ppg-XXXXXX", out_path = dir + "/scalana-svg-XXXXXX";
  int in_fd = mkstemp(&in_path[0]);
  if (in_fd < 0) {
    *why = "cannot create a temporary file in " + dir;
    return false;
  }
  int out_fd = mkstemp(&out_path[0]);
  if (out_fd < 0) {
    ::close(in_fd);
    ::unlink(in_path.c_str());
    *why = "cannot create a temporary file in " + dir;
    return false;
  }
  bool ok = ::write(in_fd, dot.data(), dot.size()) == ssize_t(dot.size());
  ::close(in_fd);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args{prog, "-Kneato", "-n2", "-Tsvg"};
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(&a[0]);
  argv.push_back(nullptr);
  pid_t pid = -1;
  int status = 0;
  if (ok && posix_spawnp(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ) == 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok)
      *why = prog + " failed (" +
             (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                : std::string("killed")) +
             ")";
  } else {
    ok = false;
    *why = "Graphviz '" + prog + "' was not found; install graphviz for the picture";
  }
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_fd);
  if (ok) {
    std::ifstream f(out_path);
    std::stringstream ss;
    ss << f.rdbuf();
    *svg = ss.str();
    ok = svg->find("<svg") != std::string::npos;
    if (!ok)
      *why = prog + " wrote no SVG";
  }
  ::unlink(in_path.c_str());
  ::unlink(out_path.c_str());
  return ok;
}

// Graphviz's SVG inline in HTML: from <svg on, without the namespace
// declarations (the page names no external resource) and comments.
std::string InlineSvg(const std::string &svg) {
  std::string s = svg.substr(svg.find("<svg"));
  for (const char *attr :
       {" xmlns=\"http://www.w3.org/2000/svg\"", " xmlns:xlink=\"http://www.w3.org/1999/xlink\""}) {
    size_t p = s.find(attr);
    if (p != std::string::npos)
      s.erase(p, std::string(attr).size());
  }
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 4, "<!--") == 0) {
      size_t e = s.find("-->", i);
      i = e == std::string::npos ? s.size() : e + 3;
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::string Num(double x) { return Fmt("%.1f", x); }

// "0.012 s", "3.4 s": tick labels.
std::string Seconds(double s) { return Fmt(s < 0.1 ? "%.3g s" : "%.2f s", s); }

// Log-log plot of one non-scalable vertex: the merged time per run, the
// fitted line and the line of the expected slope through the smallest run.
std::string ScalingPlot(const NonScalableVertex &ns, size_t index) {
  const double W = 360, H = 230, L = 64, R = 12, T = 14, B = 40;
  std::vector<std::pair<double, double>> pts;
  for (const auto &[p, t] : ns.merged)
    if (p > 0 && t > 0)
      pts.push_back({double(p), t});
  std::ostringstream o;
  o << "<svg class=plot id=plot" << index << " width=" << W << " height=" << H << " viewBox='0 0 "
    << W << " " << H << "' role=img>";
  if (pts.empty())
    return o.str() + "<text x=10 y=20>no positive times to plot</text></svg>";
  double p0 = pts[0].first, p1 = pts[0].first, y0 = pts[0].second, y1 = pts[0].second;
  for (auto [p, t] : pts) {
    p0 = std::min(p0, p), p1 = std::max(p1, p);
    y0 = std::min(y0, t), y1 = std::max(y1, t);
  }
  auto fit = [&](double p) { return std::exp(ns.intercept + ns.slope * std::log(p)); };
  // The expected line starts where the fit starts.
  auto expected = [&](double p) { return fit(p0) * std::pow(p / p0, ns.expected); };
  for (double p : {p0, p1})
    for (double y : {fit(p), expected(p)})
      if (y > 0 && std::isfinite(y))
        y0 = std::min(y0, y), y1 = std::max(y1, y);
  double lx0 = std::log(p0) - 0.15, lx1 = std::log(p1) + 0.15;
  double ly0 = std::log(y0) - 0.2, ly1 = std::log(y1) + 0.2;
  auto X = [&](double p) { return L + (std::log(p) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto Y = [&](double y) { return H - B - (std::log(y) - ly0) / (ly1 - ly0) * (H - T - B); };
  o << "<rect x=" << L << " y=" << T << " width=" << W - L - R << " height=" << H - T - B
    << " fill=none stroke='#999'/>";
  std::set<double> ticks;
  for (auto [p, t] : pts)
    ticks.insert(p);
  for (double p : ticks)
    o << "<text class=tick x=" << Num(X(p)) << " y=" << H - B + 14
      << " text-anchor=middle font-size=10>" << p << "</text>";
  for (double y : {y0, std::sqrt(y0 * y1), y1})
    o << "<text class=tick x=" << L - 4 << " y=" << Num(Y(y) + 3)
      << " text-anchor=end font-size=10>" << Seconds(y) << "</text>";
  o << "<text x=" << (W + L) / 2 << " y=" << H - 6
    << " text-anchor=middle font-size=11>ranks (log)</text>"
    << "<text x=12 y=" << (H - B + T) / 2 << " font-size=11 transform='rotate(-90 12 "
    << (H - B + T) / 2 << ")' text-anchor=middle>seconds (log)</text>";
  o << "<line class=fit x1=" << Num(X(p0)) << " y1=" << Num(Y(fit(p0))) << " x2=" << Num(X(p1))
    << " y2=" << Num(Y(fit(p1))) << " stroke='#c0392b' stroke-width=2><title>fitted slope "
    << Fmt("%.2f", ns.slope) << "</title></line>";
  o << "<line class=expected x1=" << Num(X(p0)) << " y1=" << Num(Y(expected(p0)))
    << " x2=" << Num(X(p1)) << " y2=" << Num(Y(expected(p1)))
    << " stroke='#2471a3' stroke-width=2 stroke-dasharray='6 4'><title>expected slope "
    << Fmt("%.2f", ns.expected) << "</title></line>";
  for (auto [p, t] : pts)
    o << "<circle class=pt cx=" << Num(X(p)) << " cy=" << Num(Y(t)) << " r=4 fill='#222'><title>"
      << p << " ranks: " << Fmt("%.4f s", t) << "</title></circle>";
  o << "<text x=" << L + 6 << " y=" << T + 14 << " font-size=10 fill='#c0392b'>fit slope "
    << Fmt("%.2f", ns.slope) << "</text><text x=" << L + 6 << " y=" << T + 26
    << " font-size=10 fill='#2471a3'>expected " << Fmt("%.2f", ns.expected) << "</text></svg>";
  return o.str();
}

// Bars of one value per rank slot of RUN (max per bucket past 64 ranks);
// the culprit rank's bar is red.
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

const char kStyle[] = R"(<style>
body{font-family:sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ccc;margin-top:1.5em}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ddd;padding:2px 6px}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto}.hit{background:#ffe08a}
.cause{border:1px solid #ccc;border-radius:4px;padding:.5em 1em;margin:.8em 0}
.heat td{width:14px;height:14px;padding:0}.warn{color:#a40}
.prob{font-weight:bold;color:#b00}details summary{cursor:pointer}
#ppg{overflow:auto;border:1px solid #ddd;max-height:80vh}
#ppg .ppgnode a{cursor:pointer}.fig{display:inline-block;vertical-align:top;margin:0 1em 1em 0}
.fig p{margin:.2em 0;font-size:.85em;max-width:420px}
#psgtree details{margin-left:1.2em}#psgtree .leaf{margin-left:2.4em}#psgtree>details{margin-left:0}
.pn.match{background:#ffe08a}.src:target{outline:2px solid #c0392b}
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
  const Run &big = BigRun(in);
  out << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ScalAna report</title>\n"
      << kStyle << "\n</head><body>\n<h1>ScalAna scaling-loss report</h1>\n";
  out << "<p>binary <code>" << HtmlEscape(in.binary) << "</code>; runs:";
  for (const Run &run : in.runs)
    out << " <code>" << HtmlEscape(run.label) << "</code> (" << RankCount(run.world_size) << ", "
        << Fmt("%.3f", run.total_time) << " s)";
  out << "; merge " << ToString(in.options.merge) << ", scaling " << ToString(in.options.scaling)
      << ", expected slope " << Fmt("%.2f", r.expected_slope) << "</p>\n";
  if (!r.scaling_reason.empty())
    out << "<p>" << HtmlEscape(r.scaling_reason) << "</p>\n";
  for (const std::string &w : r.warnings)
    out << "<p class=warn>warning: " << HtmlEscape(w) << "</p>\n";

  // Sources: one pane per vertex on a drawn path, the PPG's nodes link here.
  std::vector<VertexId> src_vertices;
  auto want_source = [&](VertexId v) {
    if (src_vertices.size() < 60 &&
        std::find(src_vertices.begin(), src_vertices.end(), v) == src_vertices.end())
      src_vertices.push_back(v);
  };
  const size_t kCauses = 5;
  for (size_t c = 0; c < r.root_causes.size() && c < kCauses; ++c)
    want_source(r.root_causes[c].vertex);
  for (size_t c = 0; c < r.root_causes.size() && c < kCauses; ++c)
    for (const PathStep &ps : r.root_causes[c].path)
      want_source(ps.vertex);
  auto src_link = [&](VertexId v) {
    return std::find(src_vertices.begin(), src_vertices.end(), v) == src_vertices.end()
               ? std::string()
               : "#src-v" + std::to_string(v);
  };

  // The PPG picture.
  out << "<h2>Program Performance Graph: backtracking paths (" << HtmlEscape(big.label)
      << ")</h2>\n";
  if (r.root_causes.empty()) {
    out << "<p>no path to draw</p>\n";
  } else {
    PpgPicture pic = BuildPpgPicture(in, kCauses, 400, src_link);
    std::string svg, why;
    out << "<p>ranks across, program order down; arrows go from where time was lost back to "
           "its cause, solid where they cross to another rank over a waiting edge (labelled "
           "with the edge and its wait), dashed within a rank; red nodes are problematic "
           "(abnormal or non-scalable), the thick border marks the root cause. Click a node "
           "for its source. "
        << pic.nodes << " nodes, " << pic.crossings << " crossings, " << pic.steps
        << " steps within a rank"
        << (pic.truncated ? "; paths cut at 400 nodes (the table of each cause has them all)" : "")
        << ".</p>\n";
    if (RunDot(pic.dot, &svg, &why)) {
      out << "<div id=ppg data-nodes=" << pic.nodes << " data-crossings=" << pic.crossings << ">"
          << InlineSvg(svg) << "</div>\n";
    } else {
      out << "<p class=warn id=ppg-fallback>" << HtmlEscape(why)
          << ": the paths are shown as a table instead.</p>\n<table id=ppg-table><tr><th>cause"
             "</th><th>step</th><th>rank</th><th>vertex</th><th>where</th><th>via</th><th>wait s"
             "</th></tr>\n";
      for (size_t c = 0; c < r.root_causes.size() && c < kCauses; ++c) {
        size_t k = 0;
        for (const PathStep &ps : r.root_causes[c].path) {
          if (++k > 200)
            break;
          out << "<tr" << (ps.problematic ? " class=prob" : "") << "><td>" << c + 1 << "</td><td>"
              << k << "</td><td>" << ps.rank << "</td><td>" << HtmlEscape(Desc(in.psg, ps.vertex))
              << "</td><td>" << HtmlEscape(Where(in.psg, ps.vertex)) << "</td><td>"
              << HtmlEscape(ps.via) << "</td><td>" << Fmt("%.3f", ps.wait) << "</td></tr>\n";
        }
      }
      out << "</table>\n";
    }
  }

  out << "<h2>Root causes</h2>\n";
  if (r.root_causes.empty())
    out << "<p>none found</p>\n";
  if (!r.inconclusive.empty())
    out << "<p><b>" << HtmlEscape(r.inconclusive) << "</b></p>\n";
  int n = 0;
  for (const RootCause &rc : r.root_causes) {
    const Vertex &x = in.psg.vertex(rc.vertex);
    out << "<div class=cause id=cause" << ++n << "><b>#" << n << " " << ToString(x.kind)
        << " at <a href='#src-v" << rc.vertex << "'><code>" << HtmlEscape(Where(in.psg, rc.vertex))
        << "</code></a></b> in <code>" << HtmlEscape(FunctionName(in.psg, rc.vertex))
        << "</code> &mdash; " << Fmt("%.3f", rc.cost_seconds) << " s ("
        << Fmt("%.1f", 100 * rc.score) << "%), ranks " << HtmlEscape(RankList(rc.ranks))
        << "<br>call path: <code>";
    out << HtmlEscape(JoinPath(CallSites(in.psg, rc.vertex))) << "</code><br>";
    // The same figures as the text report: what the cost is of, what a fix
    // gives back, and for communication what grew.
    out << "cost: " << Fmt("%.3f", rc.cost_seconds) << " s on rank " << rc.culprit_rank
        << " of its measured " << Fmt("%.3f", rc.rank_time) << " s (wall time "
        << Fmt("%.3f", rc.wall_time) << " s); if fixed: ";
    if (rc.saved_seconds > 0)
      out << "about " << Fmt("%.3f", rc.saved_seconds) << " s less wall time";
    else
      out << "no wall time saved (off the critical path)";
    if (rc.waiting_ranks > 0)
      out << ", " << Fmt("%.3f", rc.waits_caused) << " s of waiting on "
          << HtmlEscape(RankCount(rc.waiting_ranks)) << " traced to it";
    out << "<br>";
    if (rc.communication)
      out << "communication that no computation explains: " << HtmlEscape(rc.explanation) << "<br>";
    if (rc.thin_data)
      out << "thin data: " << Fmt("%.1f", rc.signal_to_noise)
          << " standard deviations; a run about " << Fmt("%.0f", rc.run_longer)
          << "x longer would settle it<br>";
    for (const CounterEvidence &e : rc.evidence)
      out << HtmlEscape(e.counter) << ": " << Fmt("%.3g", e.culprit) << " vs median "
          << Fmt("%.3g", e.median) << "; ";
    out << "<details><summary>backtracking path (" << rc.path.size()
        << " steps)</summary><table><tr><th>kind</th><th>name</th><th>rank</th><th>where</th>"
           "<th>time s</th><th>via</th><th>wait s</th></tr>";
    size_t shown = 0;
    for (const PathStep &ps : rc.path) {
      if (++shown > 500) {
        out << "<tr><td colspan=7>... " << rc.path.size() - 500 << " more steps</td></tr>";
        break;
      }
      out << "<tr" << (ps.problematic ? " class=prob" : "") << "><td>"
          << ToString(in.psg.vertex(ps.vertex).kind) << "</td><td>"
          << HtmlEscape(VertexName(in.psg, ps.vertex)) << "</td><td>" << ps.rank << "</td><td>"
          << HtmlEscape(Where(in.psg, ps.vertex)) << "</td><td>" << Fmt("%.3f", ps.time)
          << "</td><td>" << HtmlEscape(ps.via) << "</td><td>" << Fmt("%.3f", ps.wait)
          << "</td></tr>";
    }
    out << "</table></details>\n";

    // Per-rank bars of the vertices on the path, in the run walked.
    std::vector<VertexId> on_path{rc.vertex};
    for (const PathStep &ps : rc.path)
      if (on_path.size() < 6 &&
          std::find(on_path.begin(), on_path.end(), ps.vertex) == on_path.end())
        on_path.push_back(ps.vertex);
    out << "<details class=rankbars" << (n == 1 ? " open" : "")
        << "><summary>per-rank time of the vertices on the path</summary>";
    for (VertexId v : on_path) {
      const VertexSeries *s = big.Find(v);
      if (!s || big.nslots() == 0)
        continue;
      std::vector<double> t(big.nslots());
      for (int i = 0; i < big.nslots(); ++i)
        t[i] = ExclusiveTime(in.psg, *s, i);
      if (*std::max_element(t.begin(), t.end()) <= 0)
        continue; // nothing measured there: no picture to show
      out << "<div class=fig><p>time per rank: " << HtmlEscape(Desc(in.psg, v)) << " <code>"
          << HtmlEscape(Where(in.psg, v)) << "</code></p>"
          << RankBars(big, t, rc.culprit_rank, "s", "time") << "</div>";
      // Counters, where the run has them (the root cause's vertex only).
      const auto &names = big.meta.sampling.counters;
      if (v != rc.vertex || names.empty() || s->counters.size() != names.size() * big.nslots())
        continue;
      for (size_t c = 0; c < names.size(); ++c) {
        std::vector<double> vals(big.nslots());
        for (int i = 0; i < big.nslots(); ++i)
          vals[i] = s->counters[size_t(i) * names.size() + c];
        out << "<div class=fig><p>" << HtmlEscape(names[c]) << " per rank</p>"
            << RankBars(big, vals, rc.culprit_rank, names[c], "counter") << "</div>";
      }
    }
    out << "</details></div>\n";
  }

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

  out << "<h2>Non-scalable vertices</h2>\n";
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
        << "</p>" << ScalingPlot(ns, k++) << "</div>\n";
  }

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

  out << "<h2>Abnormal vertices</h2>\n<table><tr><th>run</th><th>where</th><th>vertex"
         "</th><th>ranks</th><th>worst</th><th>median</th></tr>\n";
  size_t shown = 0;
  for (const AbnormalVertex &ab : r.abnormal) {
    if (++shown > 200)
      break;
    out << "<tr><td>" << HtmlEscape(in.runs[ab.run].label) << "</td><td>"
        << HtmlEscape(Where(in.psg, ab.vertex)) << "</td><td>"
        << HtmlEscape(Desc(in.psg, ab.vertex)) << "</td><td>" << HtmlEscape(RankList(ab.ranks, 8))
        << "</td><td>rank " << ab.worst_rank << ": " << Fmt("%.3f", ab.worst_time) << " s</td><td>"
        << Fmt("%.3f", ab.median) << " s</td></tr>\n";
  }
  out << "</table>\n";

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
  out << kScript << "\n</body></html>\n";
}

} // namespace scalana
