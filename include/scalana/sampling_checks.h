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

// Every warning above that applies, in that order.
std::vector<std::string> SamplingWarnings(const Profile &profile);
} // namespace scalana
