// `scalana show`'s time accounting of a rank (docs/runtime.md, "Time
// accounting"): the kernel's split of the main thread's wall time and each
// listed thread's CPU, run delay and lifetime.
#pragma once

#include "scalana/profile.h"

namespace scalana {

void PrintRankTime(const RankData &r);

} // namespace scalana
