// Writing the profile: gathered at MPI_Finalize into RUN_DIR/profile.json.gz
// by rank 0; before that, each rank's periodic snapshots in its node's
// container (snapshot_container.cpp) or RUN_DIR/rank-<R>.json.gz, and its
// end record in the latter if it ends without a complete profile
// (docs/formats.md sections 3 and 5; the writer thread and the endings are
// in writer.cpp). Also the library's load-time setup. Nothing here may stop the
// program: failures are counted or printed as one line, never thrown.
#include "compress.h"
#include "config.h"
#include "final_profile.h"
#include "modules.h"
#include "recorder.h"
#include "run_dir_claim.h"
#include "runtime.h"
#include "scalana/echo.h"
#include "scalana/elf_section.h"
#include "scalana/psg_format.h"
#include "signal_safe/write_whole.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace scalana::rt {

void InitSampling();
bool SnapshotMpi(Profile &p, RankData &r, double lock_seconds);
int WorldSizeKnown();

namespace {

double g_load_time = 0;
std::string *g_start_time;
// The job as the launcher saw it, read at load: a singleton's MPI_Init puts
// its own PMIx namespace into the environment.
std::string *g_job_id;

std::string ReadLink(const char *path) {
  char buf[PATH_MAX];
  ssize_t n = readlink(path, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

std::vector<std::string> CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0'))
    args.push_back(arg);
  return args;
}

std::string RunDir() {
  std::string dir = config::Value(config::Id::Output);
  if (dir.empty())
    dir = config::DefaultOutput(ReadLink("/proc/self/exe"));
  return dir;
}

void MakeDirs(const std::string &dir) {
  for (size_t pos = 1; pos != std::string::npos; pos = dir.find('/', pos + 1))
    mkdir(dir.substr(0, pos).c_str(), 0777); // EEXIST is fine: ranks race here
  mkdir(dir.c_str(), 0777);
}

// The parts of the metadata that do not change during the run. Reading the
// binary is the slow part of a document, so it is done once, by the writer
// thread before its first snapshot: an end record (which has a second or
// less before the MPI launcher's SIGKILL) then only serialises the tables.
struct FixedMeta {
  std::string binary, build_id, psg_id, mpi_library, run_dir;
  std::vector<std::string> args;
  std::map<std::string, std::string> config;
};
std::mutex g_fixed_mutex;
FixedMeta *g_fixed = nullptr; // leaked on purpose: exit-time writers use it

const FixedMeta &Fixed() {
  std::lock_guard<std::mutex> lock(g_fixed_mutex);
  if (g_fixed)
    return *g_fixed;
  auto *m = new FixedMeta;
  m->binary = ReadLink("/proc/self/exe");
  std::string error;
  if (auto elf = ReadElf(m->binary, kPsgSection, &error)) {
    m->build_id = elf->build_id;
    if (elf->has_section)
      m->psg_id = PsgId(elf->section);
  } else {
    CountError("read_binary");
  }
  m->args = CommandLine();
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  if (PMPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
    m->mpi_library = std::string(lib, size_t(len));
    while (!m->mpi_library.empty() &&
           (m->mpi_library.back() == '\n' || m->mpi_library.back() == '\0'))
      m->mpi_library.pop_back();
  }
  m->run_dir = RunDir();
  for (const config::Option &o : config::Options())
    m->config[o.env] = o.env == std::string("SCALANA_OUTPUT")
                           ? m->run_dir
                           : config::Value(config::Id(&o - &config::Options()[0]));
  g_fixed = m;
  return *g_fixed;
}

ProfileMeta BuildMeta(bool complete) {
  const FixedMeta &f = Fixed();
  ProfileMeta m;
  m.complete = complete;
  m.world_size = WorldSizeKnown() > 0 ? WorldSizeKnown() : config::WorldSizeFromEnv();
  m.binary = f.binary;
  m.build_id = f.build_id;
  m.psg_id = f.psg_id;
  m.modules = LoadedModules();
  m.args = f.args;
  m.mpi_library = f.mpi_library;
  m.start_time = g_start_time ? *g_start_time : "";
  m.run_id = RunId();
  m.wall_time = Now() - g_load_time;
  const SamplerState &s = Sampler();
  m.sampling.source = s.source;
  m.sampling.hz = s.hz;
  m.sampling.clock = "cpu";
  m.sampling.counters = s.counters;
  m.sampling.counters_real = !s.counters.empty();
  m.sampling.note = s.note;
  m.config = f.config;
  return m;
}

// This rank's data as a one-rank profile; false when its tables could not be
// read within LOCK_SECONDS.
bool Snapshot(bool complete, int rank, double lock_seconds, Profile *out) {
  Profile &p = *out;
  p.meta = BuildMeta(complete);
  RankData r;
  r.rank = rank;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  r.host = host;
  r.pid = getpid();
  r.threads = ThreadCount();
  r.wall_time = p.meta.wall_time;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  r.cores = cores > 0 && cores < (1 << 20) ? int(cores) : 0;
  if (!SnapshotMpi(p, r, lock_seconds))
    return false;
  for (const auto &[what, n] : ErrorCounts(lock_seconds))
    r.errors[what] += n;
  if (uint64_t refused = RefusedCloses())
    r.errors["program_closed_profiler_descriptor"] += refused;
  // The rate actually achieved (timer ticks, dropped signals) against the
  // process's CPU time, all threads.
  struct timespec cpu;
  if (Sampler().hz > 0 && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0) {
    double seconds = double(cpu.tv_sec) + 1e-9 * double(cpu.tv_nsec);
    r.cpu_time = seconds;
    if (seconds > 0.05) {
      char line[160];
      std::snprintf(line, sizeof line, "rank %d: %llu samples over %.2f CPU s (effective %.0f Hz)",
                    rank, (unsigned long long)r.samples, seconds, double(r.samples) / seconds);
      p.meta.sampling.note += std::string(p.meta.sampling.note.empty() ? "" : "; ") + line;
    }
  }
  std::string signals = SignalCheck();
  if (!signals.empty())
    p.meta.sampling.note += std::string(p.meta.sampling.note.empty() ? "" : "; ") + signals;
  if (p.meta.psg_id.empty())
    p.meta.sampling.note += std::string(p.meta.sampling.note.empty() ? "" : "; ") +
                            "binary not built with scalana-cc/-cxx/-fc (no PSG): its structure "
                            "is recovered from its line tables and machine code, without "
                            "branch vertices or OpenMP constructs";
  p.ranks.push_back(std::move(r));
  return true;
}

// Counts kept beside the errors that are facts about the run, not failures.
bool IsInformational(const std::string &what) {
  return what == "stack_truncated" || what == "samples_in_profiler" ||
         what == "samples_while_blocked" || what == "perf_fd_budget_timer" ||
         what == "off_cpu_fd_budget" || what == "threads_moved_to_perf" ||
         what == "program_closed_profiler_descriptor" || what.rfind("ended_by_", 0) == 0;
}

int FileRank() {
  int r = WorldRank();
  if (r < 0)
    r = config::WorldRankFromEnv();
  return r < 0 ? 0 : r;
}

// TEXT (a message quoting paths in the run directory) escaped, the run
// directory in it echoed cut (scalana/echo.h): SCALANA_OUTPUT may hold a
// newline or be 10 KB long.
std::string Echoed(const std::string &text) {
  std::vector<std::string> values;
  {
    std::lock_guard<std::mutex> lock(g_fixed_mutex);
    if (g_fixed)
      values.push_back(g_fixed->run_dir);
  }
  return EchoInMessage(text, values);
}

} // namespace

void WarnUnusableOptions() noexcept {
  try {
    // Through `scalana prof` these were refused before the program started;
    // without it, each goes back to its default, and says so once.
    for (const config::Option &o : config::Options()) {
      const char *v = std::getenv(o.env);
      if (!v || !*v)
        continue;
      std::string err = config::Validate(o, v);
      if (!err.empty())
        std::fprintf(stderr, "scalana: %s; the default %s is used\n", EscapeControls(err).c_str(),
                     *o.default_value ? o.default_value : "(computed)");
    }
  } catch (...) {
  }
}

void PrepareFixedMeta() noexcept {
  try {
    Fixed();
  } catch (...) {
    CountError("read_binary");
  }
}

std::string ConfiguredRunDir() { return RunDir(); }

void MakeRunDirs(const std::string &dir) { MakeDirs(dir); }

std::string RankFilePath() {
  return Fixed().run_dir + "/rank-" + std::to_string(FileRank()) + ".json.gz";
}

std::string UnwrittenMarkerPath() {
  return Fixed().run_dir + "/rank-" + std::to_string(FileRank()) + ".unwritten.ENOSPC";
}

namespace {

// A write that failed with ERR (errno): the disk may be full.
struct WriteFailure : std::runtime_error {
  int err;
  WriteFailure(const std::string &what, int e) : std::runtime_error(what), err(e) {}
};

bool NoSpace(int err) { return err == ENOSPC || err == EDQUOT; }

// This rank's marker of a write lost to a full disk: an empty file, which
// needs no data block, so it can be made where the rank file could not.
// Readers then say the rank could not write (docs/formats.md section 3)
// instead of taking its last snapshot for a killed rank.
bool g_marked = false; // writer thread, or the one thread writing the end

void MarkNoSpace() {
  if (g_marked)
    return;
  int fd = open(UnwrittenMarkerPath().c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) {
    close(fd);
    g_marked = true;
  }
}

void ClearNoSpace() {
  if (g_marked && unlink(UnwrittenMarkerPath().c_str()) == 0)
    g_marked = false;
}

// A gzip member of TEXT. Level 1: rank files are small and written while the
// rank may have a millisecond left (docs/runtime.md, "Output").
std::string Gzip(const std::string &text) { return detail::Gzip(text, 1); }

// BYTES into PATH through PATH.tmp.PID and rename, so the file is whole at
// every moment. A snapshot's rename is skipped once the rank is ending: from
// then on the file belongs to the end record (ReplaceRankFile, writer.cpp).
void WriteAtomically(const std::string &bytes, const std::string &path, bool snapshot) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw WriteFailure(tmp + ": " + std::strerror(errno), errno);
  if (int err = 0; !WriteWhole(fd, bytes.data(), bytes.size(), -1, &err)) {
    close(fd);
    unlink(tmp.c_str());
    throw WriteFailure(tmp + ": " + std::strerror(err), err);
  }
  if (close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    throw WriteFailure(tmp + ": " + std::strerror(err), err);
  }
  int err = 0;
  if (!ReplaceRankFile(tmp.c_str(), path.c_str(), snapshot, &err) && err) {
    unlink(tmp.c_str());
    throw std::runtime_error(path + ": " + std::strerror(err));
  }
}

} // namespace

