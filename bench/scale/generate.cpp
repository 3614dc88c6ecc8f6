#include "generate.h"

#include "frames.h"
#include "psg/psg.h"
#include "report/report_common.h"
#include "scalana/container_format.h"
#include "scalana/profile_v3.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace scalana::bench {

Template ReadTemplate(const std::string &run_dir, const std::string &binary) {
  Template t;
  Profile p = ReadProfile(run_dir);
  if (p.ranks.empty())
    throw Error(run_dir + ": the template profile has no ranks");
  Psg psg = Psg::LoadFromObjects(binary, {}, PsgOptions{});
  FrameResolver frames(psg, binary);
  std::map<uint32_t, std::string> op_of;
  for (const RankData &r : p.ranks)
    for (const MpiRow &m : r.mpi)
      op_of[m.ctx] = m.op;
  auto function_of = [&](uint32_t ctx, VertexKind *kind) {
    auto it = op_of.find(ctx);
    size_t cut = 0;
    VertexId v = psg.ResolveNearest(
        frames.ToPsgContext(p.contexts[ctx], it == op_of.end() ? "" : it->second), &cut);
    if (v == kNoVertex)
      return std::string();
    *kind = psg.vertex(v).kind;
    return report_common::FunctionName(psg, v);
  };
  // Loops of the three kernels: CPU seconds averaged over the ranks that had them.
  std::map<uint32_t, std::pair<double, int>> loops;
  std::set<uint32_t> boundary;
  bool have_source = false;
  for (const RankData &r : p.ranks)
    for (const VertexRow &row : r.vertices) {
      VertexKind kind = VertexKind::Comp;
      std::string fn = function_of(row.ctx, &kind);
      if (kind != VertexKind::Loop)
        continue;
      if (fn == "Boundary") {
        boundary.insert(row.ctx);
      } else if (fn == "Relax" || fn == "Source") {
        loops[row.ctx].first += row.cpu_seconds;
        loops[row.ctx].second += 1;
        if (fn == "Source")
          t.source = row.ctx, have_source = true;
      }
    }
  for (const auto &[ctx, sum] : loops) {
    t.compute.push_back(ctx);
    t.compute_cpu.push_back(sum.first / sum.second);
  }
  t.boundary.assign(boundary.begin(), boundary.end());
  const RankData &r0 = p.ranks[0];
  int found = 0;
  for (const MpiRow &m : r0.mpi) {
    if (m.op == "MPI_Irecv")
      t.irecv = m.ctx, found |= 1, t.iterations = int(m.calls / 26);
    else if (m.op == "MPI_Isend")
      t.isend = m.ctx, found |= 2;
    else if (m.op == "MPI_Waitall")
      t.waitall = m.ctx, found |= 4;
    else if (m.op != "MPI_Allreduce")
      t.other_mpi.push_back(m);
  }
  for (const DepRow &d : r0.deps)
    if (d.kind == DepKind::Coll && d.comm < p.comms.size()) {
      bool world = int(p.comms[d.comm].size()) == p.meta.world_size;
      (world ? t.world_allreduce : t.plane_allreduce) = d.ctx;
      found |= world ? 8 : 16;
    }
  if (found != 31 || !have_source || t.boundary.empty() || t.iterations < 1)
    throw Error(run_dir + ": not a profile of halo3d with samples in Source and Boundary "
                          "(profile it at 8 ranks)");
  t.profile.meta = p.meta;
  t.profile.contexts = std::move(p.contexts);
  return t;
}

Layout MakeLayout(int ranks) {
  int d[3] = {1, 1, 1}, n = ranks;
  std::vector<int> primes;
  for (int f = 2; n > 1; ++f)
    while (n % f == 0)
      primes.push_back(f), n /= f;
  std::sort(primes.rbegin(), primes.rend());
  for (int f : primes)
    *std::min_element(d, d + 3) *= f;
  std::sort(d, d + 3);
  Layout l;
  l.nx = d[0], l.ny = d[1], l.nz = d[2];
  auto at = [&](int x, int y, int z) { return x + l.nx * (y + l.ny * z); };
  std::set<int> c{at(l.nx / 2, l.ny / 2, l.nz / 3), at((l.nx / 2 + 1) % l.nx, l.ny / 2, l.nz / 3),
                  at(l.nx / 4, l.ny / 4, 2 * l.nz / 3)};
  l.culprits.assign(c.begin(), c.end());
  return l;
}

