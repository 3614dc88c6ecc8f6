// The profile of one run, in memory; read and written by format/profile.cpp.
// Schema and meaning of every field: docs/formats.md section 3.
#pragma once

#include "scalana/comm_members.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalana {

// Every user-facing failure in ScalAna's offline tools: the message is meant
// to be printed as is ("<file>: <what is wrong>; <what to do>").
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A calling context. In a profile file (docs/formats.md section 3) it is the
// program's frames as recorded: offsets into the executable, outermost first.
// The analyzer maps those to PSG raw ids (call-site ids..., vertex id) before
// anything else reads them (FrameResolver).
using Context = std::vector<uint64_t>;

// Frame encoding. The offset is the address minus its module's load bias
// (its virtual address in the module's ELF file); bits 48-61 name the module:
// 0 the executable, K >= 1 the shared object meta.modules[K-1]. Every frame
// but the innermost is a return address; the innermost is one too unless
// flagged exact (the interrupted instruction of a sample).
inline constexpr uint64_t kFrameExact = uint64_t(1) << 63;
inline constexpr uint64_t kFramesTruncated = uint64_t(1) << 62; // leads a context cut at the top
inline constexpr uint64_t kFrameOffsetMask = (uint64_t(1) << 48) - 1;
inline constexpr int kFrameModuleShift = 48;
inline constexpr uint64_t kMaxFrameModule = (uint64_t(1) << 14) - 1;
inline constexpr uint64_t kFrameModuleMask = kMaxFrameModule << kFrameModuleShift;
inline uint32_t FrameModule(uint64_t frame) {
  return uint32_t((frame & kFrameModuleMask) >> kFrameModuleShift);
}
inline uint64_t WithFrameModule(uint64_t frame, uint32_t module) {
  return (frame & ~kFrameModuleMask) | (uint64_t(module) << kFrameModuleShift);
}

struct SamplingInfo {
  // cpu-timer | perf-task-clock | none (older files: papi-presets,
  // papi:perf::TASK-CLOCK, itimer-prof)
  std::string source = "none";
  double hz = 0;
  std::string clock = "cpu";
  std::vector<std::string> counters;
  bool counters_real = false;
  std::string note;
};

// A shared object built with the wrappers whose code the run executed
// (linked or loaded with dlopen): frames of module K name modules[K-1].
struct ModuleInfo {
  std::string path, build_id, psg_id;
  bool operator==(const ModuleInfo &o) const {
    return path == o.path && build_id == o.build_id && psg_id == o.psg_id;
  }
};

struct ProfileMeta {
  bool complete = true;
  int world_size = 0;
  std::string binary, build_id, psg_id;
  std::vector<ModuleInfo> modules; // shared objects with a PSG, in frame order
  std::vector<std::string> args;
  std::string mpi_library, start_time;
  // One job's id, the same in all its ranks' files ("" in older files):
  // per-rank files of two runs are never merged (docs/formats.md section 3).
  std::string run_id;
  double wall_time = 0;
  SamplingInfo sampling;
  std::map<std::string, std::string> config;
};

struct VertexRow {
  uint32_t ctx = 0;
  uint64_t samples = 0;
  double cpu_seconds = 0;
  std::vector<double> counters;
};

struct MpiRow {
  uint32_t ctx = 0;
  uint64_t calls = 0;
  double seconds = 0;
  uint64_t bytes = 0;
  // The operation the wrapper saw ("MPI_Allreduce", "shmem_putmem"); "" in
  // files before it was recorded. It names the call where the line tables
  // cannot: a call the compiler merged from several has no line.
  std::string op;
};

enum class DepKind : uint8_t { Send, Recv, Coll, Rma };

// Messages [first, last] of one (sender, receiver, tag, comm) channel,
// numbered from 1 in the order MPI matches them (non-overtaking: the k-th
// send on a channel is received by the k-th receive that matches it).
struct SeqRange {
  uint64_t first = 0, last = 0;
};
// A dependence row keeps at most this many disjoint ranges; more are merged
// (the nearest two first), so a range may then also span other rows' messages.
inline constexpr size_t kMaxSeqRanges = 8;

