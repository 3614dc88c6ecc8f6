#include "report/cause_lists.h"

#include "report/report_common.h"

namespace scalana {

using namespace report_common;

namespace {

std::string MinorTitle(const ReportInput &in) {
  return "Minor causes (each would save under " + Fmt("%g", 100 * in.options.minor_share) +
         "% of the wall time and costs under it of its rank's CPU time; --minor-share)";
}

const char *kContentionTitle =
    "Machine contention (growth that ranks sharing cores, caches and memory bandwidth explain: "
    "no line to fix, no time a fix would save)";

// "mpi MPI_Allreduce at cg.c:102 (Dot), rank 4": what, where, whose.
std::string Head(const ReportInput &in, const RootCause &rc) {
  const Vertex &x = in.psg.vertex(rc.vertex);
  return std::string(rc.io ? "io" : ToString(x.kind)) + " " + VertexName(in.psg, rc.vertex) +
         " at " + Where(in.psg, rc.vertex) + " (" + FunctionName(in.psg, rc.vertex) + "), " +
         Culprit(rc);
}

std::string MinorFigures(const RootCause &rc) {
  return "costs " + Fmt("%.3f", rc.cost_seconds) + " s, saves " +
         (rc.saved_seconds > 0 ? Fmt("%.3f", rc.saved_seconds) + " s" : std::string("nothing")) +
         " (" + Percent(rc.saved_seconds, rc.wall_time) + " of the wall time)" +
         (rc.thin_data ? "; thin data" : "");
}

// "... and 12 more (--top 10)": what the cut left out, never silently.
std::string More(const ReportInput &in, size_t shown, size_t total) {
  return total > shown ? "... and " + std::to_string(total - shown) + " more (--top " +
                             std::to_string(in.options.top) + ")"
                       : std::string();
}

} // namespace

void WriteCauseListsText(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  if (!r.minor_causes.empty()) {
    out << "\n== " << MinorTitle(in) << " ==\n";
    for (const RootCause &rc : r.minor_causes)
      out << "  " << Safe(Head(in, rc)) << ": " << MinorFigures(rc) << "\n";
    if (std::string more = More(in, r.minor_causes.size(), r.minor_count); !more.empty())
      out << "  " << more << "\n";
  }
  if (!r.contention.empty()) {
    out << "\n== " << kContentionTitle << " ==\n";
    for (const RootCause &rc : r.contention)
      out << "  " << Safe(Head(in, rc)) << ": " << Safe(rc.contention) << "\n";
    if (std::string more = More(in, r.contention.size(), r.contention_count); !more.empty())
      out << "  " << more << "\n";
  }
}

void WriteCauseListsHtml(const ReportInput &in, std::ostream &out) {
  const DetectResult &r = in.result;
  if (!r.minor_causes.empty()) {
    out << "<h3 id=minor-causes>" << HtmlEscape(MinorTitle(in)) << "</h3>\n<ul>";
    for (const RootCause &rc : r.minor_causes)
      out << "<li><code>" << HtmlEscape(Head(in, rc)) << "</code>: " << HtmlEscape(MinorFigures(rc))
          << "</li>";
    if (std::string more = More(in, r.minor_causes.size(), r.minor_count); !more.empty())
      out << "<li>" << HtmlEscape(more) << "</li>";
    out << "</ul>\n";
  }
  if (!r.contention.empty()) {
    out << "<h3 id=contention>" << HtmlEscape(kContentionTitle) << "</h3>\n<ul>";
    for (const RootCause &rc : r.contention)
      out << "<li><code>" << HtmlEscape(Head(in, rc)) << "</code>: " << HtmlEscape(rc.contention)
          << "</li>";
    if (std::string more = More(in, r.contention.size(), r.contention_count); !more.empty())
      out << "<li>" << HtmlEscape(more) << "</li>";
    out << "</ul>\n";
  }
}

} // namespace scalana
