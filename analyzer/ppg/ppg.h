// The Program Performance Graph of one run, kept implicit: the PSG is shared
// by every rank, so the PPG is only per-vertex arrays over ranks (for the
// vertices that have data) plus per-vertex lists of inter-process dependence
// edges. Memory is linear in ranks x vertices-with-data; there is never one
// object per (vertex, rank).
#pragma once

#include "psg/psg.h"
#include "scalana/profile.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace scalana {

// One inter-process dependence edge, stored on the vertex that carries the row.
// p2p and rma: peer_vertex is the matching vertex on peer_rank (kNoVertex when
// nothing matched there). Collectives: peer_rank = -1 and the members are
// Run::comms[comm]; edges to every member are implicit (never n^2 objects).
struct DepEdge {
  int32_t rank = 0;       // world rank that recorded the row
  int32_t peer_rank = -1; // world rank on the other side (-1: collective)
  VertexId peer_vertex = kNoVertex;
  float wait = 0; // seconds the call (or its completion) was blocked
  uint32_t comm = 0;
  int32_t tag = 0;
  // Messages (operations) of the row, saturated at 2^32-1, and its bytes.
  // 40 bytes an edge: a 3-D halo has ~100 per rank, 10^8 at a million ranks.
  uint32_t count = 0;
  DepKind kind = DepKind::Send;
  uint64_t bytes = 0;
};
static_assert(sizeof(DepEdge) <= 40, "DepEdge: one per dependence row, keep it small");

// One OpenMP thread's time at a vertex on one rank slot (docs/detect.md,
// "Threads"): CPU seconds sampled there and wall seconds waiting in the
// OpenMP runtime there.
struct ThreadTime {
  int32_t slot = 0;
  int32_t thread = 0; // its OpenMP thread number
  float cpu = 0, wait = 0;
};

// Where one rank's main thread spent its wall time (docs/detect.md, "Time
// accounting"): the program's view (computation sampled outside MPI calls,
// MPI calls, I/O calls (MPI-IO), OpenMP waits) beside the kernel's (on a CPU, runnable but not
// running, blocked), which sums to the wall time exactly where it was
// measured (on_cpu or run_delay above 0). HOST: a hash of the host's name,
// to count ranks per host; CORES: its CPUs online (0: unknown).
struct RankTime {
  float wall = 0, computation = 0, mpi = 0, io = 0, omp_wait = 0;
  float omp_serial = 0; // of omp_wait, entering critical sections, locks and ordered turns
  // The off-CPU source's account outside wrapped calls and OpenMP waits:
  // blocked (a system call, sleep, a page fault) and runnable but waiting
  // for a core, where the thread left the CPU.
  float off_cpu = 0, off_cpu_delay = 0;
  float on_cpu = 0, run_delay = 0;
  uint32_t cores = 0, host = 0;
  bool kernel_measured() const { return on_cpu > 0 || run_delay > 0; }
  // Outside MPI calls and OpenMP waits, the wall time with no computation
  // sample: off the CPU (blocked in I/O or sleep, or runnable but waiting
  // for a core), or CPU time before a thread's first sample.
  float not_placed() const {
    float left = wall - mpi - io - omp_wait - computation - off_cpu - off_cpu_delay;
    return left > 0 ? left : 0;
  }
  float blocked() const {
    float left = wall - on_cpu - run_delay;
    return left > 0 ? left : 0;
  }
};

// VertexSeries::mpi_rows: rows of calls that wait for other ranks, and of
// I/O calls (MPI_File_* and POSIX I/O).
inline constexpr uint8_t kMpiRowsCommunication = 1, kMpiRowsIo = 2;

// Per-vertex data over the ranks present in the run (index = rank slot).
struct VertexSeries {
  VertexId vertex = kNoVertex;
  bool own_data = false; // has rows of its own (not only an ancestor)
  // What the MPI rows placed here were (kMpiRows*): a call vertex holds them
  // when the program calls MPI through a pointer (IOR's MPI-IO access).
  uint8_t mpi_rows = 0;
  std::vector<float> cpu; // exclusive CPU seconds (measured); empty if none
  // Seconds blocked off the CPU here, outside wrapped calls and OpenMP waits
  // (the off-CPU source: sleep, a system call, a page fault), all threads;
  // empty if none. Time runnable but waiting for a core is not in it: the
  // scheduler's, never a line's.
  std::vector<float> off_cpu;
  std::vector<float> mpi;      // MPI wall seconds; empty if none
  std::vector<uint32_t> calls; // MPI calls; empty if none
  std::vector<float> incl;     // inclusive time (self + descendants)
  std::vector<float> counters; // [slot * ncounters + c]; empty if none
  std::vector<DepEdge> edges;  // sorted by (rank, peer_rank), rows' order within
  // OpenMP threads, only where a profile has the thread dimension and a
  // thread other than the main one has data here; sorted by (slot, thread).
  std::vector<ThreadTime> threads;
};