// The message numbers a row sent or received: sorted, disjoint ranges, at
// most kMaxSeqRanges (the nearest two merged beyond that).
// Fixed size and allocation-free: the runtime adds to it on every message.
struct SeqRanges {
  uint32_t n = 0;
  SeqRange r[kMaxSeqRanges + 1];

  void Add(SeqRange q) {
    // Numbers of one row usually arrive in order: extend the last range
    // (inline, as the profiler's wrappers do this for every message).
    if (n && q.first >= r[n - 1].first && q.first <= r[n - 1].last + 1)
      r[n - 1].last = std::max(r[n - 1].last, q.last);
    else
      AddRange(q);
  }

private:
  void AddRange(SeqRange q) {
    if (n && q.first >= r[n - 1].first) {
      r[n++] = q;
    } else {
      uint32_t i = 0;
      while (i < n && r[i].first < q.first)
        ++i;
      std::memmove(&r[i + 1], &r[i], sizeof(SeqRange) * (n - i));
      r[i] = q;
      ++n;
      // Coalesce what now touches or overlaps.
      uint32_t out = 0;
      for (uint32_t k = 1; k < n; ++k) {
        if (r[k].first <= r[out].last + 1)
          r[out].last = std::max(r[out].last, r[k].last);
        else
          r[++out] = r[k];
      }
      n = out + 1;
    }
    if (n > kMaxSeqRanges) {
      uint32_t best = 0;
      for (uint32_t k = 1; k + 1 < n; ++k)
        if (r[k + 1].first - r[k].last < r[best + 1].first - r[best].last)
          best = k;
      r[best].last = r[best + 1].last;
      std::memmove(&r[best + 1], &r[best + 2], sizeof(SeqRange) * (n - best - 2));
      --n;
    }
  }
};

// A row's ranges as readers hold them: almost every row has one range (its
// messages 1 to n), kept inline; more go to the heap. A std::vector cost an
// allocation per dependence row, the largest part of reading a million
// ranks' rows.
class SeqList {
public:
  SeqList() = default;
  SeqList(std::initializer_list<SeqRange> l) { assign(l.begin(), l.end()); }
  SeqList(const std::vector<SeqRange> &v) { assign(v.begin(), v.end()); } // NOLINT: implicit
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const SeqRange *begin() const { return n_ <= 1 ? &one_ : more_.data(); }
  const SeqRange *end() const { return begin() + n_; }
  SeqRange *begin() { return n_ <= 1 ? &one_ : more_.data(); }
  SeqRange *end() { return begin() + n_; }
  const SeqRange &operator[](size_t i) const { return begin()[i]; }
  SeqRange &operator[](size_t i) { return begin()[i]; }
  const SeqRange &front() const { return *begin(); }
  const SeqRange &back() const { return begin()[n_ - 1]; }
  void push_back(SeqRange q) {
    if (n_ == 1)
      more_.assign(1, one_); // from now on all of them on the heap
    if (n_ == 0)
      one_ = q;
    else
      more_.push_back(q);
    ++n_;
  }
  void clear() {
    n_ = 0;
    more_.clear();
  }
  template <class It> void assign(It first, It last) {
    clear();
    for (; first != last; ++first)
      push_back(*first);
  }
  void assign(size_t count, SeqRange q) {
    clear();
    for (size_t i = 0; i < count; ++i)
      push_back(q);
  }

private:
  uint32_t n_ = 0;
  SeqRange one_{};
  std::vector<SeqRange> more_; // all n_ ranges when n_ > 1
};

// INTO gets FROM's numbers too (rows merged when their contexts turn out to
// be one), within the same kMaxSeqRanges.
inline void MergeSeqRanges(SeqList &into, const SeqList &from) {
  SeqRanges all;
  for (const SeqRange &q : into)
    all.Add(q);
  for (const SeqRange &q : from)
    all.Add(q);
  into.assign(all.r, all.r + all.n);
}

struct DepRow {
  uint32_t ctx = 0;
  DepKind kind = DepKind::Send;
  int32_t peer = -1; // world rank; -1 for collectives
  int32_t tag = 0;
  uint32_t comm = 0; // index into Profile::comms
  uint64_t count = 0, bytes = 0;
  double wait_seconds = 0;
  // send and recv rows: the channel's messages this row sent or received
  // (optional in files; empty when not recorded).
  SeqList seqs;
};