bool WriteRankFile(const char *why, int sig, double lock_seconds) noexcept {
  try {
    Profile p;
    if (!Snapshot(false, FileRank(), lock_seconds, &p)) {
      CountError(why ? "end_record_locked" : "snapshot_locked");
      return false;
    }
    RankData &r = p.ranks[0];
    if (why) {
      r.errors[std::string("ended_by_") + why] += 1;
      r.end_signal = sig;
    } else {
      r.snapshot = true;
    }
    std::string gz = Gzip(ProfileToJson(p));
    // A snapshot goes to the node's container when there is one and it fits
    // a slot: a pwrite(), no file made (docs/runtime.md, "Output"). End
    // records, once per rank and only on abnormal ends, go to the rank file.
    bool in_container = false;
    if (!why) {
      int err = 0;
      SlotResult slot = WriteSnapshotSlot(gz, &err);
      in_container = slot == SlotResult::kWritten;
      if (slot == SlotResult::kTooLarge)
        CountError("snapshot_over_slot");
      else if (slot == SlotResult::kFailed)
        CountError("snapshot_container_write");
    }
    if (in_container) {
      DropSnapshotRankFile();
    } else {
      NoteRankFileUsed();
      MakeDirs(Fixed().run_dir);
      WriteAtomically(gz, RankFilePath(), why == nullptr);
    }
    ClearNoSpace(); // written after all: the file says how the rank ended
    if (!why) {
      // The end record a SIGTERM puts in place when no time is left to
      // build one: this snapshot and the reason (writer.cpp).
      r.errors["ended_by_signal_term"] += 1;
      r.end_signal = SIGTERM;
      PublishPremadeEnd(Gzip(ProfileToJson(p)), in_container);
    }
    return true;
  } catch (const WriteFailure &e) {
    CountError(why ? "end_record_write" : "snapshot_write");
    if (NoSpace(e.err)) {
      MarkNoSpace();
      if (why)
        std::fprintf(stderr,
                     "scalana: rank %d: could not write: no space left on the device of %s "
                     "(%s); its data there is that of its last snapshot, if any\n",
                     FileRank(), EchoValue(Fixed().run_dir).c_str(), std::strerror(e.err));
    } else if (why) {
      std::fprintf(stderr, "scalana: rank %d: could not write its profile: %s\n", FileRank(),
                   Echoed(e.what()).c_str());
    }
  } catch (const std::exception &e) {
    CountError(why ? "end_record_write" : "snapshot_write");
    if (why) // the rank is ending: the last chance to say so
      std::fprintf(stderr, "scalana: rank %d: could not write its profile: %s\n", FileRank(),
                   Echoed(e.what()).c_str());
  } catch (...) {
    CountError(why ? "end_record_write" : "snapshot_write");
  }
  return false;
}