namespace {

// A fixed pseudo-random number per (rank, what): the variety between ranks.
uint32_t Mix(uint32_t r, uint32_t what) {
  uint32_t h = r * 2654435761u ^ (what + 0x9e3779b9u) * 40503u;
  h ^= h >> 15;
  return h * 2246822519u;
}

struct RankMaker {
  const Template &t;
  const Layout &l;
  int ranks;
  double extra = 0; // the culprits' added seconds in Source
  std::set<int> culprits;

  int At(int x, int y, int z) const { return x + l.nx * (y + l.ny * z); }

  // Up to 26 neighbours in (dz, dy, dx) order, the direction's index with it.
  std::vector<std::pair<int, int>> Neighbours(int r) const {
    int x = r % l.nx, y = (r / l.nx) % l.ny, z = r / (l.nx * l.ny);
    std::vector<std::pair<int, int>> out;
    int k = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (!dx && !dy && !dz)
            continue;
          int zz = z + dz;
          if (zz >= 0 && zz < l.nz)
            out.push_back({At((x + dx + l.nx) % l.nx, (y + dy + l.ny) % l.ny, zz), k});
          ++k;
        }
    return out;
  }

  RankData Make(int r, uint32_t plane_comm) const {
    RankData rd;
    rd.rank = r;
    rd.host = "node" + std::to_string(r / 64);
    rd.pid = 1000 + r % 64;
    const int x = r % l.nx, z = r / (l.nx * l.ny);
    const bool culprit = culprits.count(r) > 0;
    const double jitter = 1 + 0.02 * double(Mix(r, 0) % 8) / 7;
    const double hz = t.profile.meta.sampling.hz > 0 ? t.profile.meta.sampling.hz : 250;
    double cpu = 0, biggest = *std::max_element(t.compute_cpu.begin(), t.compute_cpu.end());
    auto vertex = [&](uint32_t ctx, double secs) {
      rd.vertices.push_back({ctx, uint64_t(secs * hz + 0.5), secs, {}});
      cpu += secs;
    };
    for (size_t i = 0; i < t.compute.size(); ++i) {
      // Small loops get samples on some ranks only: vertex sets differ.
      if (t.compute_cpu[i] < 0.05 * biggest && Mix(r, uint32_t(i) + 1) % 3 == 0)
        continue;
      double secs = t.compute_cpu[i] * jitter;
      if (culprit && t.compute[i] == t.source)
        secs += extra;
      vertex(t.compute[i], secs);
    }
    if (x == 0)
      for (uint32_t ctx : t.boundary)
        vertex(ctx, 0.01 * jitter);
    const auto nbrs = Neighbours(r);
    bool next_to_culprit = false;
    for (auto [q, k] : nbrs)
      next_to_culprit |= culprits.count(q) > 0;
    std::set<int> culprit_planes;
    for (int c : culprits)
      culprit_planes.insert(c / (l.nx * l.ny));
    const bool waits = !culprit && !next_to_culprit;
    const double plane_wait = waits && culprit_planes.count(z) ? extra : 0;
    const double world_wait = waits && !culprit_planes.count(z) ? extra : 0;
    const uint64_t it = uint64_t(t.iterations), face = 8192;
    for (MpiRow m : t.other_mpi) {
      m.seconds *= jitter;
      rd.mpi.push_back(m);
    }
    rd.mpi.push_back(
        {t.irecv, it * nbrs.size(), 1e-4 * nbrs.size(), it * nbrs.size() * face, "MPI_Irecv"});
    rd.mpi.push_back(
        {t.isend, it * nbrs.size(), 1e-4 * nbrs.size(), it * nbrs.size() * face, "MPI_Isend"});
    rd.mpi.push_back(
        {t.waitall, it, 0.01 * jitter + (next_to_culprit ? extra : 0), 0, "MPI_Waitall"});
    rd.mpi.push_back({t.plane_allreduce, it, 0.005 * jitter + plane_wait, 8 * it, "MPI_Allreduce"});
    rd.mpi.push_back(
        {t.world_allreduce, it / 10, 0.002 * jitter + world_wait, 8 * (it / 10), "MPI_Allreduce"});
    const std::vector<SeqRange> seqs{{1, it}};
    for (auto [q, k] : nbrs)
      rd.deps.push_back({t.irecv, DepKind::Recv, q, 25 - k, 0, it, it * face, 0, seqs});
    for (auto [q, k] : nbrs)
      rd.deps.push_back({t.isend, DepKind::Send, q, k, 0, it, it * face, 0, seqs});
    for (auto [q, k] : nbrs)
      rd.deps.push_back({t.waitall, DepKind::Send, q, k, 0, it, it * face, 0, seqs});
    for (auto [q, k] : nbrs)
      rd.deps.push_back({t.waitall, DepKind::Recv, q, 25 - k, 0, it, it * face,
                         culprits.count(q) ? extra : 0, seqs});
    rd.deps.push_back(
        {t.plane_allreduce, DepKind::Coll, -1, 0, plane_comm, it, 8 * it, plane_wait, {}});
    rd.deps.push_back(
        {t.world_allreduce, DepKind::Coll, -1, 0, 0, it / 10, 8 * (it / 10), world_wait, {}});
    for (const MpiRow &m : rd.mpi)
      cpu += m.seconds;
    rd.cpu_time = cpu;
    rd.samples = uint64_t(cpu * hz);
    rd.wall_time = cpu + 0.5;
    return rd;
  }
};

