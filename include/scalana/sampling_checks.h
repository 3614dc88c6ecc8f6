// What a profile's own figures say about the evidence its samples give
// (format/sampling_checks.cpp; docs/contexts.md, "Sampling"). Shared by
// `scalana show` and `scalana detect`, which print each as a warning.
#pragma once

#include "scalana/profile.h"

#include <string>
#include <vector>

namespace scalana {
// Ranks whose threads had the sampling signal blocked for a noticeable share
// of their CPU time; "" when none.
std::string BlockedSamplingWarning(const Profile &profile);

// Threads sampled far below their rank's best-sampled thread for the CPU
// time they used; "" when none. A CPU-time timer is checked at the kernel's
// tick, and the scheduler switches threads at that tick too, so a thread
// that runs in bursts shorter than a tick on a core it shares is seldom the
// one running when the tick comes: its time stays exact (each sample carries
// the CPU time since the thread's previous one) but rests on few samples.
std::string UndersampledThreadsWarning(const Profile &profile);

// The samples of rank R and the CPU seconds they could have come in: the
// process's CPU time (or, in files without it, the CPU time of the threads
// listed), less the time the program had the sampling signal blocked (said
// by its own warning). The threads' list leaves out short unsampled ones. Not the samples' own
// time: a source that stopped (its descriptor closed by the program, say) leaves a rate that shows
// it.
struct RateTerms {
  uint64_t samples = 0;
  double seconds = 0;
};
RateTerms RankRateTerms(const RankData &r);
// Samples per CPU second over every rank; 0 when nothing was measured.
double ObtainedRate(const Profile &profile);

// Ranks, and threads with 50 ms of CPU or more, sampled at under half the
// rate they should have had: the asked rate for the perf source; for the
// timer, which fires at most once per kernel tick, the asked rate or the
// best any of them obtained, if lower. Threads the warning above names are
// left to it. "" when none.
std::string BelowAskedRateWarning(const Profile &profile);

// Every warning above that applies, in that order.
std::vector<std::string> SamplingWarnings(const Profile &profile);
} // namespace scalana
