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

// Refuses rank R (at AT, "ranks[3]") when its counts are impossible for the
// run: more samples than META's rate allows in its CPU time (or its wall
// time times its threads when the CPU time is not recorded), MPI time or
// dependence waits beyond its wall time times its threads. Throws Error
// naming the field.
void CheckRankNumbers(const ProfileMeta &meta, const RankData &r, const std::string &at);

// The margins: a measured count may exceed the rate's expectation by this
// factor plus this many seconds' worth (timers are not exact; a snapshot's
// counts and times are read moments apart).
inline constexpr double kSampleMargin = 1.5, kSampleSlackSeconds = 1;
inline constexpr double kWaitMargin = 1.1, kWaitSlackSeconds = 1;
// Dependence waits past a context's first calls are estimates (1 call in 16
// recorded, weighted 16): they may overshoot more.
inline constexpr double kDepWaitMargin = 4;

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