struct Run {
  std::string label; // run directory as given
  ProfileMeta meta;
  int world_size = 0;
  std::vector<int> ranks;            // world rank of each slot, ascending
  std::vector<int32_t> slot_of_rank; // world rank -> slot, -1 when the rank is missing
  std::vector<int> missing_ranks;
  std::vector<CommMembers> comms;
  std::vector<VertexSeries> series;
  std::vector<int32_t> slot_of_vertex; // VertexId -> index into series, -1: no data
  std::vector<float> rank_total;       // inclusive time of the root per slot
  std::vector<float> rank_cpu;         // CPU seconds of each slot's rank, all its threads
  std::vector<RankTime> rank_time;     // each slot's main thread (RankTime)
  double total_time = 0;               // max over ranks of rank_total
  uint64_t contexts = 0, unresolved_contexts = 0, unresolved_rows = 0;
  double unresolved_seconds = 0;
  // Contexts that fit only in part, placed at their largest part that fits
  // (Psg::ResolveNearest), and the rows and seconds they hold.
  uint64_t approximated_contexts = 0, approximated_rows = 0;
  double approximated_seconds = 0;
  // Time in contexts with no frame of the program (MPI progress threads,
  // library start-up): real, but nothing in the program to attribute it to.
  double outside_seconds = 0;
  // Samples whose frames the binary's debug information names nothing of
  // (a stripped binary, docs/detect.md section 1), the seconds of their rows
  // and of MPI rows alike, and the ranks holding any: measured, but placed
  // on no vertex.
  uint64_t unplaced_samples = 0, unplaced_ranks = 0;
  // Samples taken and those a full context table dropped (their time is on
  // no vertex), the ranks that dropped any, and the one that dropped the
  // largest share of its samples.
  uint64_t samples_taken = 0, samples_dropped = 0, dropped_ranks = 0;
  int most_dropped_rank = -1;
  double most_dropped_share = 0;
  double unplaced_seconds = 0;
  // OpenMP: per slot, the threads of its team (0 where it had none), and
  // the CPU seconds its threads were sampled waiting in the runtime.
  std::vector<int> omp_threads;
  double omp_wait_cpu = 0;
  uint64_t dep_rows = 0, unmatched_p2p = 0;
  std::vector<std::string> warnings;
  // Samples per CPU second the run obtained (its rows' samples over their
  // measured CPU time): what counts of samples follow, whatever was asked.
  double sample_rate = 0;
  // Samples per CPU second the threads' clocks say they could have come in
  // (sampling_checks.h, RankRateTerms): the rate delivered, as reported. It
  // is below sample_rate where the source stopped or time went unsampled.
  double obtained_rate = 0;

  int nslots() const { return int(ranks.size()); }
  const VertexSeries *Find(VertexId v) const {
    if (v < 0 || size_t(v) >= slot_of_vertex.size() || slot_of_vertex[v] < 0)
      return nullptr;
    return &series[slot_of_vertex[v]];
  }
  int SlotOf(int world_rank) const {
    return world_rank >= 0 && world_rank < int(slot_of_rank.size()) ? slot_of_rank[world_rank] : -1;
  }
};

// The time a vertex costs on a rank slot: exclusive CPU time, plus the time
// blocked off the CPU there, plus MPI wall time.
// MPI vertices take the larger of the two instead: Open MPI spins while it
// waits, so samples inside MPI calls overlap their wall time.
double ExclusiveTime(const Psg &psg, const VertexSeries &s, int slot);
double InclusiveTime(const VertexSeries &s, int slot);

using ProgressFn = std::function<void(const std::string &)>;

// Resolves every context of PROFILE through PSG (expanding it as needed) and
// builds the run's PPG. Does not check identities (see LoadRuns). The same as
// a RunBuilder (ppg_build.h) given PROFILE as its one part.
Run BuildRun(Psg &psg, const Profile &profile, const std::string &label,
             const ProgressFn &progress = {});

} // namespace scalana
