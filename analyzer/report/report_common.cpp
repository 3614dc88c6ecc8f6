#include "report/report_common.h"
#include "report/names.h"

#include "scalana/text_escape.h"

#include <algorithm>
#include <cmath>
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

std::string MeasuredText(const Run &run) {
  std::string n =
      std::to_string(run.unplaced_samples) + (run.unplaced_samples == 1 ? " sample" : " samples");
  // A stripped binary's samples exist: 0 s would say the ranks did nothing.
  if (run.unplaced_samples && run.total_time <= 0)
    return n + " measured, none placed (no symbols)";
  std::string s = "busiest rank measured " + Fmt("%.3f", run.total_time) + " s";
  if (run.unplaced_samples)
    s += ", " + n + " not placed (no symbols)";
  return s;
}

std::string NoCauseText(const ReportInput &in) {
  const Run &big = BigRun(in);
  if (big.unplaced_samples && big.total_time <= 0)
    return "none found: none of the " + std::to_string(big.unplaced_samples) + " samples of " +
           big.label + " could be placed (no symbols: see the warning)";
  const DetectResult &r = in.result;
  if (!r.minor_causes.empty() || !r.contention.empty())
    return "none found that matters: " +
           (r.minor_causes.empty() ? std::string()
                                   : std::to_string(r.minor_causes.size()) + " minor cause" +
                                         (r.minor_causes.size() == 1 ? "" : "s") +
                                         (r.contention.empty() ? "" : " and ")) +
           (r.contention.empty() ? std::string()
                                 : std::to_string(r.contention.size()) + " growth" +
                                       (r.contention.size() == 1 ? "" : "s") +
                                       " that the machine's contention explains") +
           ", listed below";
  return "none found: no vertex is abnormal or grows beyond the expected scaling";
}

namespace {
// The model's own slope between the smallest and largest measured scale
// (NaN where it is not positive at both).
double ModelSlope(const NonScalableVertex &ns) {
  if (!ns.model.ok || ns.merged.size() < 2)
    return NAN;
  const double p0 = ns.merged.front().first, p1 = ns.merged.back().first;
  const double m0 = ns.model.Eval(p0), m1 = ns.model.Eval(p1);
  if (!(m0 > 0 && m1 > 0 && p1 > p0))
    return NAN;
  return std::log(m1 / m0) / std::log(p1 / p0);
}
} // namespace

bool ModelFollowsSlope(const NonScalableVertex &ns) {
  const double s = ModelSlope(ns);
  return std::isfinite(s) && std::abs(s - ns.slope) <= 0.5;
}

std::string ModelSlopeText(const NonScalableVertex &ns) {
  const double s = ModelSlope(ns);
  return "not shown beside the slope: Extra-P's best form, " + ModelText(ns.model) + " (" +
         ns.model.Confidence() + " confidence), " +
         (std::isfinite(s) ? "grows with slope " + Fmt("%.2f", s)
                           : std::string("is not positive")) +
         " over the measured ranks, where the points' slope is " + Fmt("%.2f", ns.slope);
}

std::string OrderText(const ReportInput &in) {
  return "order: by the wall time a fix would save, whatever the kind; causes under " +
         Fmt("%g", 100 * in.options.minor_share) +
         "% of the wall time (and of their rank's CPU time) are minor, listed after them; "
         "growth alike on every rank while ranks share cores comes after every cause of one "
         "rank, and growth the machine's contention explains is listed apart";
}

std::string Culprit(const RootCause &rc) {
  std::string s = "rank " + std::to_string(rc.culprit_rank);
  if (rc.culprit_thread >= 0)
    s += " thread " + std::to_string(rc.culprit_thread);
  return s;
}

