// Detector time and memory on synthetic runs from 128 to 131,072 ranks.
//
// The synthetic program: main holds a time-step loop calling 64 kernels
// (each a local PSG of 41 loops and branches: ~2,700 vertices in all), then a
// 2-D periodic halo exchange (Irecv, Isend, Waitall with 4 neighbours) and an
// MPI_Allreduce. Every rank has samples in two loops of every kernel; one
// rank is 3x slower in one kernel loop, so its 4 neighbours wait for it in
// Waitall and everyone else waits in the allreduce. For each size N, runs at
// N/4 and N ranks are built in memory in a child process, and the child
// reports the time to build the PPGs and to detect, and its peak memory.
//
// usage: bench-detect [max_ranks]   (default 131072)
#include "detect/detect.h"
#include "ppg/ppg.h"
#include "scalana/ids.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <malloc.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace scalana;

namespace {

constexpr int kKernels = 64;
constexpr int kBlocks = 10;         // each kernel: 10 x (loop{loop, branch{loop}})
constexpr int kSlowRankDivisor = 3; // slow rank = N / 3

uint64_t Hash(const std::string &key) { return scalana_function_hash(key.data(), key.size()); }

struct Program {
  std::vector<LocalPsg> fns;
  uint64_t main_hash = 0;
  std::vector<uint32_t> call_sites; // local ids in main
  uint32_t irecv = 0, isend = 0, waitall = 0, allreduce = 0;
  uint64_t Main(uint32_t l) const { return scalana_vertex_id(main_hash, l); }
  static uint64_t Kernel(int k, uint32_t l) {
    return scalana_vertex_id(Hash("kernel" + std::to_string(k)), l);
  }
};

uint32_t Add(LocalPsg &f, uint32_t parent, VertexKind kind, uint32_t line, int arm = -1) {
  LocalVertex v;
  v.local = uint32_t(f.vertices.size());
  v.kind = kind;
  v.parent = int32_t(parent);
  v.arm = arm;
  v.loc = {f.loc.file, line, line + 1, 0};
  f.vertices.push_back(v);
  f.vertices[parent].children.push_back(v.local);
  return v.local;
}

LocalPsg Function(const std::string &name, const std::string &file) {
  LocalPsg f;
  f.key = f.name = name;
  f.linkage = "external";
  f.loc = {file, 1, 1000, 0};
  LocalVertex root;
  root.kind = VertexKind::Function;
  root.loc = f.loc;
  f.vertices.push_back(root);
  return f;
}

Program MakeProgram() {
  Program p;
  for (int k = 0; k < kKernels; ++k) {
    LocalPsg f = Function("kernel" + std::to_string(k), "kernel" + std::to_string(k) + ".c");
    for (int b = 0; b < kBlocks; ++b) {
      uint32_t outer = Add(f, 0, VertexKind::Loop, 10 + 10 * b);
      Add(f, outer, VertexKind::Loop, 11 + 10 * b);
      uint32_t br = Add(f, outer, VertexKind::Branch, 13 + 10 * b);
      Add(f, br, VertexKind::Loop, 14 + 10 * b, 0);
    }
    p.fns.push_back(std::move(f));
  }
  LocalPsg m = Function("main", "main.c");
  uint32_t step = Add(m, 0, VertexKind::Loop, 10);
  for (int k = 0; k < kKernels; ++k) {
    uint32_t c = Add(m, step, VertexKind::Call, 20 + k);
    m.vertices[c].callee = "kernel" + std::to_string(k);
    p.call_sites.push_back(c);
  }
  auto mpi = [&](uint32_t line, const char *op, MpiClass cls) {
    uint32_t v = Add(m, step, VertexKind::Mpi, line);
    m.vertices[v].mpi_op = op;
    m.vertices[v].mpi_class = cls;
    return v;
  };
  p.irecv = mpi(100, "MPI_Irecv", MpiClass::P2PNonBlocking);
  p.isend = mpi(101, "MPI_Isend", MpiClass::P2PNonBlocking);
  p.waitall = mpi(102, "MPI_Waitall", MpiClass::Completion);
  p.allreduce = mpi(110, "MPI_Allreduce", MpiClass::Collective);
  p.main_hash = Hash("main");
  p.fns.push_back(std::move(m));
  return p;
}

// A 2-D periodic grid px x py = n, px the largest divisor <= sqrt(n).
void Grid(int n, int *px, int *py) {
  int x = int(std::sqrt(double(n)));
  while (n % x)
    --x;
  *px = x;
  *py = n / x;
}

Profile MakeProfile(const Program &prog, int n) {
  Profile p;
  p.meta.world_size = n;
  p.meta.psg_id = "0xbench";
  p.meta.sampling.hz = 200;
  p.comms.emplace_back();
  p.comms[0].AppendRun(0, 1, uint32_t(n));
  // Contexts: two sampled loops per kernel, then the MPI vertices.
  for (int k = 0; k < kKernels; ++k) {
    p.contexts.push_back({prog.Main(prog.call_sites[k]), Program::Kernel(k, 1)}); // block 0 outer
    p.contexts.push_back({prog.Main(prog.call_sites[k]), Program::Kernel(k, 6)}); // block 1 inner
  }
  const uint32_t c_irecv = uint32_t(p.contexts.size());
  p.contexts.push_back({prog.Main(prog.irecv)});
  p.contexts.push_back({prog.Main(prog.isend)});
  p.contexts.push_back({prog.Main(prog.waitall)});
  p.contexts.push_back({prog.Main(prog.allreduce)});
  const uint32_t c_isend = c_irecv + 1, c_waitall = c_irecv + 2, c_allreduce = c_irecv + 3;

  const int slow = n / kSlowRankDivisor;
  const double base = 0.5, extra = 1.0; // slow rank: kernel 7 loop takes 1.5 s instead of 0.5
  int px, py;
  Grid(n, &px, &py);
  auto neighbours = [&](int r) {
    int x = r % px, y = r / px;
    return std::array<int, 4>{((x + px - 1) % px) + y * px, ((x + 1) % px) + y * px,
                              x + ((y + py - 1) % py) * px, x + ((y + 1) % py) * px};
  };
  auto slow_nbrs = neighbours(slow);
  p.ranks.resize(n);
  for (int r = 0; r < n; ++r) {
    RankData &rd = p.ranks[r];
    rd.rank = r;
    rd.vertices.reserve(2 * kKernels);
    for (int k = 0; k < kKernels; ++k)
      for (int j = 0; j < 2; ++j) {
        double t = (k == 7 && j == 1 && r == slow) ? base + extra : base * (1 + 0.01 * (r % 7));
        rd.vertices.push_back({uint32_t(2 * k + j), uint64_t(t * 200), t, {}});
      }
    bool nbr = std::find(slow_nbrs.begin(), slow_nbrs.end(), r) != slow_nbrs.end();
    double waited = nbr ? extra : 0;
    rd.mpi.push_back({c_irecv, 4, 1e-4, 4096});
    rd.mpi.push_back({c_isend, 4, 1e-4, 4096});
    rd.mpi.push_back({c_waitall, 1, 1e-3 + waited, 0});
    double coll_wait = (r == slow || nbr) ? 0.0 : extra;
    rd.mpi.push_back({c_allreduce, 1, 1e-3 + coll_wait, 8});
    for (int q : neighbours(r)) {
      rd.deps.push_back({c_irecv, DepKind::Recv, q, 0, 0, 1, 1024, 0});
      rd.deps.push_back({c_isend, DepKind::Send, q, 0, 0, 1, 1024, 0});
      rd.deps.push_back({c_waitall, DepKind::Send, q, 0, 0, 1, 1024, 0});
      rd.deps.push_back({c_waitall, DepKind::Recv, q, 0, 0, 1, 1024, q == slow ? extra : 0});
    }
    rd.deps.push_back({c_allreduce, DepKind::Coll, -1, 0, 0, 1, 8, coll_wait});
  }
  return p;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

long StatusKb(const char *field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field, 0) == 0)
      return std::atol(line.c_str() + std::strlen(field) + 1);
  return -1;
}