std::string FinalRunDir() {
  std::string dir = Fixed().run_dir;
  MakeDirs(dir);
  return dir;
}

FinalTotals TotalsOf(const Profile &p) {
  FinalTotals t;
  for (const RankData &r : p.ranks) {
    t.samples += r.samples;
    t.dropped += r.samples_dropped;
    for (const auto &[what, n] : r.errors)
      if (!IsInformational(what))
        t.errors += n;
  }
  return t;
}

void PrintFinalSummary(const std::string &file, int size, const FinalTotals &t, int missing) {
  if (Verbose() || t.dropped || t.errors || missing)
    std::fprintf(stderr,
                 "scalana: wrote %s: %d ranks, %llu samples, %llu dropped, "
                 "%llu runtime errors%s\n",
                 Echoed(file).c_str(), size, (unsigned long long)t.samples,
                 (unsigned long long)t.dropped, (unsigned long long)t.errors,
                 t.errors ? " (see `scalana show` for the list)" : "");
}

bool GatherProfileJson(const std::string &text) noexcept {
  int rank = WorldRank(), size = WorldSizeKnown();
  // Every rank must take part in every collective below even when its own
  // part failed, or the others would wait forever.
  int len = int(text.size());
  std::vector<int> lens, offsets;
  std::vector<char> all;
  if (rank == 0) {
    try {
      lens.assign(size_t(size), 0);
      offsets.assign(size_t(size), 0);
    } catch (...) {
      size = 0; // cannot happen in practice; the gathers below then fail alike
    }
  }
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    long total = 0;
    for (int i = 0; i < size; ++i) {
      offsets[size_t(i)] = int(total);
      total += lens[size_t(i)];
    }
    try {
      all.resize(size_t(total) + 1);
    } catch (...) {
      lens.assign(size_t(size), 0); // receive nothing: every rank counted missing
      CountError("gather_alloc");
    }
  }
  PMPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
               MPI_COMM_WORLD);
  int written = 0;
  if (rank == 0) {
    try {
      std::vector<Profile> parts;
      int missing = 0;
      for (int i = 0; i < size; ++i) {
        if (lens[size_t(i)] == 0) {
          ++missing;
          continue;
        }
        try {
          parts.push_back(
              ProfileFromJson(std::string(all.data() + offsets[size_t(i)], size_t(lens[size_t(i)])),
                              "rank " + std::to_string(i)));
        } catch (const std::exception &) {
          ++missing;
        }
      }
      std::vector<char>().swap(all);
      Profile merged = MergeProfiles(std::move(parts));
      merged.meta.complete = missing == 0;
      merged.meta.world_size = size;
      if (missing && !merged.ranks.empty())
        merged.ranks[0].errors["ranks_missing"] += missing;
      std::string dir = FinalRunDir();
      WriteProfileFile(merged, dir + "/profile.json.gz");
      written = 1;
      PrintFinalSummary(dir + "/profile.json.gz", size, TotalsOf(merged), missing);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "scalana: could not write the profile: %s%s\n", Echoed(e.what()).c_str(),
                   std::strstr(e.what(), std::strerror(ENOSPC))
                       ? " (could not write: no space left; every rank keeps its own file "
                         "where it still fits)"
                       : "");
    } catch (...) {
    }
  }
  // Every rank learns whether its data is in profile.json.gz.
  PMPI_Bcast(&written, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return written != 0;
}

