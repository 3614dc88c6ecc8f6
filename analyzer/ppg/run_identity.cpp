// See run_identity.h.
#include "ppg/run_identity.h"

#include "scalana/profile.h"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <utility>

namespace scalana {
namespace {

// The canonical path of DIR for messages; DIR itself when it has none.
std::string RealPathOf(const std::string &dir) {
  char real[PATH_MAX];
  return realpath(dir.c_str(), real) ? std::string(real) : dir;
}

std::string Argument(size_t index) { return "argument " + std::to_string(index + 1); }

} // namespace

void CheckDistinctRunDirs(const std::vector<std::string> &run_dirs) {
  std::map<std::pair<dev_t, ino_t>, size_t> seen;
  for (size_t i = 0; i < run_dirs.size(); ++i) {
    struct stat st;
    if (stat(run_dirs[i].c_str(), &st) != 0)
      continue; // CheckRunDirs names it
    auto [it, fresh] = seen.emplace(std::pair{st.st_dev, st.st_ino}, i);
    if (fresh)
      continue;
    const size_t first = it->second;
    const std::string &a = run_dirs[first], &b = run_dirs[i];
    throw Error(b + " (" + Argument(i) + ") is the run directory " + a + " (" + Argument(first) +
                ")" + (a == b ? "" : " (both are " + RealPathOf(a) + ")") +
                ": one run given twice would count as two repetitions of its scale; give each "
                "run directory once");
  }
}

void RunIdsSeen::Add(const std::string &run_dir, size_t argument, const std::string &run_id) {
  if (run_id.empty())
    return;
  auto [it, fresh] = seen_.emplace(run_id, First{run_dir, argument});
  if (fresh || it->second.argument == argument)
    return;
  throw Error(run_dir + " (" + Argument(argument) + ") holds run " + run_id + ", as " +
              it->second.run_dir + " (" + Argument(it->second.argument) +
              ") does: one run in two directories (a copy) would count as two repetitions of "
              "its scale, and two jobs given one SCALANA_RUN_ID cannot be told apart; give each "
              "run once, and each job its own SCALANA_RUN_ID (or none)");
}

} // namespace scalana
