// One run counted once: the run directories of an analysis must be distinct
// directories holding distinct runs (docs/detect.md section 1). A run given
// twice, by the same path, a symbolic link or another spelling, or a copy of
// its directory, would be averaged as two repetitions of its scale.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace scalana {

// Throws Error naming both arguments when two of RUN_DIRS are one directory
// (the same device and inode). Each must exist (CheckRunDirs checks first).
void CheckDistinctRunDirs(const std::vector<std::string> &run_dirs);

// The run ids (meta.run_id) of the runs an analysis has read: Add throws
// Error naming both run directories when a second one carries an id seen
// before (a copied directory, or jobs given one SCALANA_RUN_ID). Runs
// without an id (older files) are not compared.
class RunIdsSeen {
public:
  void Add(const std::string &run_dir, size_t argument, const std::string &run_id);

private:
  struct First {
    std::string run_dir;
    size_t argument = 0;
  };
  std::map<std::string, First> seen_;
};

} // namespace scalana
