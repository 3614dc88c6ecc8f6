// The run id: one string for every rank of a job, written in each rank's
// file (meta.run_id) and in RUN_DIR/.scalana-job, so a reader never merges
// rank files of two runs that share a directory (docs/formats.md section 3).
// Rank 0 makes it (or takes SCALANA_RUN_ID), claims the run directory with
// it (output.cpp) and broadcasts both at MPI_Init.
#include "config.h"
#include "runtime.h"

#include <mpi.h>

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
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

bool AgreeRunId(int world_rank) {
  // The id, then whether the run directory is this run's (rank 0 claims it).
  char id[kRunIdBytes + 1] = "";
  if (world_rank == 0) {
    const char *given = std::getenv("SCALANA_RUN_ID");
    if (given && UsableRunId(given))
      std::snprintf(id, kRunIdBytes, "%s", given);
    else
      MakeRunId(id);
    id[kRunIdBytes] = ClaimRunDir(id) ? 1 : 0;
  }
  PMPI_Bcast(id, kRunIdBytes + 1, MPI_CHAR, 0, MPI_COMM_WORLD);
  id[kRunIdBytes - 1] = '\0';
  std::memcpy(g_run_id, id, kRunIdBytes);
  return id[kRunIdBytes] != 0;
}

} // namespace scalana::rt