void WriteAll(FILE *f, const std::string &bytes, const std::string &path) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
    throw Error(path + ": cannot write: " + std::strerror(errno));
}

} // namespace

uint64_t WriteRun(const Template &t, const Layout &l, int ranks, const std::string &run_dir,
                  uint32_t group) {
  RankMaker maker{t, l, ranks, 0, {l.culprits.begin(), l.culprits.end()}};
  double sum = 0;
  for (double c : t.compute_cpu)
    sum += c;
  maker.extra = sum; // the culprits take twice as long as the others
  const std::string path = run_dir + "/" + container::kFileName;
  const std::string tmp = path + container::kPartialSuffix;
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error(tmp + ": cannot write: " + std::strerror(errno));
  ProfileMeta meta = t.profile.meta;
  meta.world_size = ranks;
  meta.run_id = "bench-scale-" + std::to_string(ranks);
  container::Header h;
  h.world_size = uint64_t(ranks);
  std::string meta_bytes = EncodeMetaSection(meta);
  h.meta_offset = container::kHeaderBytes;
  h.meta_length = meta_bytes.size();
  WriteAll(f, std::string(container::kHeaderBytes, '\0'), tmp); // the header comes last
  WriteAll(f, meta_bytes, tmp);
  uint64_t offset = container::kHeaderBytes + meta_bytes.size();
  std::string index;
  // The world communicator is moved into each group and back: one copy.
  CommMembers world;
  world.AppendRun(0, 1, uint32_t(ranks));
  const int plane = l.nx * l.ny;
  for (int first = 0; first < ranks; first += int(group)) {
    const int last = std::min(ranks, first + int(group)) - 1;
    Profile g;
    g.meta = meta;
    g.contexts = t.profile.contexts;
    g.comms.push_back(world);
    const int z0 = first / plane, z1 = last / plane;
    for (int z = z0; z <= z1; ++z) {
      g.comms.emplace_back();
      g.comms.back().AppendRun(z * plane, 1, uint32_t(plane));
    }
    for (int r = first; r <= last; ++r)
      g.ranks.push_back(maker.Make(r, uint32_t(1 + r / plane - z0)));
    std::string block = EncodeGroupBlock(g, container::Codec::Columns);
    container::GroupEntry e;
    e.first_rank = uint64_t(first);
    e.rank_count = uint32_t(last - first + 1);
    e.codec = container::Codec::Columns;
    e.offset = offset;
    e.length = block.size();
    e.crc32 = container::Crc32(block.data(), block.size());
    index += container::EncodeGroupEntry(e);
    WriteAll(f, block, tmp);
    offset += block.size();
    ++h.group_count;
  }
  h.index_offset = offset;
  WriteAll(f, index, tmp);
  offset += index.size();
  if (std::fseek(f, 0, SEEK_SET) != 0)
    throw Error(tmp + ": cannot seek: " + std::strerror(errno));
  WriteAll(f, container::EncodeHeader(h), tmp);
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(path + ": cannot write: " + std::strerror(errno));
  return offset;
}

} // namespace scalana::bench
