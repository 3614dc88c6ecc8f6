// The report's two lists after the root causes: causes too small to matter
// (DetectResult::minor_causes) and growth that is the machine's
// (DetectResult::contention), one line each, in text and on the page.
#pragma once

#include "report/report.h"

#include <ostream>

namespace scalana {

// "== Minor causes ==" and "== Machine contention ==": nothing when empty.
void WriteCauseListsText(const ReportInput &in, std::ostream &out);
// The same as two small tables under the root causes.
void WriteCauseListsHtml(const ReportInput &in, std::ostream &out);

} // namespace scalana
