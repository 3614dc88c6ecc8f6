// Where each rank's wall time went (docs/detect.md, "Time accounting"): the
// per-rank RankTime of ppg.h from a profile's rank, and the run's summary
// that the report, the page and JSON print.
#pragma once

#include "ppg/ppg.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace scalana {

// I/O calls among the MPI rows: MPI-IO (MPI_File_*) and the POSIX calls of
// scalana/io_operations.h, timed by the wrappers but I/O in the time split.
bool IsIoOperation(const std::string &op);
// Whether V of RUN is an I/O call: an MPI vertex of an I/O operation, or a
// call vertex all of whose MPI rows are I/O (MPI-IO called through a pointer).
bool IsIoVertex(const Psg &psg, const Run &run, VertexId v);

// RD's main thread. SAMPLED: the CPU seconds of all its rows (every thread),
// IN_MPI: those on MPI vertices.
RankTime MainThreadTime(const RankData &rd, double sampled, double in_mpi);

// One category over a run's ranks: its median share of the rank's wall time
// and the rank where the share is largest.
struct TimeShare {
  double median = 0, max = 0; // fractions of wall time
  int max_rank = -1;
};

struct TimeSummary {
  int ranks = 0;        // ranks with a wall time
  int kernel_ranks = 0; // of them, those with the kernel's account
  int hosts = 0;        // distinct hosts among them
  int max_ranks_per_host = 0;
  uint32_t cores = 0;     // CPUs of the busiest host (0: unknown)
  double median_wall = 0; // seconds
  // The program's view; off_cpu and off_cpu_delay: the off-CPU source's
  // blocked and waiting-for-a-core time outside calls and waits.
  TimeShare computation, mpi, io, omp_wait, off_cpu, off_cpu_delay, not_placed;
  TimeShare omp_serial; // of omp_wait: critical sections, locks, ordered
  TimeShare on_cpu, run_delay, blocked; // the kernel's view
  // Ranks sharing cores: the hosts hold more ranks than CPUs, or the ranks
  // were runnable but not running for a large share of their wall time.
  bool shared_cores = false;
};

TimeSummary SummariseTime(const Run &run);

// The report's lines: the shared-cores statement (empty where the cores
// were not shared) and the split of the wall time.
std::string SharedCoresLine(const TimeSummary &t);
std::string TimeLine(const TimeSummary &t);
// A hint where a large share of the wall time is not placed and the run was
// made without the off-CPU source (its note says why, where it was asked
// for and did not start); "" otherwise.
std::string OffCpuHint(const Run &run, const TimeSummary &t);
// OBJ["time"]: the summary as numbers (shares are fractions of wall time).
void PutTimeJson(nlohmann::json &obj, const TimeSummary &t);

} // namespace scalana
