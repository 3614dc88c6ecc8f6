// The page's "Where the time went" (docs/report.md): per run, one bar of
// all ranks' wall time split into computation, MPI, I/O, OpenMP waits and
// not placed, and the kernel's split beside it; the text report's lines
// under it. The bar sums seconds over ranks, so its parts add up to the
// whole; the lines give medians, as the text report does.
#include "ppg/rank_time.h"
#include "report/html_parts.h"
#include "report/report_common.h"

#include <string>
#include <vector>

namespace scalana::html {

using namespace report_common;

namespace {

struct Part {
  const char *name, *color;
  double seconds;
};

// One bar of PARTS, their shares of their sum, with the shares as its legend
// (parts of no time left out of both).
void Bar(const std::vector<Part> &parts, std::ostream &out) {
  double whole = 0;
  for (const Part &p : parts)
    whole += p.seconds;
  if (whole <= 0)
    return;
  out << "<div class=timebar>";
  for (const Part &p : parts)
    if (p.seconds > 0)
      out << "<span style=\"width:" << Fmt("%.2f", 100 * p.seconds / whole)
          << "%;background:" << p.color << "\" title=\"" << p.name << " "
          << Percent(p.seconds, whole) << "\"></span>";
  out << "</div><div class=timelegend>";
  for (const Part &p : parts)
    if (p.seconds > 0)
      out << "<span><i style=\"background:" << p.color << "\"></i>" << p.name << " "
          << Percent(p.seconds, whole) << "</span>";
  out << "</div>\n";
}

} // namespace

void WriteTimeSection(const ReportInput &in, std::ostream &out) {
  out << "<h2 id=time>Where the time went</h2>\n";
  const Run &big = BigRun(in);
  const TimeSummary largest = SummariseTime(big);
  if (std::string shared = SharedCoresLine(largest); !shared.empty())
    out << "<p class=warn><b>" << HtmlEscape(shared) << " (" << HtmlEscape(big.label)
        << ")</b></p>\n";
  out << "<table class=time><tr><th>run</th><th>the program's view: all ranks' wall time</th>"
         "<th>the kernel's view</th></tr>\n";
  for (const Run &run : in.runs) {
    double comp = 0, mpi = 0, io = 0, omp = 0, off = 0, off_delay = 0, left = 0, on_cpu = 0,
           delay = 0, blocked = 0;
    for (const RankTime &t : run.rank_time) {
      comp += t.computation, mpi += t.mpi, io += t.io, omp += t.omp_wait;
      off += t.off_cpu, off_delay += t.off_cpu_delay;
      left += t.not_placed();
      if (t.kernel_measured())
        on_cpu += t.on_cpu, delay += t.run_delay, blocked += t.blocked();
    }
    out << "<tr><td><code>" << HtmlEscape(run.label) << "</code> (" << RankCount(run.world_size)
        << ")</td><td>";
    Bar({{"computation", "#4e79a7", comp},
         {"MPI", "#f28e2b", mpi},
         {"I/O", "#b07aa1", io},
         {"OpenMP waits", "#edc948", omp},
         {"blocked off the CPU", "#76b7b2", off},
         {"waiting for a core", "#e15759", off_delay},
         {"not placed", "#bab0ac", left}},
        out);
    out << "</td><td>";
    if (on_cpu + delay + blocked > 0)
      Bar({{"on a CPU", "#59a14f", on_cpu},
           {"runnable, not running", "#e15759", delay},
           {"blocked", "#76b7b2", blocked}},
          out);
    else
      out << "not measured";
    out << "</td></tr>\n";
  }
  out << "</table>\n";
  if (std::string line = TimeLine(largest); !line.empty())
    out << "<p class=meta>" << HtmlEscape(line) << " (" << HtmlEscape(big.label) << ")</p>\n";
  if (std::string line = SamplingLine(in.runs); !line.empty())
    out << "<p class=meta>" << HtmlEscape(line) << "</p>\n";
}

} // namespace scalana::html
