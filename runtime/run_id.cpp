// The run id: one string for every rank of a job, written in each rank's
// file (meta.run_id) and in RUN_DIR/.scalana-job, so a reader never merges
// rank files of two runs that share a directory (docs/formats.md section 3).
// Rank 0 makes it (or takes SCALANA_RUN_ID) and broadcasts it at MPI_Init.
#include "config.h"
#include "runtime.h"

#include <mpi.h>

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

namespace scalana::rt {
namespace {

constexpr int kRunIdBytes = 64; // with its terminating NUL
// Set once at MPI_Init, before the writer thread starts; read from then on.
char g_run_id[kRunIdBytes];

// SCALANA_RUN_ID as given, if it is a usable id: printable, no spaces (it is
// one token of a line in .scalana-job), short.
bool UsableRunId(const char *id) {
  size_t n = std::strlen(id);
  if (n == 0 || n >= size_t(kRunIdBytes))
    return false;
  for (size_t i = 0; i < n; ++i)
    if (id[i] <= ' ' || id[i] >= 0x7f)
      return false;
  return true;
}

// Start time, pid and 64 random bits: two jobs never meet on one, also
// when they start in the same second on different hosts.
void MakeRunId(char *out) {
  unsigned long long random = 0;
  if (getrandom(&random, sizeof random, GRND_NONBLOCK) != sizeof random)
    random = (unsigned long long)(Now() * 1e9) ^ ((unsigned long long)getpid() << 32);
  char when[32];
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
  std::snprintf(out, kRunIdBytes, "%s-%d-%016llx", when, int(getpid()), random);
}

} // namespace

const char *RunId() { return g_run_id; }

void AgreeRunId(int world_rank) {
  char id[kRunIdBytes] = "";
  if (world_rank == 0) {
    const char *given = std::getenv("SCALANA_RUN_ID");
    if (given && UsableRunId(given))
      std::snprintf(id, sizeof id, "%s", given);
    else
      MakeRunId(id);
  }
  PMPI_Bcast(id, kRunIdBytes, MPI_CHAR, 0, MPI_COMM_WORLD);
  id[kRunIdBytes - 1] = '\0';
  std::memcpy(g_run_id, id, sizeof id);
}

void WriteRunIdMarker(const std::string &dir) {
  // The launcher's first line (its job) stays: launchers of this job still
  // compare it; the run follows it.
  std::string marker = dir + "/.scalana-job", job;
  std::ifstream(marker) >> job;
  if (job.empty())
    job = config::JobIdFromEnv();
  std::string tmp = marker + ".tmp." + std::to_string(getpid());
  bool ok = bool(std::ofstream(tmp) << job << "\nrun " << g_run_id << "\n");
  if (!ok || std::rename(tmp.c_str(), marker.c_str()) != 0)
    unlink(tmp.c_str()); // the rank files still carry the id
}

} // namespace scalana::rt
