// Writing the profile: gathered at MPI_Finalize into RUN_DIR/profile.json.gz
// by rank 0; otherwise each rank's RUN_DIR/rank-<R>.json.gz from exit,
// MPI_Abort or a fatal signal (docs/formats.md section 3). Also the library's
// load-time setup. Nothing here may stop the program: failures are counted or
// printed as one line, never thrown.
#include "config.h"
#include "recorder.h"
#include "runtime.h"
#include "scalana/elf_section.h"
#include "scalana/ids.h"
#include "scalana/psg_format.h"

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

namespace scalana::rt {

void InitSampling();
void SnapshotMpi(Profile &p, RankData &r);
int WorldSizeKnown();
bool MpiReady();
bool MpiInitCalled();

namespace {

double g_load_time = 0;
std::string *g_start_time;
std::atomic<bool> g_written{false}; // this rank's data went into a file (or the gather)

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

ProfileMeta BuildMeta(bool complete) {
  ProfileMeta m;
  m.complete = complete;
  m.world_size = WorldSizeKnown() > 0 ? WorldSizeKnown() : config::WorldSizeFromEnv();
  m.binary = ReadLink("/proc/self/exe");
  std::string error;
  if (auto elf = ReadElf(m.binary, kPsgSection, &error)) {
    m.build_id = elf->build_id;
    if (elf->has_section) {
      char id[24];
      std::snprintf(id, sizeof id, "0x%016lx",
                    (unsigned long)scalana_fnv1a64(elf->section.data(), elf->section.size()));
      m.psg_id = id;
    }
  } else {
    CountError("read_binary");
  }
  m.args = CommandLine();
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  if (PMPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
    m.mpi_library = std::string(lib, size_t(len));
    while (!m.mpi_library.empty() && (m.mpi_library.back() == '\n' || m.mpi_library.back() == '\0'))
      m.mpi_library.pop_back();
  }
  m.start_time = g_start_time ? *g_start_time : "";
  m.wall_time = Now() - g_load_time;
  const SamplerState &s = Sampler();
  m.sampling.source = s.source;
  m.sampling.hz = s.hz;
  m.sampling.clock = "cpu";
  m.sampling.counters = s.counters;
  m.sampling.counters_real = !s.counters.empty();
  m.sampling.note = s.note;
  for (const config::Option &o : config::Options())
    m.config[o.env] = o.env == std::string("SCALANA_OUTPUT")
                          ? RunDir()
                          : config::Value(config::Id(&o - &config::Options()[0]));
  return m;
}

Profile Snapshot(bool complete, int rank) {
  Profile p;
  p.meta = BuildMeta(complete);
  RankData r;
  r.rank = rank;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  r.host = host;
  r.pid = getpid();
  r.threads = ThreadCount();
  r.wall_time = p.meta.wall_time;
  SnapshotMpi(p, r);
  for (const auto &[what, n] : ErrorCounts())
    r.errors[what] += n;
  // The rate actually achieved (timer ticks, dropped signals) against the
  // process's CPU time, all threads.
  struct timespec cpu;
  if (Sampler().hz > 0 && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0) {
    double seconds = double(cpu.tv_sec) + 1e-9 * double(cpu.tv_nsec);
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
                            "binary not built with scalana-cc/-cxx/-fc (no PSG): its frames "
                            "cannot be mapped to source structure";
  p.ranks.push_back(std::move(r));
  return p;
}

// Counts kept beside the errors that are facts about the run, not failures.
bool IsInformational(const std::string &what) {
  return what == "stack_truncated" || what == "samples_in_profiler" ||
         what.rfind("ended_by_", 0) == 0;
}

int FallbackRank() {
  int r = WorldRank();
  if (r < 0)
    r = config::WorldRankFromEnv();
  return r < 0 ? 0 : r;
}

} // namespace

void WriteRankFallback(const char *why) noexcept {
  if (g_written.exchange(true))
    return;
  try {
    StopSampling();
    int rank = FallbackRank();
    Profile p = Snapshot(false, rank);
    p.ranks[0].errors[std::string("ended_by_") + why] += 1;
    std::string dir = RunDir();
    MakeDirs(dir);
    WriteProfileFile(p, dir + "/rank-" + std::to_string(rank) + ".json.gz");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "scalana: rank %d: could not write its profile: %s\n", FallbackRank(),
                 e.what());
  } catch (...) {
  }
}

void WriteFinalProfile() noexcept {
  if (!MpiReady()) {
    WriteRankFallback("finalize_without_init");
    return;
  }
  if (g_written.exchange(true))
    return;
  try {
    StopSampling();
    int rank = WorldRank(), size = WorldSizeKnown();
    std::string text;
    try {
      text = ProfileToJson(Snapshot(true, rank));
    } catch (const std::exception &e) {
      text.clear(); // this rank sends nothing; rank 0 notes it
    }
    // Every rank must take part in the gathers even when its snapshot failed,
    // or rank 0 would wait forever.
    int len = int(text.size());
    std::vector<int> lens(rank == 0 ? size_t(size) : 0), offsets;
    PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<char> all;
    if (rank == 0) {
      offsets.resize(size_t(size));
      long total = 0;
      for (int i = 0; i < size; ++i) {
        offsets[size_t(i)] = int(total);
        total += lens[size_t(i)];
      }
      all.resize(size_t(total) + 1);
    }
    PMPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
                 MPI_COMM_WORLD);
    if (rank != 0)
      return;
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
    Profile merged = MergeProfiles(std::move(parts));
    merged.meta.complete = missing == 0;
    merged.meta.world_size = size;
    if (missing && !merged.ranks.empty())
      merged.ranks[0].errors["ranks_missing"] += missing;
    std::string dir = RunDir();
    MakeDirs(dir);
    WriteProfileFile(merged, dir + "/profile.json.gz");
    uint64_t samples = 0, dropped = 0, errors = 0;
    for (const RankData &r : merged.ranks) {
      samples += r.samples;
      dropped += r.samples_dropped;
      for (const auto &[what, n] : r.errors)
        if (!IsInformational(what))
          errors += n;
    }
    if (Verbose() || dropped || errors || missing)
      std::fprintf(stderr,
                   "scalana: wrote %s/profile.json.gz: %d ranks, %llu samples, %llu dropped, "
                   "%llu runtime errors%s\n",
                   dir.c_str(), size, (unsigned long long)samples, (unsigned long long)dropped,
                   (unsigned long long)errors, errors ? " (see `scalana show` for the list)" : "");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "scalana: could not write the profile: %s\n", e.what());
  } catch (...) {
  }
}

