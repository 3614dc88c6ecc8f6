// The HTML report's PPG picture: the DOT BuildPpgPicture gives, laid out by
// Graphviz (a subprocess) and inlined as SVG, with the waiting edges it
// crosses listed under it; a table of the paths when Graphviz is missing,
// fails, or prints what the page must not hold.
#include "report/html_parts.h"
#include "report/report_common.h"

#include "report/bounded_subprocess.h"
#include "report/svg_check.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace scalana {
namespace html {

using namespace report_common;

namespace {

// Runs Graphviz on DOT (neato with the pinned positions BuildPpgPicture
// gives) under IN's time limit and the output bound, and checks what it
// printed as Graphviz SVG (svg_check.h). $SCALANA_DOT names the dot
// program; "dot" on PATH otherwise.
bool RunDot(const ReportInput &in, const std::string &dot, std::string *svg, std::string *why) {
  const char *env = std::getenv("SCALANA_DOT");
  std::string prog = env && *env ? env : "dot";
  // What the messages show of it: the name, cut.
  std::string shown = prog.size() > 200 ? prog.substr(0, 200) + "..." : prog;
  SubprocessLimits limits;
  limits.timeout_seconds = in.dot_timeout;
  limits.max_output_bytes = kMaxDotOutputBytes;
  SubprocessResult r = RunBoundedSubprocess({prog, "-Kneato", "-n2", "-Tsvg"}, dot, limits);
  if (r.end == SubprocessResult::End::NotStarted) {
    *why = r.start_errno == ENOENT
               ? "Graphviz '" + shown + "' was not found; install graphviz for the picture"
           : r.start_errno
               ? "Graphviz '" + shown + "' could not be run (" + std::strerror(r.start_errno) + ")"
               : r.error;
    return false;
  }
  if (!r.ok()) {
    std::string how = DescribeSubprocessEnd(r, limits);
    *why = "Graphviz '" + shown + "' " +
           (r.end == SubprocessResult::End::Exited ? "failed (" + how + ")" : how);
    return false;
  }
  std::string problem;
  if (!CheckGraphvizSvg(r.output, svg, &problem)) {
    *why = "Graphviz '" + shown + "' printed no SVG Graphviz writes (" + problem + ")";
    return false;
  }
  return true;
}

void WritePathTable(const ReportInput &in, size_t max_causes, const std::string &why,
                    std::ostream &out) {
  const DetectResult &r = in.result;
  out << "<p class=warn id=ppg-fallback>" << HtmlEscape(why)
      << ": the paths are shown as a table instead.</p>\n<table id=ppg-table><tr><th>cause"
         "</th><th>step</th><th>rank</th><th>vertex</th><th>where</th><th>via</th><th>wait s"
         "</th></tr>\n";
  for (size_t c = 0; c < r.root_causes.size() && c < max_causes; ++c) {
    size_t k = 0;
    for (const PathStep &ps : r.root_causes[c].path) {
      if (++k > 200)
        break;
      out << "<tr" << (ps.problematic ? " class=prob" : "") << "><td>" << c + 1 << "</td><td>" << k
          << "</td><td>" << ps.rank << "</td><td>" << HtmlEscape(Desc(in.psg, ps.vertex))
          << "</td><td>" << HtmlEscape(Where(in.psg, ps.vertex)) << "</td><td>"
          << HtmlEscape(ps.via) << "</td><td>" << Fmt("%.3f", ps.wait) << "</td></tr>\n";
    }
  }
  out << "</table>\n";
}

// The crossings' edges and waits: on the arrows they would cover node text,
// so they are listed here (and are each arrow's tooltip); a row links to its
// arrow, which the page's style then draws thicker.
void WriteCrossingLegend(const PpgPicture &pic, std::ostream &out) {
  if (pic.crossing_list.empty())
    return;
  out << "<details id=ppg-crossings open><summary>" << pic.crossing_list.size() << " waiting edge"
      << (pic.crossing_list.size() == 1 ? "" : "s")
      << " crossed (solid arrows)</summary><table><tr><th>cause</th><th>from (waiting)</th>"
         "<th>to (waited for)</th><th>edge</th><th>wait</th></tr>\n";
  for (const PpgCrossing &c : pic.crossing_list)
    out << "<tr><td>#" << c.cause + 1 << "</td><td><a href='#" << c.id << "'>" << HtmlEscape(c.from)
        << "</a></td><td>" << HtmlEscape(c.to) << "</td><td>" << HtmlEscape(c.via) << "</td><td>"
        << Fmt("%.3f s", c.wait) << "</td></tr>\n";
  out << "</table></details>\n";
}

} // namespace

void WritePpgSection(const ReportInput &in, size_t max_causes,
                     const std::function<std::string(VertexId)> &src_link, std::ostream &out) {
  const DetectResult &r = in.result;
  out << "<h2 id=graph>Program Performance Graph: backtracking paths ("
      << HtmlEscape(BigRun(in).label) << ")</h2>\n";
  if (r.root_causes.empty()) {
    out << "<p>no path to draw</p>\n";
    return;
  }
  PpgPicture pic = BuildPpgPicture(in, max_causes, 400, src_link);
  out << "<p>program order down, ranks across (ranks whose paths visit the same vertices share "
         "a column); arrows go from where time was lost back to its cause: solid where they "
         "cross to another rank over a waiting edge (listed under the picture), dashed within "
         "a rank. Red nodes are problematic (abnormal or non-scalable), the thick border marks "
         "the root cause; hover for values, click for the source. "
      << pic.nodes << " nodes on " << RankCount(int(pic.ranks)) << " in " << pic.columns
      << " column" << (pic.columns == 1 ? "" : "s") << ", " << pic.crossings << " crossings, "
      << pic.steps << " steps within a rank"
      << (pic.truncated ? "; paths cut at 400 nodes (the table of each cause has them all)" : "")
      << ".</p>\n";
  std::string svg, why;
  if (!RunDot(in, pic.dot, &svg, &why)) {
    // The page says why; the command, once (the report is still written).
    if (in.warnings)
      in.warnings->push_back("the HTML report has no PPG picture: " + why +
                             "; its paths are shown as a table instead");
    WritePathTable(in, max_causes, why, out);
    return;
  }
  out << "<div id=ppg data-nodes=" << pic.nodes << " data-crossings=" << pic.crossings << ">" << svg
      << "</div>\n";
  WriteCrossingLegend(pic, out);
}

} // namespace html
} // namespace scalana
