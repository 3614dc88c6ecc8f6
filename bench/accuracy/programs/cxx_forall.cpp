// RAJA-style C++: every loop is `forall<Policy>(range, lambda)` over a
// template executor, reductions are `forall_sum`, and the time step is a
// lambda that calls kernel lambdas. Per step: a ring halo exchange
// (MPI_Irecv/MPI_Isend/MPI_Waitall), a 3-point stencil, an equation of
// state evaluated per cell as a polynomial series, an update, and an energy
// summed with MPI_Allreduce. Weak scaling: a fixed number of cells per rank.
//
// --inject: on the last rank the equation of state keeps more terms of its
// series, the loop over terms runs longer there; its ring neighbours wait in
// MPI_Waitall, everyone in MPI_Allreduce.
#include "common.h"

#include <utility>
#include <vector>

namespace port {

struct seq_exec {};

struct RangeSegment {
  int begin, end;
};

template <typename Policy>
struct Executor;

template <>
struct Executor<seq_exec> {
  template <typename Body>
  static void Run(RangeSegment r, Body &&body) {
    for (int i = r.begin; i < r.end; ++i)
      body(i);
  }
};

template <typename Policy, typename Body>
void forall(RangeSegment r, Body &&body) {
  Executor<Policy>::Run(r, std::forward<Body>(body));
}

template <typename Policy, typename Body>
double forall_sum(RangeSegment r, Body &&body) {
  double s = 0.0;
  Executor<Policy>::Run(r, [&](int i) { s += body(i); });
  return s;
}

} // namespace port

namespace {

using port::forall;
using port::forall_sum;
using port::RangeSegment;
using port::seq_exec;

constexpr int kCells = 4096;
constexpr int kSubsteps = 260;
constexpr int kTerms = 10;

int my_rank, num_ranks;

void ExchangeRing(std::vector<double> &q) {
  const int n = kCells, left = (my_rank + num_ranks - 1) % num_ranks,
            right = (my_rank + 1) % num_ranks;
  MPI_Request req[4];
  MPI_Irecv(&q[0], 1, MPI_DOUBLE, left, 31, MPI_COMM_WORLD, &req[0]);
  MPI_Irecv(&q[n + 1], 1, MPI_DOUBLE, right, 32, MPI_COMM_WORLD, &req[1]);
  MPI_Isend(&q[n], 1, MPI_DOUBLE, right, 31, MPI_COMM_WORLD, &req[2]);
  MPI_Isend(&q[1], 1, MPI_DOUBLE, left, 32, MPI_COMM_WORLD, &req[3]);
  MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "cxx_forall", 50);
  const int culprit = Culprit(&opt, num_ranks - 1, num_ranks);

  std::vector<double> rho(kCells + 2), flux(kCells + 2), pres(kCells + 2), coef(64);
  forall<seq_exec>(RangeSegment{0, kCells + 2},
                   [&](int i) { rho[i] = 1.0 + 0.01 * ((3 * i + my_rank) % 31); });
  forall<seq_exec>(RangeSegment{0, 64}, [&](int k) { coef[k] = 1.0 / (1.0 + k); });
  // Half as many terms again: the series dominates a cell's work, so the
  // culprit does about two thirds more work in all.
  const int terms = (opt.inject && my_rank == culprit) ? kTerms * 3 / 2 : kTerms;
  const RangeSegment interior{1, kCells + 1};
  double energy = 0.0, total = 0.0, t_work = 0.0, t_extra = 0.0;

  auto stencil = [&] {
    forall<seq_exec>(interior, [&](int i) { flux[i] = 0.5 * (rho[i - 1] + rho[i + 1]) - rho[i]; });
  };
  auto equation_of_state = [&] {
    forall<seq_exec>(interior, [&](int i) {
      const double x = 0.5 * rho[i];
      double p = 0.0;
      for (int k = 0; k < terms; ++k) // ROOT CAUSE: more series terms on the last rank
        p = p * x + coef[k];
      pres[i] = p;
    });
  };
  auto update = [&] {
    forall<seq_exec>(interior, [&](int i) { rho[i] += 0.1 * flux[i] - 1e-3 * (pres[i] - 1.0); });
  };
  auto step = [&] {
    ExchangeRing(rho);
    for (int s = 0; s < kSubsteps; ++s) {
      const double t0 = CpuSeconds();
      stencil();
      const double t1 = CpuSeconds();
      equation_of_state();
      const double t2 = CpuSeconds();
      update();
      const double t3 = CpuSeconds();
      // The regular terms' share of the equation of state counts as work.
      const double eos_regular = (t2 - t1) * kTerms / terms;
      t_work += (t1 - t0) + eos_regular + (t3 - t2);
      t_extra += (t2 - t1) - eos_regular;
    }
    return forall_sum<seq_exec>(interior, [&](int i) { return rho[i] * rho[i]; });
  };

  for (long it = 0; it < opt.iters; ++it) {
    energy = step();
    MPI_Allreduce(&energy, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  Report("cxx_forall", &opt, culprit, t_work, t_extra, total);
  MPI_Finalize();
  return 0;
}
