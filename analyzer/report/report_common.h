// Naming and formatting shared by the report writers (text, JSON, HTML) and
// the exporters, so every output names a vertex the same way.
#pragma once

#include "report/report.h"
#include "scalana/rank_ranges.h"

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace scalana {
namespace report_common {

std::string FileOf(const Psg &psg, VertexId v);

std::string FunctionName(const Psg &psg, VertexId v);

std::string BaseName(const std::string &path);

// The calls from main down to V, each with the line it is made from:
// "main > Dot (cg.c:145)". The same function called from two places gives
// two vertices at the same line; this is what tells them apart.
std::vector<std::string> CallSites(const Psg &psg, VertexId v);

std::string VertexName(const Psg &psg, VertexId v);

// "loop in relax", "mpi MPI_Send", "call solve": for lists that show no kind
// column; with the call site when the code is not main's ("mpi MPI_Allreduce
// in Dot called at cg.c:145").
std::string Describe(const Psg &psg, VertexId v);

std::string Where(const Psg &psg, VertexId v);

std::string Fmt(const char *fmt, double x);

std::string RankCount(int n);

// RUN's measured time for the runs line: "busiest rank measured 0.373 s";
// with samples its binary's debug information could not place (a stripped
// binary), also "812 samples not placed (no symbols)", and never a busiest
// rank's 0 s when nothing was placed: "812 samples measured, none placed
// (no symbols)".
std::string MeasuredText(const Run &run);
// The line under "Root causes" when there are none: why, including that
// nothing could be placed.
std::string NoCauseText(const ReportInput &in);

// One growth figure per vertex: NS's model is shown beside its log-log
// slope only when it grows as that slope does over the measured scales
// (within 0.5 of it). Otherwise ModelSlopeText says why it is not.
bool ModelFollowsSlope(const NonScalableVertex &ns);
std::string ModelSlopeText(const NonScalableVertex &ns);

// One sentence on the order of the root causes (docs/detect.md §5.3).
std::string OrderText(const ReportInput &in);

// RANKS as ranges ("0-3,7"), cut near MAX entries' worth of text, with the
// count when there are more than MAX.
std::string RankList(const std::vector<int> &ranks, size_t max = 16);
// "rank 3 thread 0", or "rank 3" when no thread of it stands out.
std::string Culprit(const RootCause &rc);

std::string JoinPath(const std::vector<std::string> &parts);

// Every string of the text report that came from a file or the command line
// (paths, names, counter names, warnings quoting them): controls escaped.
std::string Safe(const std::string &s);

// Control characters too: the page may be printed to a terminal.
std::string HtmlEscape(const std::string &s);

// Where V's relative file name is looked up: the compilation directory of the
// record holding V's function, then the directories the caller gives.
std::vector<std::string> SourceDirsOf(const ReportInput &in, VertexId v);

// "x.c not found (looked in /a, /b)": says where, so the fix (run from
// elsewhere, or move the sources back) is plain.
std::string NotFound(const ReportInput &in, VertexId v);

// What made RC a cause, in words (never blank).
std::string WhyText(const RootCause &rc);
// What grew of a thread imbalance marked non-scalable for its own growth
// (MarkGrowingImbalance): the largest thread excess at both ends; "" for
// other causes.
std::string ThreadGrowthText(const RootCause &rc);

// "12.5%" of WHOLE, or "n/a" when there is no whole to divide by.
std::string Percent(double part, double whole);

// RC's cost against what it is of: a computation cause's against its rank's
// CPU time and the wall time, a communication cause's against the wall time
// ("20.0% of that rank's CPU time 10.000 s, 5.0% of the run's 40.000 s wall
// time"). Why: CPU plus MPI wall time made a loop of 6% of a rank's CPU read
// 0.4% on shared cores.
std::string CostShares(const RootCause &rc);
// " (of it 0.804 s blocked off the CPU: ...)" where a notable share of the
// culprit's time at the cause was off the CPU, else "".
std::string OffCpuShare(const RootCause &rc);
// One sentence when the listed causes' savings sum past the wall time: they
// overlap, and by how much ("" when they do not).
std::string SavingsOverlapText(const DetectResult &r);
// The source and the rate each run obtained (Run::obtained_rate), with why
// when it fell short of the rate asked: counts follow the rate obtained,
// times are measured. "" without runs.
std::string SamplingLine(const std::vector<Run> &runs);

const Run &BigRun(const ReportInput &in);

double Total(const ReportInput &in);

// PSG vertices in program order (pre-order from the root, children in
// execution order): index by VertexId; vertices not reached come last.
std::vector<size_t> ProgramOrder(const Psg &psg);

// The picture of the PPG part the backtracking walked: one row per vertex in
// program order, one column per group of ranks that a shown path visits
// (ranks whose paths visit the same vertices share a column, labelled with
// their ranges, "ranks 0-3,7"; at most kMaxPpgColumns), one node per (vertex,
// column) on a path, one arrow per step of each path, taken from the symptom
// back to the cause. Crossings (steps to another rank over a waiting edge) are
// class "crossing"; problematic steps' nodes class "problematic". Row labels
// are unique (a context's call site, else "#k", tells twins apart) and the
// left column is as wide as its longest label, so no text covers another.
// Crossings carry their edge and wait as a tooltip and in CROSSING_LIST;
// EDGE_LABELS draws them on the arrows too (for Graphviz's own layout).
inline constexpr size_t kMaxPpgColumns = 10;
struct PpgCrossing {
  std::string id;       // the arrow's SVG id ("arrow3")
  size_t cause = 0;     // index of the root cause whose path it is on
  std::string from, to; // "rank 5: mpi MPI_Recv (fig3.c:36)"
  std::string via;      // p2p | collective | rma
  double wait = 0;      // seconds
};
struct PpgPicture {
  std::string dot;        // DOT with pinned positions (lay out with neato -n2)
  size_t nodes = 0;       // (vertex, column) nodes on paths
  size_t crossings = 0;   // distinct arrows between ranks
  size_t steps = 0;       // distinct arrows within a rank
  size_t causes = 0;      // root causes whose paths are drawn
  size_t columns = 0;     // rank groups drawn
  size_t ranks = 0;       // distinct ranks the drawn paths visit
  bool truncated = false; // paths cut to keep the picture readable
  std::vector<PpgCrossing> crossing_list;
};
// LINK(v): the URL a node of V leads to ("" for none).
PpgPicture BuildPpgPicture(const ReportInput &in, size_t max_causes, size_t max_nodes,
                           const std::function<std::string(VertexId)> &link = {},
                           bool edge_labels = false);

// `--format dot`: the PPG picture as DOT on OUT.
void WritePpgDot(const ReportInput &in, std::ostream &out);

} // namespace report_common
} // namespace scalana
