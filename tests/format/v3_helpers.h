// What the format-3 tests share beside the reader tests' helpers
// (reader_helpers.h: a temporary directory, EXPECT_HAS): profiles shaped
// like real runs (threads, modules, OpenMP rows, message ranges, ranks that
// ended early), a comparison that ignores how tables are numbered, and the
// message a reader gives.
#pragma once

#include "../robustness/reader_helpers.h"
#include "group_split.h"
#include "scalana/profile.h"
#include "scalana/profile_v3.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace scalana::test {

inline std::string ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A run of NRANKS ranks with everything format 2 carries: two shared
// objects (frames of both), threads with OpenMP rows, dependence rows with
// message ranges and relative and absolute peers, operations, errors,
// counters, and (ENDED) some ranks that ended early.
inline Profile RichProfile(int nranks, bool ended = false) {
  Profile p;
  p.meta.world_size = nranks;
  p.meta.binary = "/abs/app";
  p.meta.build_id = "b1d";
  p.meta.psg_id = "0x00000000000000aa";
  p.meta.modules = {{"/abs/libone.so", "11", "0x1"},
                    {"/abs/libtwo.so", "22", "0x2"},
                    {"/abs/libunused.so", "33", "0x3"}};
  p.meta.args = {"./app", "10"};
  p.meta.mpi_library = "Open MPI v4.1";
  p.meta.start_time = "2026-12-01T00:00:00Z";
  p.meta.run_id = "run-1";
  p.meta.wall_time = 12.5;
  p.meta.sampling.source = "cpu-timer";
  p.meta.sampling.hz = 200;
  p.meta.sampling.counters = {"PAPI_TOT_INS", "PAPI_TOT_CYC"};
  p.meta.config = {{"SCALANA_HZ", "200"}};
  p.meta.complete = !ended;
  for (uint64_t k = 0; k < 40; ++k) {
    Context c = {0x1a40, 0x1c3b + 16 * k};
    if (k % 3 == 1)
      c.push_back(WithFrameModule(0x400 + k, 1));
    if (k % 7 == 2)
      c.push_back(WithFrameModule(0x900 + k, 2) | kFrameExact);
    if (k == 39)
      c = {kFramesTruncated, 0x77};
    if (k == 38)
      c = {};
    p.contexts.push_back(c);
  }
  std::vector<int> world, evens;
  for (int r = 0; r < nranks; ++r) {
    world.push_back(r);
    if (r % 2 == 0)
      evens.push_back(r);
  }
  p.comms = {world, evens, {3, 1, 2}};
  for (int r = 0; r < nranks; ++r) {
    RankData d;
    d.rank = r;
    d.host = "n" + std::to_string(r / 4);
    d.pid = 1000 + r * 3;
    d.threads = r % 3 == 0 ? 4 : 1;
    d.wall_time = 12.0 + r * 1e-7 + 0.123456789123;
    d.cpu_time = 10.5 + r * 0.001;
    d.sampling_blocked = r % 2 ? 0.25 : 0;
    if (r % 3 != 1) { // some ranks without the kernel's account
      d.on_cpu = 9.75 + r * 1e-3;
      d.run_delay = 1.5 + r * 1e-9;
      d.cores = 2 + r % 2;
    }
    d.samples = 600 + uint64_t(r);
    d.samples_dropped = uint64_t(r % 2);
    d.errors = {{"stack_truncated", uint64_t(r % 4)}, {"sample_dropped", 0}};
    for (uint32_t k = 0; k < 30; ++k) {
      VertexRow v{(k + uint32_t(r)) % 40, 3 + k, 0.015 + k * 1e-4 + r * 1e-9, {}};
      if (k % 4 == 0)
        v.counters = {1234567.0 + k, k == 8 ? 0.5 : 99.0};
      d.vertices.push_back(v);
    }
    d.mpi.push_back({1, 100, 0.5 + r * 1e-6, 4096, "MPI_Allreduce"});
    d.mpi.push_back({2, 7, 0.01, 0, ""});
    d.deps.push_back({1, DepKind::Coll, -1, 0, 0, 100, 4096, 0.125, {}});
    d.deps.push_back({3, DepKind::Send, (r + 1) % nranks, 7, 0, 50, 800, 0.001, {{1, 50}}});
    d.deps.push_back(
        {4, DepKind::Recv, (r + nranks - 1) % nranks, 7, 0, 50, 800, 0.002, {{1, 20}, {23, 50}}});
    d.deps.push_back({5, DepKind::Recv, -7, -3, 2, 1, 8, 0, {}});
    d.deps.push_back({6, DepKind::Rma, 0, 0, 1, 2, 16, 0.0005, {}});
    if (d.threads > 1) {
      d.thread_info = {{0, 0, 900, 4.5, 0.5, 12.0}, {1, 1, 800, 4.0, 0.75, 11.5}, {5, -1, 3, 0.02}};
      d.thread_vertices = {{7, 0, 10, 0.05}, {7, 1, 12, 0.06}, {8, 5, 1, 0.005}};
      d.omp = {{9, 1, "barrier", 40, 0.2, 5, 0.025, 0}, {9, 0, "loop", 40, 1.5, 0, 0, 4000}};
      d.off_cpu = {{10, 0, 50, 0.4, 0.01}, {11, 1, 3, 0.02, 0.005}, {38, 5, 0, 0.001, 0}};
    } else if (r % 3 == 2) {
      d.off_cpu = {{10, 0, 20, 0.3 + r * 1e-9, 0.002}}; // a rank of one thread: thread 0's
    }
    if (ended && r % 5 == 3) {
      d.snapshot = true;
      d.end_signal = 9;
      d.errors["ended_by_signal_fatal"] = 1;
    }
    p.ranks.push_back(std::move(d));
  }
  return p;
}

// P with its tables numbered as each rank first uses them: two profiles of
// the same data, however merged, give the same text.
inline std::string Canonical(const Profile &p) {
  std::string out;
  Profile meta_only;
  meta_only.meta = p.meta;
  meta_only.meta.modules.clear();
  out += ProfileToJson(meta_only) + "\n";
  for (size_t i = 0; i < p.ranks.size(); ++i) {
    Profile one = detail::GroupOf(p, i, i + 1);
    one.meta = ProfileMeta{};
    one.meta.modules = detail::GroupOf(p, i, i + 1).meta.modules;
    out += ProfileToJson(one) + "\n";
  }
  return out;
}

inline std::string ErrorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace scalana::test
