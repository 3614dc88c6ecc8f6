#include "scalana/sampling_checks.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

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
  double seconds = r.cpu_time;
  if (seconds <= 0) // not measured (an older file): the threads listed
    for (const ThreadInfo &t : r.thread_info)
      seconds += t.cpu_seconds;
  out.samples = r.samples;
  out.seconds = std::max(0.0, seconds - r.sampling_blocked);
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
  // What may be judged: each rank as a whole, and its threads with enough
  // CPU time that the warning above does not already name.
  struct Judged {
    int rank;
    long thread; // -1: the rank as a whole
    uint64_t samples;
    double cpu, hz;
  };
  std::vector<Judged> judged;
  double best = 0;
  for (const RankData &r : profile.ranks) {
    const RateTerms whole = RankRateTerms(r);
    if (whole.seconds >= kMinCpu)
      judged.push_back(
          {r.rank, -1, whole.samples, whole.seconds, double(whole.samples) / whole.seconds});
    const double rank_best = BestThreadRate(r);
    for (const ThreadInfo &t : r.thread_info)
      if (t.cpu_seconds >= kMinCpu && Hz(t) >= kShortfall * rank_best)
        judged.push_back({r.rank, long(t.index), t.samples, t.cpu_seconds, Hz(t)});
  }
  for (const Judged &j : judged)
    best = std::max(best, j.hz);
  // The timer fires at most once per kernel tick, whose rate is not known
  // here: held to the best obtained, where the perf source is held to the
  // rate asked.
  const double expected =
      profile.meta.sampling.source == "cpu-timer" ? std::min(asked, best) : asked;
  int ranks = 0, threads = 0;
  const Judged *worst = nullptr;
  for (const Judged &j : judged) {
    if (j.hz >= 0.5 * expected)
      continue;
    ++(j.thread < 0 ? ranks : threads);
    if (!worst || j.hz < worst->hz)
      worst = &j;
  }
  if (!worst)
    return "";
  auto count = [](int n, const char *what) {
    return n ? std::to_string(n) + " " + what + (n == 1 ? "" : "s") : std::string();
  };
  std::string who = count(ranks, "rank");
  if (threads)
    who += (who.empty() ? "" : " and ") + count(threads, "thread");
  std::string worst_name = "rank " + std::to_string(worst->rank);
  if (worst->thread >= 0)
    worst_name += " thread " + std::to_string(worst->thread);
  char line[512];
  std::snprintf(line, sizeof line,
                "%s sampled at under half the %.0f Hz %s (the worst: %s, %llu samples over %.2f "
                "CPU s, %.0f Hz): the time is measured, but rests on fewer samples; a source the "
                "program stopped (its sampling signal or the profiler's descriptors taken) or "
                "the descriptor budget spent (see the errors of `scalana show`) does this",
                who.c_str(), expected, expected < asked ? "the run's best obtained" : "asked",
                worst_name.c_str(), (unsigned long long)worst->samples, worst->cpu, worst->hz);
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