// The thread dimension (docs/formats.md section 3, "Threads"; all optional).
// A thread is named by its creation order in the rank (0: the main thread)
// and, for OpenMP threads, its number in the outermost team.
struct ThreadInfo {
  uint32_t index = 0;
  int omp_thread = -1; // -1: not an OpenMP thread
  // All the thread's samples and the CPU time it used while sampled (0: not
  // measured, as in files written before these were kept).
  uint64_t samples = 0;
  double cpu_seconds = 0;
  // The kernel's account of the thread while profiled (docs/formats.md
  // section 3; 0: not measured): seconds runnable but not running, and its
  // lifetime on the wall clock.
  double run_delay = 0, wall_seconds = 0;
};
// One thread's samples in a context: written for every context that a
// thread other than the main one sampled (the rank's `vertices` row is the
// sum); a context with no such rows was sampled by the main thread alone.
struct ThreadRow {
  uint32_t ctx = 0, thread = 0; // thread: ThreadInfo::index
  uint64_t samples = 0;
  double cpu_seconds = 0;
};
// Time one thread spent in the OpenMP runtime at one place (OMPT): waits
// (kind barrier, loop_barrier, explicit_barrier, other_barrier, taskwait,
// taskgroup, reduction; critical, lock, nest_lock, ordered: waiting to
// enter one) with the samples taken while waiting, which are in
// no `vertices` row, and worksharing (kind loop, work) with the constructs'
// iterations (the whole loop's, as libomp reports them). CTX is the region's
// fork context, then the construct's own return address where it has one of
// its own.
struct OmpRow {
  uint32_t ctx = 0, thread = 0;
  std::string kind;
  uint64_t count = 0;
  double seconds = 0; // wall clock
  uint64_t samples = 0;
  double cpu_seconds = 0;
  uint64_t iterations = 0;
};
bool IsOmpWait(const std::string &kind);
// A wait to enter a critical section, take a lock or an ordered turn: the
// team serialised there.
bool IsOmpSerialWait(const std::string &kind);
// Time one thread spent off the CPU outside wrapped calls and OpenMP waits,
// by the context it left the CPU at (the off-CPU source, docs/formats.md
// section 3): its returns to a CPU there, the seconds blocked (a system
// call, sleep, a page fault) and the seconds runnable but waiting for a
// core. An empty context holds what no context could take.
struct OffCpuRow {
  uint32_t ctx = 0, thread = 0;
  uint64_t switches = 0;
  double blocked = 0, run_delay = 0;
};

struct RankData {
  int rank = 0;
  std::string host;
  int64_t pid = 0;
  int threads = 1;
  double wall_time = 0;
  uint64_t samples = 0, samples_dropped = 0;
  // CPU seconds of the process measured at the end (0: not recorded), and
  // of them the time its threads had the sampling signal blocked (docs/
  // formats.md section 3; both optional in files).
  double cpu_time = 0, sampling_blocked = 0;
  // The kernel's account of the main thread over wall_time (docs/formats.md
  // section 3, "Time accounting"; optional, 0: not measured): seconds on a
  // CPU and seconds runnable but waiting for one. What is left of wall_time
  // the thread was blocked (MPI waiting in the kernel, I/O, sleep). CORES:
  // the CPUs online on its host (0: unknown), to tell ranks sharing cores.
  double on_cpu = 0, run_delay = 0;
  int cores = 0;
  std::map<std::string, uint64_t> errors;
  std::vector<VertexRow> vertices;
  std::vector<MpiRow> mpi;
  std::vector<DepRow> deps;
  std::vector<ThreadInfo> thread_info;
  std::vector<ThreadRow> thread_vertices;
  std::vector<OmpRow> omp;
  std::vector<OffCpuRow> off_cpu;
  // How a rank's data ended when it is not part of a complete profile
  // (docs/formats.md section 3; both optional in files, written when set).
  // SNAPSHOT: the data is a periodic snapshot taken at wall_time, and no end
  // was recorded after it (the rank was killed, e.g. by SIGKILL, or is still
  // running). END_SIGNAL: the signal that ended the rank, 0 for none.
  bool snapshot = false;
  int end_signal = 0;
  // Why the rank could not write its file ("ENOSPC"), from its marker
  // RUN_DIR/rank-<R>.unwritten.<REASON>; "" when it could.
  std::string unwritten;
};

