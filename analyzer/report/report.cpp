// The text sink of the detection results (docs/detect.md §6), and the
// source snippets every sink shows; JSON is json_report.cpp's.
#include "report/report.h"
#include "ppg/rank_time.h"
#include "report/async_report.h"
#include "report/cause_lists.h"
#include "report/model_scales.h"
#include "report/predict_report.h"
#include "report/report_common.h"

#include "scalana/regular_file.h"
#include "scalana/text_escape.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace scalana {

using namespace report_common;

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
  out << "binary: " << Safe(in.binary) << "\n";
  if (!in.psg.structure_source().empty())
    out << "structure: " << Safe(in.psg.structure_source()) << "\n";
  out << "runs:";
  // Wall time, and the busiest rank's measured time (sampled CPU time plus
  // MPI time): less than wall time when ranks share cores or wait unsampled.
  for (const Run &run : in.runs) {
    out << "  " << Safe(run.label) << " (" << RankCount(run.world_size);
    if (run.meta.wall_time > 0)
      out << ", wall " << Fmt("%.3f", run.meta.wall_time) << " s";
    out << ", " << MeasuredText(run) << ")";
  }
  out << "\n";
  // Ranks that waited for a core are said before anything measured in wall
  // time is read (docs/detect.md, "Time accounting").
  const TimeSummary time = SummariseTime(big);
  if (std::string shared = SharedCoresLine(time); !shared.empty())
    out << Safe(shared) << " (" << Safe(big.label) << ")\n";
  if (std::string line = SamplingLine(in.runs); !line.empty())
    out << line << "\n";
  if (std::string split = TimeLine(time); !split.empty())
    out << Safe(split) << " (" << Safe(big.label) << ")\n";
  out << "merge: " << ToString(in.options.merge) << ", scaling: " << ToString(in.options.scaling);
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
  if (std::string few = FewScalesText(in.runs); !few.empty())
    out << "models: " << few << "\n";
  for (const auto &[pattern, n] : r.comm_layer_vertices)
    out << "communication layer: " << Safe(pattern) << " (" << n
        << " vertices; their time counts as waiting)\n";
  for (const std::string &w : r.warnings)
    out << "warning: " << Safe(w) << "\n";
  for (const std::string &h : r.hints)
    out << "hint: " << Safe(h) << "\n";

  out << "\n== Root causes (backtracking on " << Safe(big.label) << ", "
      << RankCount(big.world_size) << ") ==\n";
  if (r.root_causes.empty())
    out << Safe(NoCauseText(in)) << "\n";
  if (!r.inconclusive.empty())
    out << Safe(r.inconclusive) << "\n";
  if (std::string overlap = SavingsOverlapText(r); !overlap.empty())
    out << overlap << "\n";
  if (!r.root_causes.empty())
    out << OrderText(in) << "\n";
  int n = 0;
  for (const RootCause &rc : r.root_causes) {
    const Vertex &x = in.psg.vertex(rc.vertex);
    out << "\n#" << ++n << "  " << (rc.io ? "io" : ToString(x.kind)) << " at "
        << Safe(Where(in.psg, rc.vertex)) << "  (" << Safe(FunctionName(in.psg, rc.vertex))
        << ")\n";
    out << "    call path: " << Safe(JoinPath(CallSites(in.psg, rc.vertex)))
        << (rc.contexts > 1 ? "  (the costliest of the line's " + std::to_string(rc.contexts) +
                                  " contexts; figures are the line's)"
                            : std::string())
        << "\n";
    out << "    ranks:     " << RankList(rc.ranks) << "\n";
    out << "    culprit:   " << Culprit(rc)
        << (rc.thread_imbalance ? " (imbalance among the rank's OpenMP threads)" : "") << "\n";
    out << "    costs:     " << Fmt("%.3f", rc.cost_seconds) << " s on rank " << rc.culprit_rank
        << " ("
        << (rc.communication || rc.cost_is_growth ? "growth beyond the expected scaling"
                                                  : "time over its median")
        << "): " << CostShares(rc) << "; score " << Fmt("%.3f", rc.score)
        << " (of the busiest rank's " << Fmt("%.3f", Total(in)) << " s)\n";
    if (rc.thread_imbalance)
      out << "    time:      " << Culprit(rc) << " spends " << Fmt("%.3f", rc.culprit_time)
          << " s here, median over the rank's other threads " << Fmt("%.3f", rc.median_time)
          << " s\n";
    else
      out << "    time:      rank " << rc.culprit_rank << " spends " << Fmt("%.3f", rc.culprit_time)
          << " s here" << OffCpuShare(rc) << ", median over ranks " << Fmt("%.3f", rc.median_time)
          << " s\n";
    out << "    if fixed:  ";
    if (rc.saved_seconds > 0)
      out << "about " << Fmt("%.3f", rc.saved_seconds) << " s less wall time";
    else
      out << "no wall time saved (no rank waits for it and rank " << rc.culprit_rank
          << " is not the slowest)";
    if (rc.waiting_ranks > 0)
      out << "; " << Fmt("%.3f", rc.waits_caused) << " s of waiting on "
          << RankCount(rc.waiting_ranks) << " traced to it";
    if (rc.waiting_threads > 0)
      out << "; " << Fmt("%.3f", rc.thread_waits_caused) << " s of barrier waits on "
          << rc.waiting_threads << " other thread" << (rc.waiting_threads == 1 ? "" : "s")
          << " of rank " << rc.culprit_rank;
    out << "\n";
    for (const std::string &b : rc.bounds)
      out << "    bounded:   " << Safe(b) << "\n";
    out << "    why:       " << WhyText(rc) << "\n";
    if (rc.communication) {
      out << "    grows:     per rank, " << rc.small_ranks << " -> " << rc.big_ranks << " ranks:";
      for (const CommGrowth &g : rc.growth)
        out << " " << g.what << " " << Fmt(g.what == "time" ? "%.3f" : "%.4g", g.small) << " -> "
            << Fmt(g.what == "time" ? "%.3f" : "%.4g", g.big) << (g.what == "time" ? " s" : "")
            << ";";
      out << "\n    explains:  " << Safe(rc.explanation) << "\n";
    } else if (std::string g = ThreadGrowthText(rc); !g.empty()) {
      out << "    grows:     " << g << "\n";
    }
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
          << (ps.thread >= 0 ? " thread " + std::to_string(ps.thread) : std::string()) << "  "
          << Safe(Where(in.psg, ps.vertex)) << "  " << Fmt("%.3f", ps.time) << " s";
      if (ps.via != "prev" && ps.via != "control")
        out << "  [" << ps.via;
      if (ps.wait > 0)
        out << (ps.via == "barrier" ? ", the other threads waited " : ", waited ")
            << Fmt("%.3f", ps.wait) << " s";
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

  WriteCauseListsText(in, out);
  WritePredictionText(in, out);
  WriteHotSpotsText(in, out);

  out << "\n== Non-scalable vertices ==\n";
  if (in.runs.size() < 2 || r.non_scalable.empty())
    out << (r.non_scalable.empty() ? "none\n" : "");
  // Rows that would read the same (one line, one caller) differ deeper in
  // their calling context: those rows show their whole call path.
  std::map<std::string, int> seen_labels;
  for (const NonScalableVertex &ns : r.non_scalable)
    ++seen_labels[Where(in.psg, ns.vertex) + "  " + Describe(in.psg, ns.vertex)];
  for (const NonScalableVertex &ns : r.non_scalable) {
    std::string label = Where(in.psg, ns.vertex) + "  " + Describe(in.psg, ns.vertex);
    if (ns.contexts > 1)
      label += "  (the line, summed over its " + std::to_string(ns.contexts) + " contexts)";
    else if (seen_labels[label] > 1)
      label += "  via " + JoinPath(CallSites(in.psg, ns.vertex));
    out << "  " << Safe(label) << "  slope " << Fmt("%.2f", ns.slope) << " (expected "
        << Fmt("%.2f", ns.expected) << "), share " << Fmt("%.1f", 100 * ns.share) << "%"
        << (ns.share < in.options.min_share
                ? " (" + Fmt("%.1f", 100 * ns.share_ahead) + "% at " +
                      std::to_string(NonScalableVertex::kShareAhead * BigRun(in).world_size) +
                      " ranks if its slope and the program's hold)"
                : std::string())
        << ", score " << Fmt("%.3f", ns.score) << "  [";
    for (size_t i = 0; i < ns.merged.size(); ++i)
      out << (i ? " " : "") << ns.merged[i].first << ":" << Fmt("%.3g", ns.merged[i].second);
    out << "]\n";
    if (ns.model.ok && ModelFollowsSlope(ns))
      out << "    model: " << ModelText(ns.model) << "  (leading " << LeadingText(ns.model) << ", "
          << ns.model.Confidence() << " confidence)\n";
    else if (ns.model.ok)
      out << "    model: " << Safe(ModelSlopeText(ns)) << "\n";
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

} // namespace scalana