void RunSize(int n) {
  Program prog = MakeProgram();
  Psg psg = Psg::Build(prog.fns);
  double t0 = Now();
  std::vector<Profile> profiles{MakeProfile(prog, std::max(4, n / 4)), MakeProfile(prog, n)};
  double t_gen = Now() - t0;
  size_t heap_before = mallinfo2().uordblks;
  t0 = Now();
  std::vector<Run> runs;
  for (size_t i = 0; i < profiles.size(); ++i)
    runs.push_back(BuildRun(psg, profiles[i], "np" + std::to_string(profiles[i].meta.world_size)));
  double t_ppg = Now() - t0;
  t0 = Now();
  DetectOptions o;
  o.scaling = ScalingMode::Weak;
  DetectResult res = Detect(psg, runs, o);
  double t_detect = Now() - t0;
  long hwm = StatusKb("VmHWM:");
  // The PPGs are still alive here: the heap in use grew by what they hold.
  // (The peak is dominated by the generated input profiles, and RSS does not
  // show the PPGs because they reuse heap freed while generating.)
  size_t heap_after = mallinfo2().uordblks;
  size_t series = runs.back().series.size();
  bool found = !res.root_causes.empty() && res.root_causes[0].culprit_rank == n / kSlowRankDivisor;
  std::printf("%8d  %8zu  %9zu  %8.3f  %8.3f  %8.3f  %9.1f  %9.1f  %s\n", n, psg.vertices().size(),
              series, t_gen, t_ppg, t_detect, hwm / 1024.0,
              (double(heap_after) - double(heap_before)) / 1048576.0, found ? "rank ok" : "MISSED");
  std::fflush(stdout);
}

