// How many scales the models rest on, against what Extra-P's modeler needs
// (docs/report.md, "Few scales"): the report, the page and JSON say when
// the runs have fewer, and which rank counts to add.
#pragma once

#include "ppg/ppg.h"

#include <string>
#include <vector>

namespace scalana {

// Extra-P's modeler wants at least this many points per parameter: below
// it warns on every model it makes.
inline constexpr size_t kExtrapMinScales = 5;

// The distinct rank counts of RUNS, ascending.
std::vector<int> ScalesOf(const std::vector<Run> &runs);

// Rank counts that would bring SCALES (ascending, distinct) to
// kExtrapMinScales, continuing their progression: a constant ratio (2, 4,
// 8 -> 16, 32), else cubes (1, 8, 27 -> 64, 125: codes that need a cube
// count), else squares, else doubling. Empty with enough scales already.
std::vector<int> ScalesToAdd(const std::vector<int> &scales);

// "the models rest on 3 scales (1, 8, 27): Extra-P's modeler needs 5 per
// parameter and warns on every model below that; add runs at 64 and 125
// ranks", or "" with enough scales (or only one: nothing is modelled).
std::string FewScalesText(const std::vector<Run> &runs);

} // namespace scalana
