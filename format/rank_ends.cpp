// How the ranks of an incomplete run ended, in words for the reports
// (profile.h: DescribeRankEnd, DescribeRankEnds).
#include "profile_internal.h"
#include "scalana/profile.h"

#include <signal.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace scalana {

namespace {

std::string SignalName(int sig) {
  static const std::pair<int, const char *> kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
      {SIGSEGV, "SIGSEGV"}, {SIGPIPE, "SIGPIPE"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"}};
  for (const auto &[n, name] : kNames)
    if (n == sig)
      return name;
  return "signal " + std::to_string(sig);
}

// "rank 1", "ranks 0,2,3", "ranks 4-9,12,...": runs of three or more as
// ranges, at most 20 items.
std::string RankList(const std::vector<int> &ranks) {
  std::string s;
  size_t items = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (items++ == 20) {
      s += ",...";
      break;
    }
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    s += (s.empty() ? "" : ",") + std::to_string(ranks[i]);
    if (j >= i + 2) {
      s += "-" + std::to_string(ranks[j]);
      i = j;
    }
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + s;
}

// What a marker's reason means.
std::string UnwrittenReason(const std::string &why) {
  return why == "ENOSPC" ? "could not write: no space left on the device"
                         : "could not write (" + why + ")";
}

} // namespace

std::string detail::DescribeUnwritten(const std::vector<int> &ranks, const std::string &why) {
  return RankList(ranks) + " " + UnwrittenReason(why);
}

std::string DescribeRankEnd(const RankData &r) {
  auto has = [&](const char *what) {
    auto it = r.errors.find(what);
    return it != r.errors.end() && it->second > 0;
  };
  std::string sig = r.end_signal ? SignalName(r.end_signal) : "";
  char at[32];
  std::snprintf(at, sizeof at, "%.1f s", r.wall_time);
  // The rank's last write failed: what its file holds is older than its end.
  if (!r.unwritten.empty())
    return UnwrittenReason(r.unwritten) + (r.snapshot ? "; data up to its last periodic "
                                                        "snapshot, " +
                                                            std::string(at) + " after it started"
                                                      : std::string());
  // An end record made from the last snapshot (no time was left for more).
  std::string data = r.snapshot ? std::string("; data up to its last periodic snapshot, ") + at +
                                      " after it started"
                                : std::string();
  if (has("ended_by_MPI_Abort"))
    return "called MPI_Abort" + data;
  if (has("ended_by_signal_term"))
    return (sig.empty() ? std::string("SIGTERM or SIGINT") : sig) +
           ", a request to stop (the MPI launcher sends it to every rank when one fails)" + data;
  if (has("ended_by_signal_fatal"))
    return "fatal signal" + (sig.empty() ? std::string() : " " + sig) + data;
  if (has("ended_by_exit_without_finalize"))
    return "exit without MPI_Finalize" + data;
  if (has("ended_by_final_profile_failed"))
    return "reached MPI_Finalize, but rank 0 could not write profile.json.gz" + data;
  for (const auto &[what, n] : r.errors)
    if (n > 0 && what.rfind("ended_by_", 0) == 0)
      return what.substr(9) + data;
  if (r.snapshot)
    return std::string("no end recorded, data up to its last periodic snapshot ") + at +
           " after it started (killed, e.g. by SIGKILL, or still running)";
  return "";
}

std::vector<std::string> DescribeRankEnds(const Profile &p) {
  std::map<std::string, std::vector<int>> by_end;
  std::vector<char> present(size_t(std::max(p.meta.world_size, 0)), 0);
  bool not_gathered = false;
  for (const RankData &r : p.ranks) {
    if (r.rank >= 0 && size_t(r.rank) < present.size())
      present[size_t(r.rank)] = 1;
    if (auto it = r.errors.find("ranks_missing"); it != r.errors.end() && it->second)
      not_gathered = true;
    std::string end = DescribeRankEnd(r);
    if (!end.empty())
      by_end[end].push_back(r.rank);
  }
  std::vector<std::string> lines;
  for (auto &[end, ranks] : by_end) {
    std::sort(ranks.begin(), ranks.end());
    lines.push_back(RankList(ranks) + " ended before MPI_Finalize: " + end);
  }
  std::map<std::string, std::vector<int>> unwritten; // reason -> ranks without data
  for (const auto &[rank, why] : p.unwritten)
    if (rank >= 0 && size_t(rank) < present.size() && !present[size_t(rank)]) {
      unwritten[why].push_back(rank);
      present[size_t(rank)] = 1;
    }
  for (const auto &[why, ranks] : unwritten)
    lines.push_back(RankList(ranks) + " left no data: it " + UnwrittenReason(why));
  std::vector<int> missing;
  for (size_t r = 0; r < present.size(); ++r)
    if (!present[r])
      missing.push_back(int(r));
  if (!missing.empty())
    lines.push_back(RankList(missing) + " left no data: " +
                    (not_gathered ? std::string("its data could not be gathered at MPI_Finalize")
                                  : std::string("no file in the run directory (it ended before "
                                                "MPI_Init returned, or without snapshots "
                                                "(--snapshot 0) and without recording its end, "
                                                "or could not write there)")));
  // Records of snapshot containers the reader could not use: torn writes,
  // corruption, another run's files. A few by name, the rest counted.
  constexpr size_t kNamed = 10;
  for (size_t i = 0; i < p.skipped.size() && i < kNamed; ++i)
    lines.push_back(p.skipped[i]);
  if (p.skipped.size() > kNamed)
    lines.push_back(std::to_string(p.skipped.size() - kNamed) +
                    " more snapshot container records skipped");
  return lines;
}

} // namespace scalana