// ---- fatal signals: write this rank's data, then let the signal do what it
// would have done. Writing allocates and takes locks, which is not
// async-signal-safe: if the signal hit inside malloc this may deadlock or
// crash, so it is best effort, guarded against re-entry, and the original
// disposition always runs afterwards.
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
struct sigaction g_previous[NSIG];
volatile sig_atomic_t g_in_fatal = 0;

void FatalSignalHandler(int sig, siginfo_t *info, void *uc) {
  if (!g_in_fatal) {
    g_in_fatal = 1;
    WriteRankFallback(sig == SIGTERM || sig == SIGINT ? "signal_term" : "signal_fatal");
  }
  const struct sigaction &prev = g_previous[sig];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, info, uc);
    return;
  }
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler) {
    prev.sa_handler(sig);
    return;
  }
  if (prev.sa_handler == SIG_IGN)
    return;
  signal(sig, SIG_DFL);
  raise(sig); // default action, unchanged program behaviour (core, exit status)
}

void AtExit() { WriteRankFallback("exit_without_finalize"); }

} // namespace

void InstallFatalSignalHandlers() noexcept {
  for (int sig : kFatalSignals) {
    struct sigaction sa, old;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = FatalSignalHandler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) == 0 && old.sa_sigaction != FatalSignalHandler)
      g_previous[sig] = old;
  }
}

std::string StartTimeUtc() { return g_start_time ? *g_start_time : ""; }

} // namespace scalana::rt

// Load-time setup: runs in every process the launcher started, before main.
__attribute__((constructor)) static void ScalanaRuntimeLoad() {
  using namespace scalana::rt;
  g_load_time = Now();
  char buf[32];
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  g_start_time = new std::string(buf);
  InitSampling();
  InstallFatalSignalHandlers();
  std::atexit(AtExit);
}
