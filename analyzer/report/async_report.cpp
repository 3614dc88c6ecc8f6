#include "report/async_report.h"

#include "report/report_common.h"

#include <nlohmann/json.hpp>

namespace scalana {

namespace {

const char *OperationWord(DepKind k) {
  return k == DepKind::Rma ? "one-sided operations" : "messages";
}

std::string Percent(double share) { return report_common::Fmt("%.0f%%", 100 * share); }

} // namespace

void WriteHotSpotsText(const ReportInput &in, std::ostream &out) {
  using namespace report_common;
  const std::vector<HotSpot> &spots = in.result.hot_spots;
  if (spots.empty())
    return;
  out << "\nhot spots (targets with far more than their fair share of one call's operations "
         "or bytes):\n";
  size_t n = 0;
  for (const HotSpot &h : spots) {
    const bool by_bytes = h.measure == HotMeasure::Bytes;
    out << "  #" << ++n << " rank " << h.target_rank << " receives " << Percent(h.share)
        << " of the " << (by_bytes ? "bytes" : OperationWord(h.kind)) << " of "
        << Safe(Describe(in.psg, h.vertex)) << " at " << Safe(Where(in.psg, h.vertex)) << " (";
    if (by_bytes)
      out << h.bytes_to_target << " of " << h.bytes << " bytes, in " << h.to_target << " of "
          << h.total << " " << OperationWord(h.kind);
    else
      out << h.to_target << " of " << h.total;
    out << "; fair share " << Percent(h.fair_share) << ")\n";
    if (h.loop != kNoVertex)
      out << "     producers' loop: " << Safe(Where(in.psg, h.loop)) << " in "
          << Safe(FunctionName(in.psg, h.loop)) << ", on " << RankList(h.producers) << "\n";
    out << "     shares by target:";
    for (const auto &[rank, share] : h.top_targets)
      out << " rank " << rank << " " << Percent(share) << ";";
    out << "\n     hottest target by scale:";
    for (const HotSpot::Scale &sc : h.by_scale)
      out << " " << RankCount(sc.ranks) << ": rank " << sc.target << " " << Percent(sc.share)
          << " (fair " << Percent(1.0 / sc.ranks) << ");";
    out << "\n";
  }
}

void WriteHotSpotsJson(const ReportInput &in, nlohmann::json &doc) {
  using nlohmann::json;
  using namespace report_common;
  json list = json::array();
  for (const HotSpot &h : in.result.hot_spots) {
    json j;
    const Vertex &v = in.psg.vertex(h.vertex);
    j["target_rank"] = h.target_rank;
    j["share"] = h.share;
    j["fair_share"] = h.fair_share;
    j["measure"] = h.measure == HotMeasure::Bytes ? "bytes" : "operations";
    j["operations_to_target"] = h.to_target;
    j["operations"] = h.total;
    j["bytes_to_target"] = h.bytes_to_target;
    j["bytes"] = h.bytes;
    j["kind"] = h.kind == DepKind::Rma ? "rma" : "send";
    j["name"] = VertexName(in.psg, h.vertex);
    j["file"] = FileOf(in.psg, h.vertex);
    j["line"] = v.loc.line;
    j["function"] = FunctionName(in.psg, h.vertex);
    if (h.loop != kNoVertex) {
      j["loop"] = {{"file", FileOf(in.psg, h.loop)},
                   {"line", in.psg.vertex(h.loop).loc.line},
                   {"function", FunctionName(in.psg, h.loop)}};
    } else {
      j["loop"] = nullptr;
    }
    j["producers"] = h.producers;
    json top = json::array();
    for (const auto &[rank, share] : h.top_targets)
      top.push_back({{"rank", rank}, {"share", share}});
    j["top_targets"] = top;
    json scales = json::array();
    for (const HotSpot::Scale &sc : h.by_scale)
      scales.push_back({{"ranks", sc.ranks}, {"target", sc.target}, {"share", sc.share}});
    j["by_scale"] = scales;
    list.push_back(std::move(j));
  }
  doc["hot_spots"] = std::move(list);
}

} // namespace scalana
