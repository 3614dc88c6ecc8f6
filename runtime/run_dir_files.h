// The files a run leaves in its run directory (docs/formats.md sections 3
// to 5), told apart by name: shared by the launcher, which clears a
// directory it is allowed to take, and the runtime, which does the same
// when started without the launcher.
#pragma once

#include <string>
#include <vector>

namespace scalana::rundir {

// The directory's job file, and the prefix of a launcher's claim to prepare
// the directory for its job (.scalana-job.claim.<job>, run_dir_claim.cpp).
inline const std::string kJobFile = ".scalana-job", kPrepareClaimPrefix = kJobFile + ".claim.";

// profile.scalana, profile.json.gz, rank-<R>.json.gz, snapshots-<L>.scs.
bool IsProfileFile(const std::string &name);
// Temporaries of killed writers (NAME.tmp.PID, profile.scalana.partial) and
// the markers of ranks that could not write (rank-<R>.unwritten.<REASON>).
bool IsTemporary(const std::string &name);
std::vector<std::string> Entries(const std::string &dir);
bool HasProfileFiles(const std::string &dir);
// Everything an earlier run left: PROFILES, its profile and rank files;
// always, the temporaries and the preparation claims of other jobs
// (OWN_CLAIM, a file name, is kept).
void RemoveRunFiles(const std::string &dir, bool profiles, const std::string &own_claim);

} // namespace scalana::rundir
