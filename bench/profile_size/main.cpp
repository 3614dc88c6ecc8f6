// Bytes per rank on disk, and encode/decode speed, of a 3-D halo program's
// profile in format 2 (one gzip JSON document) and format 3 (both codecs),
// docs/formats.md section 4. The profile is synthetic but shaped like a
// run: a 16x16x16 periodic grid of ranks, each with 26 neighbours, 30
// sampled contexts, its MPI rows, and times measured to the nanosecond
// (random low digits, as a CPU clock gives them, which no codec can shrink).
//
//   bench_profile_size [ranks (default 4096)] [work dir (default /tmp)]
#include "scalana/profile_v3.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

using namespace scalana;

namespace {

// SENDS: also the 26 send rows (53 dependence rows a rank in all), else the
// 26 receive rows only.
Profile Halo(int nranks, bool sends) {
  int side = int(std::lround(std::cbrt(double(nranks))));
  Profile p;
  p.meta.world_size = nranks;
  p.meta.binary = "/home/user/halo/halo3d";
  p.meta.build_id = "5f1c0e0b8d7a9c1e2f3a4b5c6d7e8f9012345678";
  p.meta.psg_id = "0x8000a1b2c3d4e5f6";
  p.meta.args = {"./halo3d", "256"};
  p.meta.mpi_library = "Open MPI v4.1.4";
  p.meta.run_id = "20261202T120000Z-4242-9f3c";
  p.meta.wall_time = 60;
  p.meta.sampling.source = "cpu-timer";
  p.meta.sampling.hz = 200;
  // 30 compute contexts, 4 MPI call sites: frames of main -> solve -> loop.
  for (uint64_t k = 0; k < 34; ++k)
    p.contexts.push_back({0x1a40, 0x2c3b, 0x3d00 + 0x40 * (k / 8), 0x5000 + 0x1c * k});
  std::vector<int> everyone(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r)
    everyone[size_t(r)] = r;
  p.comms = {everyone};
  std::mt19937_64 rng(42);
  auto ns = [&](double seconds) { // a measured time: nanosecond digits
    return std::floor(seconds * 1e9 + double(rng() % 1000000)) / 1e9;
  };
  for (int r = 0; r < nranks; ++r) {
    RankData d;
    d.rank = r;
    d.host = "node" + std::to_string(r / 64);
    d.pid = 10000 + r % 64;
    d.wall_time = ns(60);
    d.cpu_time = ns(58);
    uint64_t total = 0;
    for (uint32_t k = 0; k < 30; ++k) {
      uint64_t samples = 50 + (rng() % 300);
      total += samples;
      d.vertices.push_back({k, samples, ns(double(samples) / 200), {}});
    }
    d.samples = total;
    d.mpi = {{30, 20000, ns(1.5), 20000ull * 26 * 8192, "MPI_Isend"},
             {31, 20000, ns(0.4), 20000ull * 26 * 8192, "MPI_Irecv"},
             {32, 1000, ns(2.5), 0, "MPI_Waitall"},
             {33, 100, ns(0.3), 800, "MPI_Allreduce"}};
    int x = r % side, y = r / side % side, z = r / (side * side);
    int tag = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (!dx && !dy && !dz)
            continue;
          int peer = (x + dx + side) % side + side * ((y + dy + side) % side) +
                     side * side * ((z + dz + side) % side);
          uint64_t n = 1000;
          if (sends)
            d.deps.push_back({30, DepKind::Send, peer, tag, 0, n, n * 8192, 0, {{1, n}}});
          d.deps.push_back({31, DepKind::Recv, peer, tag, 0, n, n * 8192, ns(0.05), {{1, n}}});
          ++tag;
        }
    p.ranks.push_back(std::move(d));
  }
  return p;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

uint64_t FileSize(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

void Measure(const char *name, const Profile &p, const std::string &dir, int codec) {
  std::string path = dir + (codec ? "/profile.scalana" : "/profile.json.gz");
  auto t0 = std::chrono::steady_clock::now();
  if (codec)
    WriteProfileV3(path, p, 128, container::Codec(codec));
  else
    WriteProfileFile(p, path);
  double write = Seconds(t0);
  t0 = std::chrono::steady_clock::now();
  size_t ranks = 0;
  if (codec)
    ReadProfileGroups(path, [&](Profile &&part) { ranks += part.ranks.size(); });
  else
    ranks = ReadProfileFile(path).ranks.size();
  double read = Seconds(t0);
  uint64_t bytes = FileSize(path);
  double n = double(p.ranks.size());
  std::printf("  %-22s %8.0f bytes/rank  %9.1f MB  write %7.0f ranks/s  read %7.0f ranks/s%s\n",
              name, double(bytes) / n, double(bytes) / 1e6, n / write, n / read,
              ranks == p.ranks.size() ? "" : "  (ranks lost!)");
  std::remove(path.c_str());
}

} // namespace

int main(int argc, char **argv) {
  int nranks = argc > 1 ? std::atoi(argv[1]) : 4096;
  std::string dir = argc > 2 ? argv[2] : "/tmp";
  char tmpl[4096];
  std::snprintf(tmpl, sizeof tmpl, "%s/bench-profile-size-XXXXXX", dir.c_str());
  if (!mkdtemp(tmpl)) {
    std::perror("mkdtemp");
    return 1;
  }
  for (bool sends : {false, true}) {
    Profile p = Halo(nranks, sends);
    std::printf("3-D halo, %d ranks, 30 vertex rows and %zu dependence rows a rank, groups of "
                "128:\n",
                nranks, p.ranks[0].deps.size());
    Measure("format 2 (gzip JSON)", p, tmpl, 0);
    Measure("format 3, gzip JSON", p, tmpl, 1);
    Measure("format 3, columns", p, tmpl, 2);
  }
  rmdir(tmpl);
  return 0;
}
