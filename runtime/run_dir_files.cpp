#include "run_dir_files.h"

#include <dirent.h>
#include <unistd.h>

namespace scalana::rundir {

bool IsProfileFile(const std::string &n) {
  if (n == "profile.json.gz" || n == "profile.scalana")
    return true;
  // A node's snapshot container, snapshots-<L>.scs.
  const std::string scs = "snapshots-", scs_suffix = ".scs";
  if (n.size() > scs.size() + scs_suffix.size() && n.compare(0, scs.size(), scs) == 0 &&
      n.compare(n.size() - scs_suffix.size(), scs_suffix.size(), scs_suffix) == 0)
    return n.find_first_not_of("0123456789", scs.size()) == n.size() - scs_suffix.size();
  const std::string prefix = "rank-", suffix = ".json.gz";
  if (n.size() <= prefix.size() + suffix.size() || n.compare(0, prefix.size(), prefix) != 0 ||
      n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  return n.find_first_not_of("0123456789", prefix.size()) == n.size() - suffix.size();
}

bool IsTemporary(const std::string &n) {
  if (n == "profile.scalana.partial")
    return true;
  size_t at = n.find(".json.gz.tmp.");
  if (at != std::string::npos && IsProfileFile(n.substr(0, at + 8)))
    return true;
  at = n.find(".unwritten.");
  return at != std::string::npos && IsProfileFile(n.substr(0, at) + ".json.gz");
}

std::vector<std::string> Entries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

bool HasProfileFiles(const std::string &dir) {
  for (const std::string &n : Entries(dir))
    if (IsProfileFile(n))
      return true;
  return false;
}

// Why other jobs' claims go: a launcher that claims the directory and finds
// another run's profile drops its claim and fails, but mpirun may kill it in
// between, when another rank of its job failed first.
void RemoveRunFiles(const std::string &dir, bool profiles, const std::string &own_claim) {
  for (const std::string &n : Entries(dir))
    if ((profiles && IsProfileFile(n)) || IsTemporary(n) ||
        (n.compare(0, kPrepareClaimPrefix.size(), kPrepareClaimPrefix) == 0 && n != own_claim))
      unlink((dir + "/" + n).c_str());
}

} // namespace scalana::rundir
