// The answer of the HTML report, at the top of the page: the root causes in
// one table (where, kind, ranks, cost, score, what a fix saves), then one
// card each with the text report's figures, its scaling plot, its
// backtracking path and per-rank bars.
#include "report/cause_lists.h"
#include "report/html_parts.h"
#include "report/names.h"
#include "report/report_common.h"

#include <algorithm>

namespace scalana {
namespace html {

using namespace report_common;

namespace {

std::string SavedText(const RootCause &rc) {
  return rc.saved_seconds > 0 ? Fmt("%.3f s", rc.saved_seconds) : std::string("none");
}

void WritePathTable(const ReportInput &in, const RootCause &rc, std::ostream &out) {
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
        << "</td><td>" << HtmlEscape(ps.via) << "</td><td>" << Fmt("%.3f", ps.wait) << "</td></tr>";
  }
  out << "</table></details>\n";
}

// Per-rank bars of the vertices on the path, in the run walked; the
// counters of the root cause's vertex where the run has them.
void WriteRankBars(const ReportInput &in, const RootCause &rc, bool open, std::ostream &out) {
  const Run &big = BigRun(in);
  std::vector<VertexId> on_path{rc.vertex};
  for (const PathStep &ps : rc.path)
    if (on_path.size() < 6 && std::find(on_path.begin(), on_path.end(), ps.vertex) == on_path.end())
      on_path.push_back(ps.vertex);
  out << "<details class=rankbars" << (open ? " open" : "")
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
  out << "</details>";
}

} // namespace

void WriteCauseSummary(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  out << "<h2 id=causes>Root causes (" << HtmlEscape(BigRun(in).label) << ", "
      << RankCount(BigRun(in).world_size) << ")</h2>\n";
  if (!r.inconclusive.empty())
    out << "<p class=inconclusive><b>" << HtmlEscape(r.inconclusive) << "</b></p>\n";
  if (std::string overlap = SavingsOverlapText(r); !overlap.empty())
    out << "<p class=inconclusive>" << HtmlEscape(overlap) << "</p>\n";
  if (r.root_causes.empty()) {
    out << "<p>" << HtmlEscape(NoCauseText(in)) << "</p>\n";
    return;
  }
  out << "<table id=cause-table><tr><th>#</th><th>where</th><th>what</th><th>ranks</th>"
         "<th>cost</th><th>score</th><th>if fixed, saves</th><th>why</th></tr>\n";
  int n = 0;
  for (const RootCause &rc : r.root_causes) {
    ++n;
    const Vertex &x = in.psg.vertex(rc.vertex);
    std::string at = BaseName(FileOf(in.psg, rc.vertex)) + ":" + std::to_string(x.loc.line);
    out << "<tr id=rc" << n << "><td>" << n << "</td><td><a class=where href='#cause" << n
        << "' title=\"" << HtmlEscape(Where(in.psg, rc.vertex)) << "\">" << HtmlEscape(at)
        << "</a></td><td>" << ToString(x.kind) << " "
        << HtmlEscape(ReadableName(VertexName(in.psg, rc.vertex), 40)) << "</td><td title=\""
        << HtmlEscape(RankRanges(rc.ranks)) << "\">" << HtmlEscape(RankRanges(rc.ranks, 24))
        << "</td><td>" << Fmt("%.3f s", rc.cost_seconds) << " ("
        << Percent(rc.cost_seconds, rc.wall_time) << " of wall)</td><td>" << Fmt("%.3f", rc.score)
        << "</td><td>" << SavedText(rc)
        << (rc.waiting_ranks > 0 ? "; " + Fmt("%.3f s", rc.waits_caused) + " waiting on " +
                                       RankCount(rc.waiting_ranks)
                                 : std::string())
        << "</td><td>" << HtmlEscape(rc.thin_data ? "thin data; " + WhyText(rc) : WhyText(rc))
        << "</td></tr>\n";
    if (n == 20 && r.root_causes.size() > 20) {
      out << "<tr><td colspan=8>" << r.root_causes.size() - 20
          << " more below, in the cards</td></tr>\n";
      break;
    }
  }
  out << "</table>\n";
  // Under the table, so the first cause stays on the first screen.
  out << "<p class=order>" << HtmlEscape(OrderText(in)) << "</p>\n";
}

void WriteCauseDetails(const ReportInput &in, size_t plots_for, std::ostream &out) {
  const DetectResult &r = in.result;
  int n = 0;
  for (const RootCause &rc : r.root_causes) {
    const Vertex &x = in.psg.vertex(rc.vertex);
    ++n;
    out << "<div class=cause id=cause" << n << "><div class=facts><b>#" << n << " "
        << ToString(x.kind) << " at <a href='#src-v" << rc.vertex << "'><code>"
        << HtmlEscape(Where(in.psg, rc.vertex)) << "</code></a></b> in <code>"
        << HtmlEscape(FunctionName(in.psg, rc.vertex)) << "</code><br>"
        << (rc.ranks.size() == 1 ? "rank " : "ranks ") << HtmlEscape(RankRanges(rc.ranks, 80))
        << (rc.ranks.size() > 1 ? " (" + RankCount(int(rc.ranks.size())) + ")" : "")
        << "<br>call path: <code>" << HtmlEscape(JoinPath(CallSites(in.psg, rc.vertex)))
        << "</code>"
        << (rc.contexts > 1 ? " (the costliest of the line's " + std::to_string(rc.contexts) +
                                  " contexts; figures are the line's)"
                            : std::string())
        << "<br>";
    // The text report's figures: what the cost is of, what a fix gives back.
    out << "cost: " << Fmt("%.3f", rc.cost_seconds) << " s on rank " << rc.culprit_rank << " ("
        << (rc.communication || rc.cost_is_growth ? "growth beyond the expected scaling"
                                                  : "time over its median")
        << "), " << HtmlEscape(CostShares(rc)) << "; score " << Fmt("%.3f", rc.score);
    // As the text report: a thread's time against its team's, or a rank's.
    if (rc.thread_imbalance)
      out << "<br>time: " << HtmlEscape(Culprit(rc)) << " spends " << Fmt("%.3f", rc.culprit_time)
          << " s here, median over the rank's other threads " << Fmt("%.3f", rc.median_time)
          << " s";
    else
      out << "<br>time: rank " << rc.culprit_rank << " spends " << Fmt("%.3f", rc.culprit_time)
          << " s here" << HtmlEscape(OffCpuShare(rc)) << ", median over ranks "
          << Fmt("%.3f", rc.median_time) << " s";
    out << "<br>if fixed: ";
    if (rc.saved_seconds > 0)
      out << "about " << Fmt("%.3f", rc.saved_seconds) << " s less wall time";
    else
      out << "no wall time saved (off the critical path)";
    if (rc.waiting_ranks > 0)
      out << ", " << Fmt("%.3f", rc.waits_caused) << " s of waiting on "
          << HtmlEscape(RankCount(rc.waiting_ranks)) << " traced to it";
    for (const std::string &b : rc.bounds)
      out << "<br>bounded: " << HtmlEscape(b);
    out << "<br>why: " << HtmlEscape(WhyText(rc)) << "<br>";
    if (rc.communication)
      out << "communication that no computation explains: " << HtmlEscape(rc.explanation) << "<br>";
    else if (std::string g = ThreadGrowthText(rc); !g.empty())
      out << "grows: " << HtmlEscape(g) << "<br>";
    if (rc.thin_data)
      out << "thin data: " << Fmt("%.1f", rc.signal_to_noise)
          << " standard deviations; a run about " << Fmt("%.0f", rc.run_longer)
          << "x longer would settle it<br>";
    for (const CounterEvidence &e : rc.evidence)
      out << HtmlEscape(e.counter) << ": " << Fmt("%.3g", e.culprit) << " vs median "
          << Fmt("%.3g", e.median) << "; ";
    WritePathTable(in, rc, out);
    out << "</div>";
    if (size_t(n) <= plots_for)
      out << "<div class='fig causefig'><p>time per scale: " << ToString(in.options.merge)
          << " over the ranks that run it (dots), slowest rank (squares)</p>"
          << ScalingPlot(PlotDataOf(in, rc), "causeplot" + std::to_string(n), "causeplot")
          << "</div>";
    WriteRankBars(in, rc, n == 1, out);
    out << "</div>\n";
  }
}

} // namespace html
} // namespace scalana
