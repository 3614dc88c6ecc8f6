#include "detect/report_common.h"
#include "detect/names.h"

#include "scalana/text_escape.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace scalana {
namespace report_common {

std::string FileOf(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  if (!x.loc.file.empty())
    return x.loc.file;
  if (x.function >= 0)
    return psg.FunctionOf(v).loc.file;
  return "";
}

// Names as a reader wrote them: flang's program unit is main (Psg), C++
// names demangled with long template arguments elided (Kripke's RAJA
// instances run to 40,000 characters).
std::string FunctionName(const Psg &psg, VertexId v) {
  if (psg.vertex(v).function < 0)
    return "";
  return ReadableName(psg.FunctionName(v));
}

std::string BaseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The calls from the entry down to V, each with the line it is made from:
// "main > Dot (cg.c:145)". The same function called from two places gives
// two vertices at the same line; this is what tells them apart. The same
// steps as the JSON's call_path (Psg::CallSites).
std::vector<std::string> CallSites(const Psg &psg, VertexId v) {
  std::vector<std::string> parts;
  for (const CallSite &c : psg.CallSites(v))
    parts.push_back(c.loc.line == 0 ? ReadableName(c.function)
                                    : ReadableName(c.function) + " (" + BaseName(c.loc.file) + ":" +
                                          std::to_string(c.loc.line) + ")");
  return parts;
}

std::string VertexName(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  switch (x.kind) {
  case VertexKind::Mpi:
    return x.label;
  case VertexKind::Call: {
    if (!x.label.empty() && x.label != "?") // direct, or a target bound under its site
      return ReadableName(x.label);
    // The site of a call through a pointer: its targets, when few.
    std::vector<std::string> targets = psg.CandidatesOf(v);
    if (targets.empty() || targets.size() > 3)
      return "(indirect)";
    std::string s = "(indirect: ";
    for (size_t i = 0; i < targets.size(); ++i)
      s += (i ? " | " : "") + ReadableName(targets[i]);
    return s + ")";
  }
  case VertexKind::Function:
    return FunctionName(psg, v);
  default:
    return "in " + FunctionName(psg, v);
  }
}

// "loop in relax", "mpi MPI_Send", "call solve": for lists that show no kind
// column; with the call site when the code is not main's ("mpi MPI_Allreduce
// in Dot called at cg.c:145").
std::string Describe(const Psg &psg, VertexId v) {
  std::string s = std::string(ToString(psg.vertex(v).kind)) + " " + VertexName(psg, v);
  std::vector<CallSite> sites = psg.CallSites(v);
  // A call the PSG expands leads its callee's copy: its own site is the call
  // itself, and the code it is in is the site before it.
  if (!sites.empty() && sites.back().vertex == v)
    sites.pop_back();
  if (sites.size() > 1) {
    const CallSite &in = sites.back();
    if (psg.vertex(v).kind == VertexKind::Mpi || psg.vertex(v).kind == VertexKind::Call)
      s += " in " + ReadableName(in.function);
    s += " called at " + BaseName(in.loc.file) + ":" + std::to_string(in.loc.line);
  }
  return s;
}

std::string Where(const Psg &psg, VertexId v) {
  return FileOf(psg, v) + ":" + std::to_string(psg.vertex(v).loc.line);
}

std::string Fmt(const char *fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

std::string RankCount(int n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); }

std::string Culprit(const RootCause &rc) {
  std::string s = "rank " + std::to_string(rc.culprit_rank);
  if (rc.culprit_thread >= 0)
    s += " thread " + std::to_string(rc.culprit_thread);
  return s;
}

std::string RankList(const std::vector<int> &ranks, size_t max) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < max; ++i)
    s += (i ? "," : "") + std::to_string(ranks[i]);
  if (ranks.size() > max)
    s += ",... (" + std::to_string(ranks.size()) + " ranks)";
  return s;
}

std::string JoinPath(const std::vector<std::string> &parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? " > " : "") + parts[i];
  return s;
}

// Every string of the text report that came from a file or the command line
// (paths, names, counter names, warnings quoting them): controls escaped.
std::string Safe(const std::string &s) { return EscapeControls(s); }

// Control characters too: the page may be printed to a terminal.
std::string HtmlEscape(const std::string &s) {
  std::string o;
  for (char c : EscapeControls(s, "\t")) {
    switch (c) {
    case '<':
      o += "&lt;";
      break;
    case '>':
      o += "&gt;";
      break;
    case '&':
      o += "&amp;";
      break;
    case '"':
      o += "&quot;";
      break;
    default:
      o += c;
    }
  }
  return o;
}

