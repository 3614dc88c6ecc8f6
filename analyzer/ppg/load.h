// Loading run directories for detection: reading the profiles, checking that
// they all come from one binary and one PSG, and building each run's PPG.
#pragma once

#include "ppg/ppg.h"
#include "ppg/shard_link.h"

#include <optional>
#include <string>
#include <vector>

namespace scalana {

struct LoadOptions {
  std::string binary; // --binary: overrides meta.binary (the binary has moved)
  uint32_t max_loop_depth = 10;
  // A sharded analysis (docs/detect.md section 9): this process reads its
  // share of each format-3 run's groups and process 0 gathers the rest.
  ShardLink *shards = nullptr;
};

struct LoadedRuns {
  Psg psg;
  std::string binary;
  std::vector<Run> runs;
  std::vector<std::string> warnings;
  // False on the processes of a sharded analysis other than 0: they sent
  // what they read to process 0 and hold no run.
  bool reporter = true;
};

// Throws Error naming the first of RUN_DIRS that is not a readable
// directory (or when there is none), or two that are one directory
// (run_identity.h). LoadRuns starts with it; a sharded analysis calls it
// first on every process, so that all of them end alike.
void CheckRunDirs(const std::vector<std::string> &run_dirs);

// Throws Error, naming the run directory, on: an unreadable directory or
// profile, two runs with one run id (both named), runs with different PSG ids, a binary that no
// longer exists (say
// --binary), a binary whose build id or PSG id differs from the runs'.
LoadedRuns LoadRuns(const std::vector<std::string> &run_dirs, const LoadOptions &opts,
                    const ProgressFn &progress = {});

// Checks that PROFILES (labelled by LABELS) share one PSG id; throws Error
// naming the runs otherwise. Exposed for tests.
void CheckSamePsg(const std::vector<Profile> &profiles, const std::vector<std::string> &labels);
// Checks one profile against the PSG and build id of the binary it is analysed with.
void CheckProfileMatchesBinary(const Profile &profile, const std::string &label,
                               const std::string &binary, const std::string &binary_build_id,
                               const std::string &binary_psg_id);

} // namespace scalana