struct Profile {
  ProfileMeta meta;
  std::vector<Context> contexts;
  std::vector<CommMembers> comms;
  std::vector<RankData> ranks; // sorted by rank
  // Ranks with no data whose writes failed, and why ("ENOSPC"): their
  // markers in a run directory of per-rank files.
  std::map<int, std::string> unwritten;
  // Records of snapshot containers (RUN_DIR/snapshots-<L>.scs) that a
  // reader skipped, one message each naming the file, slot and rank (a torn
  // write, corruption, another run's container).
  std::vector<std::string> skipped;
};

// What a reader accepts (docs/formats.md section 3, "Readers"). Every number
// in a profile is checked against these and against the rest of the document
// before anything is sized from it.
inline constexpr int kMaxWorldSize = 1 << 22;                     // ranks in one run
inline constexpr double kMinSamplingHz = 1, kMaxSamplingHz = 1e6; // or 0: no sampling
inline constexpr double kMaxSeconds = 1e9;                        // any time field
inline constexpr size_t kMaxCounters = 64;                        // meta.sampling.counters
inline constexpr size_t kMaxContextFrames = 1024;                 // frames in one context
inline constexpr size_t kMaxModules = kMaxFrameModule;            // meta.modules
// Sizes: a profile file is at most kMaxProfileBytes compressed and inflates
// to at most kInflateRatio times that, never less than kInflateFloor and
// never more than kMaxProfileBytes (gzip bombs stop there).
inline constexpr uint64_t kMaxProfileBytes = uint64_t(1) << 30;
inline constexpr uint64_t kInflateFloor = uint64_t(16) << 20;
inline constexpr uint64_t kInflateRatio = 64;

// Reads RUN_DIR/profile.json.gz, or merges RUN_DIR/rank-<R>.json.gz when the
// run ended before MPI_Finalize (each must hold rank R, and all the same
// build and world size). Throws Error on a missing, truncated, corrupt,
// oversized or inconsistent profile with a message naming the file and field.
// Only regular files are read (a FIFO or device is an error, never a hang).
Profile ReadProfile(const std::string &run_dir);
// Reads one gzip JSON profile document.
Profile ReadProfileFile(const std::string &path);
// The same on the bytes of such a file (ORIGIN names it in messages).
Profile ProfileFromGzip(const std::string &bytes, const std::string &origin);
// Writes gzip JSON atomically (temporary file + rename). Throws Error.
void WriteProfileFile(const Profile &p, const std::string &path);

// The uncompressed JSON text of a profile document and its parser (ORIGIN
// names the source in error messages); the runtime gathers ranks this way.
std::string ProfileToJson(const Profile &p);
Profile ProfileFromJson(const std::string &text, const std::string &origin);
// Merges one-rank profiles (per-rank files, gathered ranks): contexts and
// communicators are deduplicated and re-indexed, ranks sorted; meta comes
// from the first part, but for meta.modules: the union of the parts' (ranks
// may load libraries in other orders), each part's frames renumbered to it.
Profile MergeProfiles(std::vector<Profile> parts);

std::string FormatId(uint64_t id);         // "0x…"
uint64_t ParseId(const std::string &text); // throws Error

const char *ToString(DepKind k);

// How one rank ended when it did not reach a complete profile, for reports:
// "called MPI_Abort", "fatal signal SIGSEGV", "no end recorded, data up to
// its last periodic snapshot 3.0 s after it started (...)"; empty otherwise.
std::string DescribeRankEnd(const RankData &r);
// One line per reason: which ranks of P ended before MPI_Finalize and how,
// and which have no data at all and why ("ranks 0,2,3 ended before
// MPI_Finalize: SIGTERM, ..."). Empty for a complete run.
std::vector<std::string> DescribeRankEnds(const Profile &p);

} // namespace scalana