// Where V's relative file name is looked up: the compilation directory of the
// record holding V's function, then the directories the caller gives.
std::vector<std::string> SourceDirsOf(const ReportInput &in, VertexId v) {
  std::vector<std::string> dirs;
  if (in.psg.vertex(v).function >= 0 && !in.psg.FunctionOf(v).comp_dir.empty())
    dirs.push_back(in.psg.FunctionOf(v).comp_dir);
  for (const std::string &d : in.source_dirs)
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end())
      dirs.push_back(d);
  return dirs;
}

// "x.c not found (looked in /a, /b)": says where, so the fix (run from
// elsewhere, or move the sources back) is plain.
std::string NotFound(const ReportInput &in, VertexId v) {
  std::string file = FileOf(in.psg, v);
  if (file.empty())
    return "no source file recorded";
  std::string s = file + " not found";
  if (file[0] == '/')
    return s;
  std::vector<std::string> dirs = SourceDirsOf(in, v);
  s += dirs.empty() ? " (relative, and no directory to look in)" : " (looked in ";
  for (size_t i = 0; i < dirs.size(); ++i)
    s += (i ? ", " : "") + dirs[i];
  return dirs.empty() ? s : s + ")";
}

const Run &BigRun(const ReportInput &in) { return in.runs[in.result.backtrack_run]; }

double Total(const ReportInput &in) { return BigRun(in).total_time; }

} // namespace report_common
} // namespace scalana

