// Checks of a profile against itself: what a parser of single fields cannot
// see (docs/formats.md section 3, "Readers"). A profile is untrusted input;
// numbers its own other numbers contradict are refused, never reported.
#pragma once

#include "scalana/profile.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace scalana {

// TEXT parsed as JSON, refusing an object that names one key twice (the
// JSON library would keep the last silently: a second "world_size" would
// change the run). Throws Error "<path>: key \"K\" appears twice ...", or
// nlohmann::json::parse_error for text that is not JSON.
nlohmann::json ParseJsonOnce(const std::string &text);

// Refuses rank R (at AT, "ranks[3]") when a number it records is
// impossible for the run (format/rank_limits.cpp; docs/formats.md section 3,
// "Numbers against each other"): a wall time longer than the run's (META's
// wall time, or the time since its start), CPU time beyond its wall time x
// threads, samples beyond what META's rate allows in its CPU time, a thread's
// or an OpenMP row's time beyond the wall time, MPI time or dependence waits
// beyond the wall time x threads, calls, messages and events beyond one per
// kMaxCallsPerSecond of each thread's wall time, bytes beyond
// kMaxBytesPerCall a call. Throws Error naming the field, the value, the
// bound and rank R.
void CheckRankNumbers(const ProfileMeta &meta, const RankData &r, const std::string &at);
// Refuses a run whose wall clock ends, from meta.start_time, after the
// reader's clock (by more than kClockSkewSeconds). Throws Error naming
// meta.wall_time.
void CheckMetaNumbers(const ProfileMeta &meta);
// meta.start_time ("2026-11-29T18:00:00Z", UTC) as seconds since the epoch;
// false for any other text (older or hand-written files: no usable start).
bool StartTimeSeconds(const std::string &text, double *seconds);

// The margins: a measured count may exceed the rate's expectation by this
// factor plus this many seconds' worth (timers are not exact; a snapshot's
// counts and times are read moments apart).
inline constexpr double kSampleMargin = 1.5, kSampleSlackSeconds = 1;
inline constexpr double kWaitMargin = 1.1, kWaitSlackSeconds = 1;
// Dependence waits past a context's first calls are estimates (1 call in 16
// recorded, weighted 16): they may overshoot more.
inline constexpr double kDepWaitMargin = 4;
// CPU time: at most this factor of (the wall time + this slack) x threads
// (the process clock starts before the profiler's, and a snapshot reads it
// a moment after the wall clock); no more threads run at once than the
// largest kernel has CPUs (Linux's NR_CPUS is at most 8,192).
inline constexpr double kCpuMargin = 1.1, kCpuSlackSeconds = 1, kMaxCpus = 8192;
// A rank's wall time against the run's (rank 0's, taken at the write): ranks
// start moments apart, and a large job's launch may take a while.
inline constexpr double kRankWallMargin = 1.1, kLaunchSkewSeconds = 60;
// The run's end against the reader's clock: the hosts' clocks may differ.
inline constexpr double kClockSkewSeconds = 86400;
// Calls, messages and events: at most one per 10 ns of each thread's wall
// time (an MPI call through the wrappers takes hundreds), plus one second's
// worth.
inline constexpr double kMaxCallsPerSecond = 1e8, kCountSlackSeconds = 1;
// Bytes of one call: at most 2^50 (1 PiB, more than any node's memory).
inline constexpr double kMaxBytesPerCall = 0x1p50;

} // namespace scalana

namespace scalana {

// The marker a job leaves in its run directory: `.scalana-job`, its first
// line the launcher's job, then "run <id>" (written by rank 0 at MPI_Init).
inline constexpr const char *kJobFileName = ".scalana-job";
// The run id RUN_DIR/.scalana-job names, "" when it names none (no file, an
// older one, not a regular file).
std::string RunIdOfJobFile(const std::string &run_dir);

// Per-rank files FILES carrying run ids RUN_IDS must come from one run: the
// one RUN_DIR's .scalana-job names, else the one most files carry. Throws
// Error naming every other file and its run id.
void CheckOneRun(const std::string &run_dir, const std::vector<std::string> &files,
                 const std::vector<std::string> &run_ids);

} // namespace scalana