void TimeRead(const std::string &tmpdir) {
  Program prog = MakeProgram();
  Profile p = MakeProfile(prog, 1024);
  std::string file = tmpdir + "/profile.json.gz";
  double t0 = Now();
  WriteProfileFile(p, file);
  double t_write = Now() - t0;
  t0 = Now();
  Profile q = ReadProfileFile(file);
  double t_read = Now() - t0;
  std::ifstream f(file, std::ios::binary | std::ios::ate);
  std::printf("profile at 1,024 ranks: %.1f KB on disk (%.2f KB/rank), write %.3f s, read %.3f s\n",
              f.tellg() / 1024.0, f.tellg() / 1024.0 / 1024, t_write, t_read);
  std::remove(file.c_str());
}

} // namespace

int main(int argc, char **argv) {
  int max_ranks = argc > 1 ? std::atoi(argv[1]) : 131072;
  std::printf("synthetic PSG: %d kernels x %d vertices + main; runs at N/4 and N ranks\n", kKernels,
              4 * kBlocks + 1);
  std::printf("%8s  %8s  %9s  %8s  %8s  %8s  %9s  %9s  %s\n", "ranks", "psg_vtx", "data_vtx",
              "gen_s", "ppg_s", "detect_s", "peak_MB", "ppg_MB", "result");
  for (int n : {128, 1024, 16384, 131072}) {
    if (n > max_ranks)
      break;
    std::fflush(stdout); // or the child prints the parent's buffer again
    pid_t pid = fork();  // a child per size: its peak memory is its own
    if (pid == 0) {
      try {
        RunSize(n);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-detect: %s\n", e.what());
        _exit(1);
      }
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      std::printf("%8d  failed (status %d)\n", n, status);
  }
  char tmpl[] = "/tmp/scalana-bench-detect-XXXXXX";
  if (mkdtemp(tmpl)) {
    try {
      TimeRead(tmpl);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "bench-detect: %s\n", e.what());
    }
    rmdir(tmpl);
  }
  return 0;
}