namespace scalana {
namespace report_common {

std::vector<size_t> ProgramOrder(const Psg &psg) {
  const std::vector<Vertex> &vs = psg.vertices();
  std::vector<size_t> order(vs.size(), SIZE_MAX);
  size_t next = 0;
  if (psg.root() != kNoVertex && size_t(psg.root()) < vs.size()) {
    // Iterative: expanded call chains can be deep.
    std::vector<VertexId> stack{psg.root()};
    while (!stack.empty()) {
      VertexId v = stack.back();
      stack.pop_back();
      if (v < 0 || size_t(v) >= vs.size() || order[v] != SIZE_MAX)
        continue;
      order[v] = next++;
      const auto &ch = vs[v].children;
      for (auto it = ch.rbegin(); it != ch.rend(); ++it)
        stack.push_back(*it);
    }
  }
  for (size_t &o : order)
    if (o == SIZE_MAX)
      o = next++;
  return order;
}

namespace {

// A DOT double-quoted string: quotes and backslashes escaped, controls shown
// escaped; dot itself turns < > & into entities in its SVG.
std::string DotQuote(const std::string &s) {
  std::string o = "\"";
  size_t start = 0;
  while (true) {
    size_t nl = s.find('\n', start);
    for (char c : EscapeControls(s.substr(start, nl == std::string::npos ? nl : nl - start))) {
      if (c == '"' || c == '\\')
        o += '\\';
      o += c;
    }
    if (nl == std::string::npos)
      break;
    o += "\\n"; // a line break of the label
    start = nl + 1;
  }
  return o + "\"";
}

const char *const kCauseColours[] = {"#c0392b", "#2471a3", "#7d3c98", "#1e8449", "#b9770e"};

} // namespace

PpgPicture BuildPpgPicture(const ReportInput &in, size_t max_causes, size_t max_nodes,
                           const std::function<std::string(VertexId)> &link) {
  PpgPicture pic;
  const Psg &psg = in.psg;
  const std::vector<size_t> order = ProgramOrder(psg);
  struct Node {
    VertexId v;
    int rank;
    bool problematic = false, cause = false;
    double time = 0;
  };
  std::vector<Node> nodes;
  std::map<std::pair<VertexId, int>, size_t> index;
  struct Arrow {
    size_t from, to;
    std::string via;
    double wait;
    size_t cause;
  };
  std::vector<Arrow> arrows;
  std::set<std::pair<size_t, size_t>> seen;
  auto node = [&](const PathStep &ps) -> long {
    auto key = std::make_pair(ps.vertex, ps.rank);
    auto it = index.find(key);
    if (it != index.end())
      return long(it->second);
    if (nodes.size() >= max_nodes)
      return -1;
    index[key] = nodes.size();
    nodes.push_back({ps.vertex, ps.rank});
    return long(nodes.size() - 1);
  };
  const auto &causes = in.result.root_causes;
  for (size_t c = 0; c < causes.size() && c < max_causes; ++c) {
    ++pic.causes;
    long prev = -1;
    for (const PathStep &ps : causes[c].path) {
      long n = node(ps);
      if (n < 0) {
        pic.truncated = true;
        break;
      }
      nodes[n].problematic |= ps.problematic;
      nodes[n].time = ps.time;
      if (prev >= 0 && prev != n && seen.insert({size_t(prev), size_t(n)}).second)
        arrows.push_back({size_t(prev), size_t(n), ps.via, ps.wait, c});
      prev = n;
    }
    if (prev >= 0 && causes[c].path.empty() == false)
      nodes[prev].cause = true;
    if (causes[c].path.empty()) { // a cause found without a walk: its vertex alone
      PathStep ps;
      ps.vertex = causes[c].vertex;
      ps.rank = causes[c].culprit_rank;
      ps.problematic = true;
      long n = node(ps);
      if (n >= 0)
        nodes[n].cause = nodes[n].problematic = true;
    }
  }
  pic.nodes = nodes.size();

  // Grid: columns are the ranks visited, rows the vertices in program order.
  std::vector<int> cols;
  std::vector<VertexId> rows;
  for (const Node &n : nodes) {
    cols.push_back(n.rank);
    rows.push_back(n.v);
  }
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  std::sort(rows.begin(), rows.end(), [&](VertexId a, VertexId b) { return order[a] < order[b]; });
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  auto col_of = [&](int r) { return std::lower_bound(cols.begin(), cols.end(), r) - cols.begin(); };
  auto row_of = [&](VertexId v) { return std::find(rows.begin(), rows.end(), v) - rows.begin(); };
  const double kColW = 132, kRowH = 50, kLabelW = 260;
  auto pos = [](double x, double y) {
    return "\"" + Fmt("%.0f", x) + "," + Fmt("%.0f", y) + "!\"";
  };

  std::ostringstream d;
  d << "digraph ppg {\n  graph [fontname=\"Helvetica\" fontsize=10 splines=true];\n"
    << "  node [shape=box style=\"rounded,filled\" fillcolor=\"#eef2f7\" fontname=\"Helvetica\" "
       "fontsize=9 width=1.7 height=0.5 fixedsize=true];\n"
    << "  edge [fontname=\"Helvetica\" fontsize=8];\n";
  for (size_t c = 0; c < cols.size(); ++c)
    d << "  col" << c << " [id=\"col" << c << "\" shape=plaintext style=\"\" fontsize=11 label="
      << DotQuote("rank " + std::to_string(cols[c])) << " pos=" << pos(kLabelW + c * kColW, kRowH)
      << "];\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    VertexId v = rows[r];
    std::string text = ReadableName(Describe(psg, v), 48) + "\n" + BaseName(FileOf(psg, v)) + ":" +
                       std::to_string(psg.vertex(v).loc.line);
    d << "  row" << r << " [id=\"row" << r
      << "\" shape=plaintext style=\"\" width=3.4 label=" << DotQuote(text)
      << " pos=" << pos(kLabelW / 2 - 20, -double(r) * kRowH) << "];\n";
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &n = nodes[i];
    const Vertex &x = psg.vertex(n.v);
    std::string cls = n.problematic ? "ppgnode problematic" : "ppgnode";
    if (n.cause)
      cls += " rootcause";
    d << "  n" << i << " [id=\"pv" << n.v << "_r" << n.rank << "\" class=\"" << cls << "\" label="
      << DotQuote(std::string(ToString(x.kind)) + " " + ReadableName(VertexName(psg, n.v), 22) +
                  "\n" + Fmt("%.3f s", n.time))
      << " tooltip="
      << DotQuote(Describe(psg, n.v) + " at " + Where(psg, n.v) + ", rank " +
                  std::to_string(n.rank) + ": " + Fmt("%.4f s", n.time))
      << " pos=" << pos(kLabelW + col_of(n.rank) * kColW, -double(row_of(n.v)) * kRowH);
    if (n.problematic)
      d << " fillcolor=\"#f5b7b1\"";
    if (n.cause)
      d << " penwidth=2.5 color=\"#922b21\"";
    std::string url = link ? link(n.v) : "";
    if (!url.empty())
      d << " URL=" << DotQuote(url);
    d << "];\n";
  }
  for (size_t i = 0; i < arrows.size(); ++i) {
    const Arrow &a = arrows[i];
    bool cross = nodes[a.from].rank != nodes[a.to].rank;
    (cross ? pic.crossings : pic.steps)++;
    d << "  n" << a.from << " -> n" << a.to << " [id=\"arrow" << i << "\" class=\""
      << (cross ? "crossing" : "step") << " cause" << a.cause + 1 << "\" color=\""
      << kCauseColours[a.cause % 5] << "\"";
    if (cross)
      d << " penwidth=2 label=" << DotQuote(a.via + " " + Fmt("%.3f s", a.wait));
    else
      d << " style=dashed";
    d << "];\n";
  }
  d << "}\n";
  pic.dot = d.str();
  return pic;
}

void WritePpgDot(const ReportInput &in, std::ostream &out) {
  out << "// PPG backtracking paths of " << EscapeControls(in.binary)
      << " (lay out with: neato -n2 -Tsvg, or dot -Tsvg)\n"
      << BuildPpgPicture(in, 10, 2000).dot;
}

} // namespace report_common
} // namespace scalana
