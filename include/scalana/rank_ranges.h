// Rank lists as ranges, so a list of a million ranks stays a few words long:
// shared by the reports and `scalana show`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace scalana {

// Ascending, runs of consecutive ranks as ranges: "0-3,7,9-12"; cut with
// ",..." before it passes MAX_CHARS (the count of ranks is the caller's).
inline std::string RankRanges(const std::vector<int> &ranks, size_t max_chars = SIZE_MAX) {
  std::vector<int> r(ranks);
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  std::string s;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1)
      ++j;
    std::string piece = std::to_string(r[i]) + (j > i ? "-" + std::to_string(r[j]) : "");
    if (!s.empty() && s.size() + 1 + piece.size() > max_chars)
      return s + ",...";
    s += (s.empty() ? "" : ",") + piece;
    i = j + 1;
  }
  return s;
}

} // namespace scalana