void WriteFinalProfile() noexcept {
  // No snapshot may replace a rank file while the profile is written and
  // the ranks remove their files.
  StopSnapshots();
  StopSampling();
  std::string text;
  try {
    Profile p;
    if (Snapshot(true, WorldRank(), 10.0, &p))
      text = ProfileToJson(p);
  } catch (const std::exception &) {
    text.clear(); // this rank sends nothing; the writer notes it
  }
  // SCALANA_WRITE_GROUP 0 asks for the gather; a collective write that
  // fails, on any rank, falls back to it on every rank.
  unsigned long group = config::UintValue(config::Id::WriteGroup);
  bool written = false;
  if (group > 0) {
    std::string why;
    written = WriteProfileCollective(text, group, &why);
    if (!written && WorldRank() == 0)
      std::fprintf(stderr,
                   "scalana: could not write %s with MPI-IO (%s); rank 0 gathers "
                   "profile.json.gz instead\n",
                   container::kFileName, Echoed(why).c_str());
  }
  if (!written)
    written = GatherProfileJson(text);
  // Then every rank whose data is in the profile removes its rank file (a
  // complete run leaves the profile only); else the file stays and gets
  // this rank's end record.
  FinishRank(written);
}

std::string StartTimeUtc() { return g_start_time ? *g_start_time : ""; }

