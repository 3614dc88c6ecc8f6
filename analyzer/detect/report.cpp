#include "detect/report.h"

#include "scalana/regular_file.h"
#include "scalana/text_escape.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace scalana {

namespace {

std::string FileOf(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  if (!x.loc.file.empty())
    return x.loc.file;
  if (x.function >= 0)
    return psg.FunctionOf(v).loc.file;
  return "";
}

// flang's program unit: main calls it, and the code in it is the main
// program's (shown as main's, as the PSG writers do).
bool IsFortranProgram(const std::string &name) { return name == "_QQmain"; }

std::string FunctionName(const Psg &psg, VertexId v) {
  if (psg.vertex(v).function < 0)
    return "";
  const LocalPsg &f = psg.FunctionOf(v);
  if (IsFortranProgram(f.key))
    return "main";
  return f.name.empty() ? f.key : f.name;
}

std::string BaseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The calls from main down to V, each with the line it is made from:
// "main > Dot (cg.c:145)". The same function called from two places gives
// two vertices at the same line; this is what tells them apart.
std::vector<std::string> CallSites(const Psg &psg, VertexId v) {
  std::vector<std::string> parts;
  for (VertexId a = psg.vertex(v).parent; a != kNoVertex; a = psg.vertex(a).parent) {
    const Vertex &x = psg.vertex(a);
    if (x.kind != VertexKind::Call || !x.expanded || IsFortranProgram(x.label))
      continue;
    std::string file = x.loc.file;
    if (file.empty() && x.function >= 0)
      file = psg.FunctionOf(a).loc.file;
    parts.push_back(x.label + " (" + BaseName(file) + ":" + std::to_string(x.loc.line) + ")");
  }
  parts.push_back("main");
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::string VertexName(const Psg &psg, VertexId v) {
  const Vertex &x = psg.vertex(v);
  switch (x.kind) {
  case VertexKind::Mpi:
    return x.label;
  case VertexKind::Call:
    return x.label.empty() ? std::string("(indirect)") : x.label;
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
  std::vector<std::string> sites = CallSites(psg, v);
  if (sites.size() > 1) {
    const std::string &last = sites.back();
    size_t paren = last.rfind(" (");
    if (psg.vertex(v).kind == VertexKind::Mpi || psg.vertex(v).kind == VertexKind::Call)
      s += " in " + last.substr(0, paren);
    s += " called at " + last.substr(paren + 2, last.size() - paren - 3);
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

std::string RankList(const std::vector<int> &ranks, size_t max = 16) {
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

nlohmann::json StepJson(const ReportInput &in, const PathStep &ps) {
  const Vertex &x = in.psg.vertex(ps.vertex);
  return {{"kind", std::string(ToString(x.kind))},
          {"name", VertexName(in.psg, ps.vertex)},
          {"file", FileOf(in.psg, ps.vertex)},
          {"line", x.loc.line},
          {"rank", ps.rank},
          {"time", ps.time},
          {"wait", ps.wait},
          {"via", ps.via},
          {"problematic", ps.problematic}};
}

} // namespace

std::vector<std::string> SourceSnippet(const std::string &file, uint32_t line, int context,
                                       const std::vector<std::string> &dirs, bool *found,
                                       std::string *resolved) {
  std::vector<std::string> out;
  if (found)
    *found = false;
  if (file.empty() || line == 0)
    return out;
  // Absolute names are used as they are; relative ones only against DIRS
  // (the caller lists the working directory when it wants it searched).
  std::vector<std::string> candidates;
  if (file[0] == '/')
    candidates.push_back(file);
  else
    for (const std::string &d : dirs)
      if (!d.empty())
        candidates.push_back(d + "/" + file);
  for (const std::string &path : candidates) {
    // Only a regular file (a FIFO would block), read no further than the
    // lines shown and no more than kMaxSourceBytes; long lines are cut.
    constexpr uint64_t kMaxSourceBytes = uint64_t(64) << 20;
    constexpr size_t kMaxLineChars = 400;
    uint64_t size = 0;
    std::string error;
    int fd = OpenRegularFile(path, &size, &error);
    if (fd < 0)
      continue;
    const uint32_t first = line > uint32_t(context) ? line - uint32_t(context) : 1;
    const uint32_t last = line + uint32_t(context);
    uint32_t n = 1;
    std::string text;
    auto emit = [&] {
      char num[16];
      std::snprintf(num, sizeof num, "%5u%s ", n, n == line ? ">" : "|");
      if (text.size() > kMaxLineChars)
        text = text.substr(0, kMaxLineChars) + "...";
      out.push_back(num + EscapeControls(text, "\t"));
      text.clear();
    };
    char buf[1 << 16];
    uint64_t total = 0;
    ssize_t got;
    while (n <= last && total < kMaxSourceBytes && (got = ::read(fd, buf, sizeof buf)) > 0) {
      total += uint64_t(got);
      for (ssize_t i = 0; i < got && n <= last; ++i) {
        if (buf[i] == '\n') {
          if (n >= first)
            emit();
          ++n;
        } else if (n >= first && text.size() <= kMaxLineChars) {
          text += buf[i];
        }
      }
    }
    if (n >= first && n <= last && !text.empty()) // a last line without a newline
      emit();
    ::close(fd);
    if (found)
      *found = true;
    if (resolved)
      *resolved = path;
    return out;
  }
  return out;
}

// ---------------------------------------------------------------- text

void WriteTextReport(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  const Run &big = BigRun(in);
  out << "ScalAna scaling-loss report\n";
  out << "binary: " << Safe(in.binary) << "\nruns:";
  for (const Run &run : in.runs)
    out << "  " << Safe(run.label) << " (" << RankCount(run.world_size) << ", "
        << Fmt("%.3f", run.total_time) << " s)";
  out << "\nmerge: " << ToString(in.options.merge) << ", scaling: " << ToString(in.options.scaling);
  if (in.options.scaling == ScalingMode::Auto && in.runs.size() > 1 && !r.scaling_reason.empty())
    out << " -> " << ToString(r.scaling_used);
  out << " (expected slope " << Fmt("%.2f", r.expected_slope);
  // The total's slope includes MPI wall time (waiting inflated by
  // oversubscription): shown for information, never used as the expectation.
  if (r.program_slope_ok)
    out << ", total time slope " << Fmt("%.2f", r.program_slope);
  out << "), abnormal threshold " << in.options.abnorm_thd << "x median\n";
  if (!r.scaling_reason.empty())
    out << "scaling: " << Safe(r.scaling_reason) << "\n";
  for (const std::string &w : r.warnings)
    out << "warning: " << Safe(w) << "\n";

  out << "\n== Root causes (backtracking on " << Safe(big.label) << ", "
      << RankCount(big.world_size) << ") ==\n";
  if (r.root_causes.empty())
    out << "none found: no backtracking path reached a problematic computation vertex\n";
  int n = 0;
  for (const RootCause &rc : r.root_causes) {
    const Vertex &x = in.psg.vertex(rc.vertex);
    out << "\n#" << ++n << "  " << ToString(x.kind) << " at " << Safe(Where(in.psg, rc.vertex))
        << "  (" << Safe(FunctionName(in.psg, rc.vertex)) << ")\n";
    out << "    call path: " << Safe(JoinPath(CallSites(in.psg, rc.vertex))) << "\n";
    out << "    ranks:     " << RankList(rc.ranks) << "\n";
    out << "    costs:     " << Fmt("%.3f", rc.cost_seconds) << " s ("
        << Fmt("%.1f", 100 * rc.score) << "% of " << Fmt("%.3f", Total(in)) << " s); rank "
        << rc.culprit_rank << " spends " << Fmt("%.3f", rc.culprit_time) << " s, median "
        << Fmt("%.3f", rc.median_time) << " s\n";
    out << "    why:       " << (rc.abnormal ? "abnormal" : "")
        << (rc.abnormal && rc.non_scalable ? ", " : "") << (rc.non_scalable ? "non-scalable" : "")
        << "\n";
    if (rc.thin_data)
      out << "    thin data: rests on " << Fmt("%.0f", rc.evidence_samples)
          << " samples over the median (" << Fmt("%.1f", rc.signal_to_noise)
          << " standard deviations); a run about " << Fmt("%.0f", rc.run_longer)
          << "x longer, or at " << Fmt("%.0f", rc.run_longer)
          << "x the sampling rate, would settle it\n";
    if (!rc.evidence.empty()) {
      out << "    PMU:      ";
      for (const CounterEvidence &e : rc.evidence)
        out << " " << Safe(e.counter) << " rank " << rc.culprit_rank << " "
            << Fmt("%.3g", e.culprit) << " vs median " << Fmt("%.3g", e.median)
            << (e.median > 0 ? " (" + Fmt("%.2f", e.culprit / e.median) + "x)" : "") << ";";
      out << "\n";
    } else if (!big.meta.sampling.counters_real) {
      out << "    PMU:       no hardware counters in this run\n";
    }
    out << "    backtracking path:\n";
    for (const PathStep &ps : rc.path) {
      const Vertex &s = in.psg.vertex(ps.vertex);
      out << "      " << (ps.vertex == rc.vertex && ps.rank == rc.culprit_rank ? "* " : "  ")
          << ToString(s.kind) << " " << Safe(VertexName(in.psg, ps.vertex)) << "  rank " << ps.rank
          << "  " << Safe(Where(in.psg, ps.vertex)) << "  " << Fmt("%.3f", ps.time) << " s";
      if (ps.via != "prev" && ps.via != "control")
        out << "  [" << ps.via;
      if (ps.wait > 0)
        out << ", waited " << Fmt("%.3f", ps.wait) << " s";
      if (ps.via != "prev" && ps.via != "control")
        out << "]";
      if (ps.problematic)
        out << "  !";
      out << "\n";
    }
    bool found = false;
    std::vector<std::string> lines = SourceSnippet(FileOf(in.psg, rc.vertex), x.loc.line, 3,
                                                   SourceDirsOf(in, rc.vertex), &found);
    if (found) {
      out << "    source:\n";
      for (const std::string &l : lines)
        out << "      " << l << "\n";
    } else {
      out << "    source: " << Safe(NotFound(in, rc.vertex)) << "\n";
    }
  }

  out << "\n== Non-scalable vertices ==\n";
  if (in.runs.size() < 2 || r.non_scalable.empty())
    out << (r.non_scalable.empty() ? "none\n" : "");
  for (const NonScalableVertex &ns : r.non_scalable) {
    out << "  " << Safe(Where(in.psg, ns.vertex)) << "  " << Safe(Describe(in.psg, ns.vertex))
        << "  slope " << Fmt("%.2f", ns.slope) << " (expected " << Fmt("%.2f", ns.expected)
        << "), share " << Fmt("%.1f", 100 * ns.share) << "%, score " << Fmt("%.3f", ns.score)
        << "  [";
    for (size_t i = 0; i < ns.merged.size(); ++i)
      out << (i ? " " : "") << ns.merged[i].first << ":" << Fmt("%.3g", ns.merged[i].second);
    out << "]\n";
  }
  out << "\n== Abnormal vertices ==\n";
  if (r.abnormal.empty())
    out << "none\n";
  size_t shown = 0;
  for (const AbnormalVertex &ab : r.abnormal) {
    if (++shown > 4 * in.options.top) {
      out << "  ... " << r.abnormal.size() - shown + 1 << " more (see --format json)\n";
      break;
    }
    out << "  " << Safe(in.runs[ab.run].label) << "  " << Safe(Where(in.psg, ab.vertex)) << "  "
        << Safe(Describe(in.psg, ab.vertex)) << "  ranks " << RankList(ab.ranks, 8)
        << "  worst rank " << ab.worst_rank << " " << Fmt("%.3f", ab.worst_time) << " s vs median "
        << Fmt("%.3f", ab.median) << " s\n";
  }
}

// ---------------------------------------------------------------- JSON

void WriteJsonReport(const ReportInput &in, std::ostream &out) {
  using nlohmann::json;
  const DetectResult &r = in.result;
  json doc;
  doc["format"] = "scalana-detect";
  doc["version"] = 1;
  doc["binary"] = in.binary;
  json runs = json::array();
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const Run &run = in.runs[i];
    runs.push_back({{"dir", run.label},
                    {"world_size", run.world_size},
                    {"ranks_present", run.nslots()},
                    {"missing_ranks", run.missing_ranks},
                    {"total_time", run.total_time},
                    {"psg_id", run.meta.psg_id},
                    {"build_id", run.meta.build_id},
                    {"sampling_hz", run.meta.sampling.hz},
                    {"counters_real", run.meta.sampling.counters_real},
                    {"contexts", run.contexts},
                    {"unresolved_contexts", run.unresolved_contexts},
                    {"unresolved_rows", run.unresolved_rows},
                    {"outside_seconds", run.outside_seconds},
                    {"backtracked", i == r.backtrack_run}});
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
  doc["warnings"] = r.warnings;
  json causes = json::array();
  for (const RootCause &rc : r.root_causes) {
    const Vertex &x = in.psg.vertex(rc.vertex);
    json path = json::array();
    for (const PathStep &ps : rc.path)
      path.push_back(StepJson(in, ps));
    json ev = json::array();
    for (const CounterEvidence &e : rc.evidence)
      ev.push_back({{"counter", e.counter}, {"culprit", e.culprit}, {"median", e.median}});
    causes.push_back({{"file", FileOf(in.psg, rc.vertex)},
                      {"line", x.loc.line},
                      {"end_line", x.loc.end_line},
                      {"kind", std::string(ToString(x.kind))},
                      {"name", VertexName(in.psg, rc.vertex)},
                      {"function", FunctionName(in.psg, rc.vertex)},
                      {"call_path", in.psg.CallPath(rc.vertex)},
                      {"ranks", rc.ranks},
                      {"culprit_rank", rc.culprit_rank},
                      {"score", rc.score},
                      {"cost_seconds", rc.cost_seconds},
                      {"culprit_time", rc.culprit_time},
                      {"median_time", rc.median_time},
                      {"evidence_samples", rc.evidence_samples},
                      {"signal_to_noise", rc.signal_to_noise},
                      {"thin_data", rc.thin_data},
                      {"run_longer", rc.run_longer},
                      {"abnormal", rc.abnormal},
                      {"non_scalable", rc.non_scalable},
                      {"pmu", ev},
                      {"path", path}});
  }
  doc["root_causes"] = causes;
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
                  {"score", n.score},
                  {"merged", merged}});
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
                  {"ranks", a.ranks},
                  {"worst_rank", a.worst_rank},
                  {"worst_time", a.worst_time},
                  {"median", a.median},
                  {"excess", a.excess}});
  doc["abnormal"] = ab;
  // ASCII only (\uXXXX): the same document, with nothing a terminal acts on;
  // invalid UTF-8 (directory names from the command line) becomes U+FFFD.
  out << doc.dump(1, ' ', true, json::error_handler_t::replace) << "\n";
}

// ---------------------------------------------------------------- HTML

void WriteHtmlReport(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  const Run &big = BigRun(in);
  out << R"(<!DOCTYPE html><html><head><meta charset="utf-8"><title>ScalAna report</title>
<style>
body{font-family:sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ddd;padding:2px 6px}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto}.hit{background:#ffe08a}
.cause{border:1px solid #ccc;border-radius:4px;padding:.5em 1em;margin:.8em 0}
.heat td{width:14px;height:14px;padding:0}.warn{color:#a40}
.prob{font-weight:bold;color:#b00}details summary{cursor:pointer}
</style></head><body>
<h1>ScalAna scaling-loss report</h1>
)";
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

  out << "<h2>Root causes</h2>\n";
  if (r.root_causes.empty())
    out << "<p>none found</p>\n";
  int n = 0;
  for (const RootCause &rc : r.root_causes) {
    const Vertex &x = in.psg.vertex(rc.vertex);
    out << "<div class=cause><b>#" << ++n << " " << ToString(x.kind) << " at <code>"
        << HtmlEscape(Where(in.psg, rc.vertex)) << "</code></b> in <code>"
        << HtmlEscape(FunctionName(in.psg, rc.vertex)) << "</code> &mdash; "
        << Fmt("%.3f", rc.cost_seconds) << " s (" << Fmt("%.1f", 100 * rc.score) << "%), ranks "
        << HtmlEscape(RankList(rc.ranks)) << "<br>call path: <code>"
        << HtmlEscape(JoinPath(CallSites(in.psg, rc.vertex))) << "</code><br>";
    for (const CounterEvidence &e : rc.evidence)
      out << HtmlEscape(e.counter) << ": " << Fmt("%.3g", e.culprit) << " vs median "
          << Fmt("%.3g", e.median) << "; ";
    bool found = false;
    auto lines = SourceSnippet(FileOf(in.psg, rc.vertex), x.loc.line, 4,
                               SourceDirsOf(in, rc.vertex), &found);
    if (found) {
      out << "<pre>";
      for (const std::string &l : lines)
        out << (l.size() > 5 && l[5] == '>' ? "<span class=hit>" : "<span>") << HtmlEscape(l)
            << "</span>\n";
      out << "</pre>";
    } else {
      out << "<p>source: " << HtmlEscape(NotFound(in, rc.vertex)) << "</p>";
    }
    out << "<details><summary>backtracking path (" << rc.path.size()
        << " steps)</summary><table><tr><th>kind</th><th>name</th><th>rank</th><th>where</th>"
           "<th>time s</th><th>via</th><th>wait s</th></tr>";
    for (const PathStep &ps : rc.path)
      out << "<tr" << (ps.problematic ? " class=prob" : "") << "><td>"
          << ToString(in.psg.vertex(ps.vertex).kind) << "</td><td>"
          << HtmlEscape(VertexName(in.psg, ps.vertex)) << "</td><td>" << ps.rank << "</td><td>"
          << HtmlEscape(Where(in.psg, ps.vertex)) << "</td><td>" << Fmt("%.3f", ps.time)
          << "</td><td>" << ps.via << "</td><td>" << Fmt("%.3f", ps.wait) << "</td></tr>";
    out << "</table></details></div>\n";
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
          << HtmlEscape(Describe(in.psg, v)) << "</td>";
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

  out << "<h2>Non-scalable vertices</h2>\n<table><tr><th>where</th><th>vertex</th><th>slope</th>"
         "<th>expected</th><th>share</th><th>score</th></tr>\n";
  for (const NonScalableVertex &ns : r.non_scalable)
    out << "<tr><td>" << HtmlEscape(Where(in.psg, ns.vertex)) << "</td><td>"
        << HtmlEscape(Describe(in.psg, ns.vertex)) << "</td><td>" << Fmt("%.2f", ns.slope)
        << "</td><td>" << Fmt("%.2f", ns.expected) << "</td><td>" << Fmt("%.1f%%", 100 * ns.share)
        << "</td><td>" << Fmt("%.3f", ns.score) << "</td></tr>\n";
  out << "</table>\n<h2>Abnormal vertices</h2>\n<table><tr><th>run</th><th>where</th><th>vertex"
         "</th><th>ranks</th><th>worst</th><th>median</th></tr>\n";
  size_t shown = 0;
  for (const AbnormalVertex &ab : r.abnormal) {
    if (++shown > 200)
      break;
    out << "<tr><td>" << HtmlEscape(in.runs[ab.run].label) << "</td><td>"
        << HtmlEscape(Where(in.psg, ab.vertex)) << "</td><td>"
        << HtmlEscape(Describe(in.psg, ab.vertex)) << "</td><td>"
        << HtmlEscape(RankList(ab.ranks, 8)) << "</td><td>rank " << ab.worst_rank << ": "
        << Fmt("%.3f", ab.worst_time) << " s</td><td>" << Fmt("%.3f", ab.median)
        << " s</td></tr>\n";
  }
  out << "</table>\n</body></html>\n";
}

} // namespace scalana
