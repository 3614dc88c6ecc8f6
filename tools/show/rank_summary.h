// `scalana show`'s per-rank tables folded over the ranks, for runs too large
// to print rank by rank: each vertex's, MPI call's and dependence kind's
// spread over the ranks (min, median, max) and the ranks that stand out.
#pragma once

#include "scalana/profile.h"

#include <cstdint>
#include <functional>
#include <string>

namespace scalana {

// Runs with more ranks with data than this print the summary by default.
inline constexpr size_t kShowEachRankUpTo = 64;

// A rank stands out when its value is over this times the median over all
// ranks (0 where it has no row), or under the median divided by it: the
// abnormal threshold `detect` uses by default.
inline constexpr double kStandOut = 1.3;

// Prints the summary of P's ranks; DESCRIBE names a context as the per-rank
// tables do. Counter values are left to the per-rank tables.
void PrintRankSummary(const Profile &p, const std::function<std::string(uint32_t)> &describe);

} // namespace scalana
