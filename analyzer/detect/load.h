// Loading run directories for detection: reading the profiles, checking that
// they all come from one binary and one PSG, and building each run's PPG.
#pragma once

#include "detect/ppg.h"

#include <optional>
#include <string>
#include <vector>

namespace scalana {

struct LoadOptions {
  std::string binary; // --binary: overrides meta.binary (the binary has moved)
  uint32_t max_loop_depth = 10;
};

struct LoadedRuns {
  Psg psg;
  std::string binary;
  std::vector<Run> runs;
  std::vector<std::string> warnings;
};

// Throws Error, naming the run directory, on: an unreadable directory or
// profile, runs with different PSG ids, a binary that no longer exists (say
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
