// One run directory, one job: the job that creates RUN_DIR/.scalana-job
// (O_CREAT|O_EXCL) owns the directory and holds a lock on that file for as
// long as it runs; another job is refused while it does (docs/runtime.md,
// "The run directory"). Shared by the launcher (`scalana prof`, before it
// execs the program) and the runtime (rank 0 at MPI_Init, for a program
// started without the launcher). No exceptions escape, no exit: the runtime
// must never stop the program.
#pragma once

#include <string>

namespace scalana::rundir {

// What RUN_DIR/.scalana-job says of the job that claimed the directory:
// its first line the job, then "key value" lines (docs/formats.md section 3).
struct JobRecord {
  std::string job, host, boot, start;
  long long pid = 0;
  unsigned long long pid_start = 0; // the process's start, in clock ticks after boot
  bool whole = false;               // its "lock" line seen: the claimer finished writing it
  bool locked = false;              // the claimer holds a lock on the file
  bool ready = false;               // the directory is prepared: the job's ranks may start
};
JobRecord ParseJobRecord(const std::string &text);
JobRecord ReadJobRecord(const std::string &dir); // DIR's; empty when none

// "job J (host H, pid P, started T)", each value escaped and cut.
std::string DescribeJob(const JobRecord &r);
// JOB as one token of the file: no spaces or control characters.
std::string JobToken(const std::string &job);

struct Claim {
  enum Kind { kOwned, kJoined, kRefused } kind = kRefused;
  std::string message; // kRefused: why, naming the directory and the job in it
  int fd = -1;         // kOwned: the job file, its lock held, close-on-exec
};

// Claims DIR (which exists) for JOB: creates the job file, or takes over the
// one of a job that has ended (clearing what that job left when FORCE, or
// refusing when it left a profile and not FORCE), or joins it when it names
// JOB already and is ready. Refuses a job file of a job that still runs,
// FORCE or not. The other jobs' preparation claims are removed, OWN_CLAIM
// kept. Waits (at most WAIT_SECONDS) while a record is being written.
Claim ClaimJobFile(const std::string &dir, const std::string &job, bool force,
                   const std::string &own_claim, double wait_seconds);

// "run ID" appended to the job file, in place (a rename would drop the lock).
bool AppendRunId(const std::string &dir, const std::string &run_id);

// FD moved to a high descriptor, out of the program's way (below the perf
// sampler's budget at the top, runtime/signal_safe/perf_source.cpp);
// CLOEXEC: close-on-exec or kept across exec. Returns the new descriptor.
int MoveHigh(int fd, bool cloexec);

// The job file's descriptor the launcher passed on through exec, made
// close-on-exec: a program the profiled one runs must not hold the claim.
void CloseJobLockOnExec();

} // namespace scalana::rundir