bool ClaimRunDir(const char *run_id) noexcept {
  try {
    std::string dir = RunDir();
    MakeDirs(dir);
    // Through `scalana prof`, the launcher claimed it and this joins; without
    // it (SCALANA_OUTPUT set, the library preloaded), this is the claim,
    // and its refusal cannot stop the program: the run goes unprofiled.
    rundir::Claim c = rundir::ClaimJobFile(dir, g_job_id ? *g_job_id : config::JobIdFromEnv(),
                                           config::BoolValue(config::Id::Force), "", 10);
    if (c.kind == rundir::Claim::kRefused) {
      std::fprintf(stderr, "scalana: %s; this run is not profiled (the program runs on)\n",
                   EscapeControls(c.message).c_str());
      return false;
    }
    if (c.kind == rundir::Claim::kOwned)
      rundir::MoveHigh(c.fd, true);   // held, with its lock, until the process ends
    rundir::AppendRunId(dir, run_id); // else the rank files still carry the id
  } catch (...) {
    // The rank files carry the run id all the same.
  }
  return true;
}

} // namespace scalana::rt

namespace {

// Launchers and their daemons inherit LD_PRELOAD when `scalana prof` is put
// before them, or when a rank starts one (Open MPI's singleton daemon is
// forked inside MPI_Init; LD_PRELOAD is dropped there too, see InitStarting):
// they are not the profiled program, and sampling them only disturbs them.
bool IsLauncherProcess() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  const char *base = std::strrchr(buf, '/');
  base = base ? base + 1 : buf;
  for (const char *name : {"orted", "orterun", "mpirun", "mpiexec", "prted", "prterun", "prte",
                           "prun", "hydra_pmi_proxy", "mpiexec.hydra", "srun", "slurmstepd"})
    if (std::strcmp(base, name) == 0)
      return true;
  return false;
}

} // namespace

// Load-time setup: runs in every process the launcher started, before main.
__attribute__((constructor)) static void ScalanaRuntimeLoad() {
  using namespace scalana::rt;
  if (IsLauncherProcess())
    return; // inactive: no sampling, no handlers, no files
  SetRuntimeActive(true);
  scalana::rundir::CloseJobLockOnExec();
  g_job_id = new std::string(scalana::config::JobIdFromEnv());
  g_load_time = Now();
  char buf[32];
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  g_start_time = new std::string(buf);
  InitSampling();
  InstallFatalSignalHandlers();
  RegisterExitHandler();
}
