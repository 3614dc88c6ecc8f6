// The HTML report's PPG picture: the DOT BuildPpgPicture gives, laid out by
// Graphviz (a subprocess) and inlined as SVG, with the waiting edges it
// crosses listed under it; a table of the paths when Graphviz is missing.
#include "detect/html_parts.h"
#include "detect/report_common.h"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace scalana {
namespace html {

using namespace report_common;

namespace {

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
  if (!RunDot(pic.dot, &svg, &why)) {
    WritePathTable(in, max_causes, why, out);
    return;
  }
  out << "<div id=ppg data-nodes=" << pic.nodes << " data-crossings=" << pic.crossings << ">"
      << InlineSvg(svg) << "</div>\n";
  WriteCrossingLegend(pic, out);
}

} // namespace html
} // namespace scalana
