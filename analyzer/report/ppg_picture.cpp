// The PPG picture (BuildPpgPicture): the part of the PPG the backtracking
// walked, as DOT with pinned grid positions, laid out so that no text covers
// another at any rank count.
#include "report/names.h"
#include "report/report_common.h"

#include "scalana/text_escape.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace scalana {
namespace report_common {

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

// Geometry, in points. Node text is cut to kNodeChars so it fits kNodeW at
// the nodes' 9 pt; columns leave a gap between nodes; a label character is
// counted at kCharW, more than Helvetica's widest average at 9 pt.
constexpr double kNodeW = 136, kColW = 156, kRowH = 50, kGap = 18, kCharW = 5.6;
constexpr size_t kNodeChars = 24, kRowNameChars = 30, kColumnRangeChars = 16;

std::string Cut(const std::string &s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

// "called at timestep.c:138": the call site that tells apart two contexts of
// one line (Describe's), empty for code of the entry.
std::string CallerSite(const Psg &psg, VertexId v) {
  std::vector<CallSite> sites = psg.CallSites(v);
  if (!sites.empty() && sites.back().vertex == v)
    sites.pop_back();
  if (sites.size() <= 1)
    return "";
  return "called at " + BaseName(sites.back().loc.file) + ":" +
         std::to_string(sites.back().loc.line);
}

// A vertex's name cut to N characters: symbols by ReadableName (which elides
// C++ parameter lists and, taking "in f" for a return type and a name, would
// drop the "in"), an indirect call's targets as text.
std::string ShortName(const Psg &psg, VertexId v, size_t n) {
  std::string name = VertexName(psg, v);
  if (name.rfind("(indirect", 0) == 0)
    return Cut(name, n);
  if (name.rfind("in ", 0) == 0) // "in relax": the code of a function
    return "in " + ReadableName(name.substr(3), n > 6 ? n - 3 : 3);
  return ReadableName(name, n);
}

std::string RanksText(const std::vector<int> &ranks) {
  return ranks.size() == 1 ? "rank " + std::to_string(ranks[0])
                           : "ranks " + RankRanges(ranks, kColumnRangeChars);
}

} // namespace

PpgPicture BuildPpgPicture(const ReportInput &in, size_t max_causes, size_t max_nodes,
                           const std::function<std::string(VertexId)> &link, bool edge_labels) {
  PpgPicture pic;
  const Psg &psg = in.psg;
  const std::vector<size_t> order = ProgramOrder(psg);
  const auto &causes = in.result.root_causes;

  // 1. The steps drawn: each cause's path (its vertex alone when found
  // without a walk), cut at MAX_NODES distinct (vertex, rank) pairs.
  struct Drawn {
    std::vector<PathStep> steps;
    bool whole = true;
  };
  std::vector<Drawn> drawn;
  std::set<std::pair<VertexId, int>> pairs;
  for (size_t c = 0; c < causes.size() && c < max_causes; ++c) {
    ++pic.causes;
    std::vector<PathStep> path = causes[c].path;
    if (path.empty()) {
      PathStep ps;
      ps.vertex = causes[c].vertex;
      ps.rank = causes[c].culprit_rank;
      ps.problematic = true;
      path.push_back(ps);
    }
    Drawn d;
    for (const PathStep &ps : path) {
      auto key = std::make_pair(ps.vertex, ps.rank);
      if (!pairs.count(key) && pairs.size() >= max_nodes) {
        pic.truncated = true;
        d.whole = false;
        break;
      }
      pairs.insert(key);
      d.steps.push_back(ps);
    }
    drawn.push_back(std::move(d));
  }

  // 2. Columns: ranks that visit the same vertices share one. Past
  // kMaxPpgColumns groups, the groups of the causes' culprit ranks and the
  // busiest ones keep a column; the rest share the last.
  std::map<int, std::set<VertexId>> visits;
  for (const Drawn &d : drawn)
    for (const PathStep &ps : d.steps)
      visits[ps.rank].insert(ps.vertex);
  pic.ranks = visits.size();
  std::map<std::set<VertexId>, std::vector<int>> by_visits;
  for (const auto &[rank, vs] : visits)
    by_visits[vs].push_back(rank);
  std::vector<std::vector<int>> groups;
  for (auto &[vs, ranks] : by_visits)
    groups.push_back(ranks);
  if (groups.size() > kMaxPpgColumns) {
    std::set<int> culprits;
    for (const Drawn &d : drawn)
      if (!d.steps.empty())
        culprits.insert(d.steps.back().rank);
    auto weight = [&](const std::vector<int> &g) {
      bool culprit = std::any_of(g.begin(), g.end(), [&](int r) { return culprits.count(r); });
      return std::make_pair(culprit, visits[g[0]].size());
    };
    std::stable_sort(groups.begin(), groups.end(),
                     [&](const auto &a, const auto &b) { return weight(a) > weight(b); });
    for (size_t g = kMaxPpgColumns; g < groups.size(); ++g)
      groups[kMaxPpgColumns - 1].insert(groups[kMaxPpgColumns - 1].end(), groups[g].begin(),
                                        groups[g].end());
    groups.resize(kMaxPpgColumns);
    for (auto &g : groups)
      std::sort(g.begin(), g.end());
  }
  // Leftmost, beside the row labels, the column of the first cause's
  // culprit, then the next cause's: at 27 ranks the culprit's column was
  // the last, off a 1400 px screen. The rest in rank order.
  std::map<int, size_t> first_cause_of; // culprit rank -> first cause it ends
  for (size_t c = 0; c < drawn.size(); ++c)
    if (!drawn[c].steps.empty())
      first_cause_of.try_emplace(drawn[c].steps.back().rank, c);
  auto culprit_order = [&](const std::vector<int> &g) {
    size_t first = drawn.size();
    for (int r : g)
      if (auto it = first_cause_of.find(r); it != first_cause_of.end())
        first = std::min(first, it->second);
    return first;
  };
  std::sort(groups.begin(), groups.end(), [&](const auto &a, const auto &b) {
    return std::make_pair(culprit_order(a), a) < std::make_pair(culprit_order(b), b);
  });
  std::map<int, size_t> col_of;
  for (size_t g = 0; g < groups.size(); ++g)
    for (int r : groups[g])
      col_of[r] = g;
  pic.columns = groups.size();

  // 3. Nodes per (vertex, column), arrows per distinct pair of nodes.
  struct Node {
    VertexId v;
    size_t col;
    std::vector<int> ranks;
    bool problematic = false, cause = false;
    double time = 0;
  };
  std::vector<Node> nodes;
  std::map<std::pair<VertexId, size_t>, size_t> index;
  struct Arrow {
    size_t from, to;
    int from_rank, to_rank;
    std::string via;
    double wait;
    size_t cause;
  };
  std::vector<Arrow> arrows;
  std::set<std::pair<size_t, size_t>> seen;
  for (size_t c = 0; c < drawn.size(); ++c) {
    long prev = -1;
    int prev_rank = -1;
    for (const PathStep &ps : drawn[c].steps) {
      auto key = std::make_pair(ps.vertex, col_of[ps.rank]);
      auto it = index.find(key);
      size_t n = it != index.end() ? it->second : nodes.size();
      if (it == index.end()) {
        index[key] = n;
        nodes.push_back({ps.vertex, key.second});
      }
      Node &x = nodes[n];
      if (std::find(x.ranks.begin(), x.ranks.end(), ps.rank) == x.ranks.end())
        x.ranks.push_back(ps.rank);
      x.problematic |= ps.problematic;
      x.time = std::max(x.time, ps.time);
      if (prev >= 0 && size_t(prev) != n && seen.insert({size_t(prev), n}).second)
        arrows.push_back({size_t(prev), n, prev_rank, ps.rank, ps.via, ps.wait, c});
      prev = long(n);
      prev_rank = ps.rank;
    }
    if (prev >= 0 && drawn[c].whole) {
      nodes[prev].cause = true;
      if (causes[c].path.empty())
        nodes[prev].problematic = true;
    }
  }
  for (Node &n : nodes)
    std::sort(n.ranks.begin(), n.ranks.end());
  pic.nodes = nodes.size();

  // 4. Rows: the vertices in program order, each label unique.
  std::vector<VertexId> rows;
  for (const Node &n : nodes)
    rows.push_back(n.v);
  std::sort(rows.begin(), rows.end(), [&](VertexId a, VertexId b) { return order[a] < order[b]; });
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::map<VertexId, size_t> row_of;
  std::vector<std::string> row_text(rows.size());
  std::map<std::string, size_t> uses;
  for (size_t r = 0; r < rows.size(); ++r) {
    VertexId v = rows[r];
    row_of[v] = r;
    row_text[r] = std::string(ToString(psg.vertex(v).kind)) + " " +
                  ShortName(psg, v, kRowNameChars) + "\n" + BaseName(FileOf(psg, v)) + ":" +
                  std::to_string(psg.vertex(v).loc.line);
    ++uses[row_text[r]];
  }
  for (size_t r = 0; r < rows.size(); ++r)
    if (uses[row_text[r]] > 1) {
      std::string site = CallerSite(psg, rows[r]);
      if (!site.empty())
        row_text[r] += ", " + site;
    }
  std::map<std::string, size_t> seen_text;
  for (size_t r = 0; r < rows.size(); ++r)
    if (size_t k = ++seen_text[row_text[r]]; k > 1)
      row_text[r] += " #" + std::to_string(k);
  size_t widest = 12;
  for (const std::string &t : row_text)
    for (size_t at = 0, nl; at <= t.size(); at = nl + 1) {
      nl = t.find('\n', at);
      nl = nl == std::string::npos ? t.size() : nl;
      widest = std::max(widest, nl - at);
    }
  const double label_w = double(widest) * kCharW + 12;
  auto col_x = [&](size_t c) { return label_w + kGap + kNodeW / 2 + double(c) * kColW; };
  auto pos = [](double x, double y) {
    return "\"" + Fmt("%.0f", x) + "," + Fmt("%.0f", y) + "!\"";
  };

  std::ostringstream d;
  d << "digraph ppg {\n  graph [fontname=\"Helvetica\" fontsize=10 splines=true];\n"
    << "  node [shape=box style=\"rounded,filled\" fillcolor=\"#eef2f7\" fontname=\"Helvetica\" "
       "fontsize=9 width="
    << Fmt("%.2f", kNodeW / 72) << " height=0.5 fixedsize=true];\n"
    << "  edge [fontname=\"Helvetica\" fontsize=8];\n";
  for (size_t c = 0; c < groups.size(); ++c) {
    const std::vector<int> &g = groups[c];
    std::string text = RanksText(g) + (g.size() > 1 ? "\n(" + RankCount(int(g.size())) + ")" : "");
    d << "  col" << c << " [id=\"col" << c << "\" class=\"ppglabel\" shape=plaintext style=\"\" "
      << "fontsize=10 width=" << Fmt("%.2f", (kColW - 8) / 72) << " label=" << DotQuote(text)
      << " tooltip=" << DotQuote(g.size() > 1 ? "ranks " + RankRanges(g) : text)
      << " pos=" << pos(col_x(c), kRowH) << "];\n";
  }
  for (size_t r = 0; r < rows.size(); ++r)
    d << "  row" << r << " [id=\"row" << r << "\" class=\"ppglabel\" shape=plaintext style=\"\" "
      << "width=" << Fmt("%.2f", label_w / 72) << " label=" << DotQuote(row_text[r])
      << " tooltip=" << DotQuote(Describe(psg, rows[r]) + " at " + Where(psg, rows[r]))
      << " pos=" << pos(label_w / 2, -double(r) * kRowH) << "];\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &n = nodes[i];
    const Vertex &x = psg.vertex(n.v);
    std::string cls = n.problematic ? "ppgnode problematic" : "ppgnode";
    if (n.cause)
      cls += " rootcause";
    bool one = n.ranks.size() == 1;
    d << "  n" << i << " [id=\"pv" << n.v << "_r" << n.ranks[0] << "\" class=\"" << cls
      << "\" label="
      << DotQuote(Cut(std::string(ToString(x.kind)) + " " + ShortName(psg, n.v, 22), kNodeChars) +
                  "\n" + (one ? "" : "max ") + Fmt("%.3f s", n.time))
      << " tooltip="
      << DotQuote(Describe(psg, n.v) + " at " + Where(psg, n.v) + ", " +
                  (one ? "rank " + std::to_string(n.ranks[0]) : "ranks " + RankRanges(n.ranks)) +
                  ": " + (one ? "" : "max ") + Fmt("%.4f s", n.time))
      << " pos=" << pos(col_x(n.col), -double(row_of[n.v]) * kRowH);
    if (n.problematic)
      d << " fillcolor=\"#f5b7b1\"";
    if (n.cause)
      d << " penwidth=2.5 color=\"#922b21\"";
    std::string url = link ? link(n.v) : "";
    if (!url.empty())
      d << " URL=" << DotQuote(url);
    d << "];\n";
  }
  auto end_text = [&](size_t node, int rank) {
    return "rank " + std::to_string(rank) + ": " + Describe(psg, nodes[node].v) + " (" +
           BaseName(FileOf(psg, nodes[node].v)) + ":" +
           std::to_string(psg.vertex(nodes[node].v).loc.line) + ")";
  };
  for (size_t i = 0; i < arrows.size(); ++i) {
    const Arrow &a = arrows[i];
    bool cross = a.from_rank != a.to_rank;
    (cross ? pic.crossings : pic.steps)++;
    std::string id = "arrow" + std::to_string(i);
    d << "  n" << a.from << " -> n" << a.to << " [id=\"" << id << "\" class=\""
      << (cross ? "crossing" : "step") << " cause" << a.cause + 1 << "\" color=\""
      << kCauseColours[a.cause % 5] << "\"";
    if (cross) {
      PpgCrossing pc{id,    a.cause, end_text(a.from, a.from_rank), end_text(a.to, a.to_rank),
                     a.via, a.wait};
      d << " penwidth=2 tooltip="
        << DotQuote(a.via + " wait " + Fmt("%.3f s", a.wait) + ": " + pc.from + " to " + pc.to);
      if (edge_labels)
        d << " label=" << DotQuote(a.via + " " + Fmt("%.3f s", a.wait));
      pic.crossing_list.push_back(std::move(pc));
    } else {
      d << " style=dashed";
    }
    d << "];\n";
  }
  d << "}\n";
  pic.dot = d.str();
  return pic;
}

void WritePpgDot(const ReportInput &in, std::ostream &out) {
  out << "// PPG backtracking paths of " << EscapeControls(in.binary)
      << " (lay out with: neato -n2 -Tsvg, or dot -Tsvg)\n"
      << BuildPpgPicture(in, 10, 2000, {}, true).dot;
}

} // namespace report_common
} // namespace scalana
