#include "scalana/sampling_checks.h"

#include <algorithm>
#include <cstdio>
#include <string>

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

namespace {
// Thresholds: enough CPU time that a rate means something (50 ms is a dozen
// ticks at 250 Hz), and a shortfall no noise explains.
constexpr double kMinCpu = 0.05, kShortfall = 0.25;
double Hz(const ThreadInfo &t) { return double(t.samples) / t.cpu_seconds; }

// The best rate of R's threads with enough CPU time to judge; 0: none.
double BestThreadRate(const RankData &r) {
  double best = 0;
  for (const ThreadInfo &t : r.thread_info)
    if (t.cpu_seconds >= kMinCpu)
      best = std::max(best, Hz(t));
  return best;
}
} // namespace

std::string UndersampledThreadsWarning(const Profile &profile) {
  if (profile.meta.sampling.hz <= 0)
    return "";
  int count = 0, worst_rank = -1;
  ThreadInfo worst;
  double worst_ratio = 1, worst_ref = 0;
  for (const RankData &r : profile.ranks) {
    const double best = BestThreadRate(r);
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

RateTerms RankRateTerms(const RankData &r) {
  RateTerms out;
  double threads = 0;
  for (const ThreadInfo &t : r.thread_info)
    threads += t.cpu_seconds;
  out.samples = r.samples;
  out.seconds = std::max(0.0, (threads > 0 ? threads : r.cpu_time) - r.sampling_blocked);
  return out;
}

double ObtainedRate(const Profile &profile) {
  uint64_t samples = 0;
  double seconds = 0;
  for (const RankData &r : profile.ranks) {
    RateTerms t = RankRateTerms(r);
    samples += t.samples;
    seconds += t.seconds;
  }
  return seconds > 0 ? double(samples) / seconds : 0;
}

std::string BelowAskedRateWarning(const Profile &profile) {
  const double asked = profile.meta.sampling.hz;
  if (asked <= 0 || profile.meta.sampling.source == "none")
    return "";
  double expected = asked;
  if (profile.meta.sampling.source == "cpu-timer") {
    double best = 0;
    for (const RankData &r : profile.ranks)
      best = std::max(best, BestThreadRate(r));
    expected = std::min(asked, best);
  }
  int count = 0, worst_rank = -1;
  long worst_thread = -1; // -1: the rank as a whole (no thread figures)
  double worst_hz = 0, worst_cpu = 0;
  uint64_t worst_samples = 0;
  auto consider = [&](int rank, long thread, uint64_t samples, double cpu) {
    if (cpu < kMinCpu || double(samples) / cpu >= 0.5 * expected)
      return;
    ++count;
    if (worst_rank < 0 || double(samples) / cpu < worst_hz) {
      worst_rank = rank, worst_thread = thread, worst_samples = samples, worst_cpu = cpu;
      worst_hz = double(samples) / cpu;
    }
  };
  for (const RankData &r : profile.ranks) {
    if (r.thread_info.empty()) {
      RateTerms t = RankRateTerms(r);
      consider(r.rank, -1, t.samples, t.seconds);
      continue;
    }
    const double best = BestThreadRate(r);
    for (const ThreadInfo &t : r.thread_info)
      if (!(t.cpu_seconds >= kMinCpu && Hz(t) < kShortfall * best)) // not the warning above's
        consider(r.rank, long(t.index), t.samples, t.cpu_seconds);
  }
  if (!count)
    return "";
  char line[512];
  std::snprintf(line, sizeof line,
                "%d %s sampled at under half the %.0f Hz %s (the worst: rank %d%s%s, %llu samples "
                "over %.2f CPU s, %.0f Hz): its time is measured, but rests on fewer samples; a "
                "source the program stopped (its sampling signal or the profiler's descriptors "
                "taken) or the descriptor budget spent (see the errors of `scalana show`) does "
                "this",
                count,
                worst_thread >= 0 ? (count == 1 ? "thread" : "threads")
                                  : (count == 1 ? "rank" : "ranks/threads"),
                expected, expected < asked ? "the run's best thread obtained" : "asked", worst_rank,
                worst_thread >= 0 ? " thread " : "",
                worst_thread >= 0 ? std::to_string(worst_thread).c_str() : "",
                (unsigned long long)worst_samples, worst_cpu, worst_hz);
  return line;
}

std::vector<std::string> SamplingWarnings(const Profile &profile) {
  std::vector<std::string> out;
  for (std::string w : {BlockedSamplingWarning(profile), UndersampledThreadsWarning(profile),
                        BelowAskedRateWarning(profile)})
    if (!w.empty())
      out.push_back(std::move(w));
  return out;
}

} // namespace scalana