std::string RankList(const std::vector<int> &ranks, size_t max) {
  // As ranges, so a list of a million ranks stays a few words long.
  std::string s = RankRanges(ranks, 6 * max);
  if (ranks.size() > max)
    s += " (" + std::to_string(ranks.size()) + " ranks)";
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

// What made RC a cause. A vertex that is neither abnormal nor non-scalable
// itself is where backtracking from one that is ended (the call it leads
// into, or its line's contexts summed): said so, never left blank.
std::string WhyText(const RootCause &rc) {
  std::string s = rc.abnormal ? "abnormal" : "";
  if (rc.non_scalable)
    s += (s.empty() ? "" : ", ") + std::string("non-scalable");
  if (rc.communication)
    s += (s.empty() ? "" : " ") + std::string(rc.io ? "I/O that no computation explains"
                                                    : "communication that no computation explains");
  else if (rc.io)
    s += (s.empty() ? "" : " ") + std::string("I/O of the rank's own (time blocked in the call)");
  if (rc.alike_on_shared_cores)
    s += std::string(s.empty() ? "" : " ") +
         "(alike on every rank while the ranks share cores: it may be the machine's)";
  if (rc.serial_fraction)
    s += (s.empty() ? "" : "; ") +
         std::string("serial fraction: code outside the OpenMP regions whose time grows with "
                     "the rank count, which no thread count shortens (Amdahl)");
  if (rc.culprit_thread >= 0)
    s += (s.empty() ? "" : "; ") + std::string("thread ") + std::to_string(rc.culprit_thread) +
         " of rank " + std::to_string(rc.culprit_rank) + " is over its team's median by the " +
         "abnormal threshold";
  if (s.empty())
    s = "reached by backtracking from the problematic vertex the path starts at; neither "
        "abnormal nor non-scalable on its own" +
        std::string(rc.contexts > 1 ? " (its line is, with its contexts summed)" : "");
  return s;
}

std::string ThreadGrowthText(const RootCause &rc) {
  for (const CommGrowth &g : rc.growth)
    if (!rc.communication && g.what == "thread excess")
      return "a thread's time over its team's median (the largest over ranks) " +
             Fmt("%.3f", g.small) + " s at " + RankCount(rc.small_ranks) + " -> " +
             Fmt("%.3f", g.big) + " s at " + RankCount(rc.big_ranks) +
             ": the imbalance grows with the ranks";
  return "";
}

// "12.5%" of WHOLE, or "n/a" when there is no whole to divide by.
std::string Percent(double part, double whole) {
  return whole > 0 ? Fmt("%.1f", 100 * part / whole) + "%" : std::string("n/a");
}

std::string CostShares(const RootCause &rc) {
  std::string out;
  // I/O time is wall time in the call, not CPU time: no CPU share; nor
  // where the cost exceeds the CPU time or the culprit's time there was
  // mostly off the CPU (time blocked is in it).
  const bool mostly_off_cpu = rc.culprit_off_cpu > 0.5 * rc.culprit_time;
  if (!rc.communication && !rc.io && !mostly_off_cpu && rc.rank_cpu > 0 &&
      rc.cost_seconds <= rc.rank_cpu)
    out = Percent(rc.cost_seconds, rc.rank_cpu) + " of that rank's CPU time " +
          Fmt("%.3f", rc.rank_cpu) + " s, ";
  return out + Percent(rc.cost_seconds, rc.wall_time) + " of the run's " +
         Fmt("%.3f", rc.wall_time) + " s wall time";
}

std::string OffCpuShare(const RootCause &rc) {
  if (rc.culprit_off_cpu < 0.05 * rc.culprit_time || rc.culprit_off_cpu <= 0)
    return "";
  return " (of it " + Fmt("%.3f", rc.culprit_off_cpu) +
         " s blocked off the CPU: a sleep, a system call or a page fault)";
}

std::string SavingsOverlapText(const DetectResult &r) {
  if (r.savings_sum <= 0)
    return "";
  return "savings overlap: the causes listed would save " + Fmt("%.3f", r.savings_sum) +
         " s fixed one at a time, more than the run's " + Fmt("%.3f", r.savings_wall) +
         " s wall time, so at least " + Fmt("%.3f", r.savings_sum - r.savings_wall) +
         " s of it is counted twice (the same waits, or one critical path): fixing all saves at "
         "most the wall time";
}

const Run &BigRun(const ReportInput &in) { return in.runs[in.result.backtrack_run]; }

double Total(const ReportInput &in) { return BigRun(in).total_time; }

std::string SamplingLine(const std::vector<Run> &runs) {
  if (runs.empty())
    return "";
  const SamplingInfo &s = runs.front().meta.sampling;
  std::string line = "sampling: " + s.source + ", " + Fmt("%g", s.hz) + " Hz asked; obtained";
  bool short_of = false;
  for (size_t i = 0; i < runs.size(); ++i) {
    line += (i ? " / " : " ") + Fmt("%.0f", runs[i].obtained_rate);
    short_of = short_of || runs[i].obtained_rate < 0.9 * runs[i].meta.sampling.hz;
  }
  line += " Hz of CPU time";
  if (short_of && s.source == "cpu-timer")
    line += " (CPU-time timers fire at most once per kernel tick; each sample stands for the CPU "
            "time measured since the one before; --sampler perf gives the asked rate)";
  return line;
}

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

} // namespace report_common
} // namespace scalana
