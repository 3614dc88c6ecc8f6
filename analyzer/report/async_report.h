// The hot-spot section of the text and JSON reports (docs/async.md).
#pragma once

#include "report/report.h"

#include <nlohmann/json_fwd.hpp>
#include <ostream>

namespace scalana {

// "hot spots:" and one entry per hot spot; nothing when there is none.
void WriteHotSpotsText(const ReportInput &in, std::ostream &out);
// Sets DOC["hot_spots"] to the list (empty when there is none).
void WriteHotSpotsJson(const ReportInput &in, nlohmann::json &doc);

} // namespace scalana
