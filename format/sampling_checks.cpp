#include "scalana/sampling_checks.h"

#include <algorithm>
#include <cstdio>

namespace scalana {

std::string BlockedSamplingWarning(const Profile &profile) {
  constexpr double kNoticeable = 0.05;
  int count = 0, worst_rank = -1;
  double worst = 0, least = 1;
  for (const RankData &r : profile.ranks) {
    if (r.cpu_time <= 0)
      continue;
    double share = std::min(1.0, r.sampling_blocked / r.cpu_time);
    if (share < kNoticeable)
      continue;
    ++count;
    least = std::min(least, share);
    if (share > worst) {
      worst = share;
      worst_rank = r.rank;
    }
  }
  if (!count)
    return "";
  auto pct = [](double x) { return std::to_string(int(100 * x + 0.5)) + "%"; };
  std::string what = count == 1
                         ? "rank " + std::to_string(worst_rank) +
                               " blocked the sampling signal for " + pct(worst) + " of its CPU time"
                         : std::to_string(count) + " ranks blocked the sampling signal for " +
                               pct(least) + "-" + pct(worst) + " of their CPU time (rank " +
                               std::to_string(worst_rank) + " the most)";
  return what + ": that time has no samples, so no vertex shows it";
}

std::string UndersampledThreadsWarning(const Profile &profile) {
  // Thresholds: enough CPU time that a rate means something (50 ms is a dozen
  // ticks at 250 Hz), and a shortfall no noise explains.
  constexpr double kMinCpu = 0.05, kShortfall = 0.25;
  if (profile.meta.sampling.hz <= 0)
    return "";
  auto Hz = [](const ThreadInfo &t) { return double(t.samples) / t.cpu_seconds; };
  int count = 0, worst_rank = -1;
  ThreadInfo worst;
  double worst_ratio = 1, worst_ref = 0;
  for (const RankData &r : profile.ranks) {
    double best = 0;
    for (const ThreadInfo &t : r.thread_info)
      if (t.cpu_seconds >= kMinCpu)
        best = std::max(best, Hz(t));
    if (best <= 0)
      continue;
    for (const ThreadInfo &t : r.thread_info) {
      if (t.cpu_seconds < kMinCpu || Hz(t) >= kShortfall * best)
        continue;
      ++count;
      if (Hz(t) / best < worst_ratio) {
        worst_ratio = Hz(t) / best;
        worst_rank = r.rank;
        worst = t;
        worst_ref = best;
      }
    }
  }
  if (!count)
    return "";
  char line[512];
  std::snprintf(line, sizeof line,
                "%d thread%s sampled far below %s rank's best-sampled thread (the worst: rank %d "
                "thread %u, %llu samples over %.2f CPU s, %.0f Hz against %.0f Hz): a thread that "
                "runs in bursts shorter than the kernel's tick on a core it shares is seldom "
                "running when a CPU-time timer is checked, and only its samples place its time "
                "(--sampler perf samples at the asked rate; or give each thread a core)",
                count, count == 1 ? "" : "s", count == 1 ? "its" : "their", worst_rank, worst.index,
                (unsigned long long)worst.samples, worst.cpu_seconds, Hz(worst), worst_ref);
  return line;
}

std::vector<std::string> SamplingWarnings(const Profile &profile) {
  std::vector<std::string> out;
  for (std::string w : {BlockedSamplingWarning(profile), UndersampledThreadsWarning(profile)})
    if (!w.empty())
      out.push_back(std::move(w));
  return out;
}

} // namespace scalana
