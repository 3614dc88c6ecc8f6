// RAJA/Kokkos-style C++: kernels written as `forall<ExecPolicy>(range,
// lambda)` with the lambdas nested three deep (a time step lambda calls a
// kernel-group lambda, which calls forall with the kernel body lambda), as
// performance-portability layers produce. The kernels (daxpy, a 3-point and
// a 5-point stencil, a triad) are loops a compiler should vectorise once the
// templates and lambdas are inlined. One halo exchange of the 1-D field's
// ends and one allreduce per step; weak scaling.
//
// usage: forall [steps]
// Prints on rank 0 one line "native_speed wall=<s> cpu=<s> check=<value>":
// wall is the main phase's MPI_Wtime span (max over ranks), cpu the process
// CPU time of that phase summed over ranks, check a checksum that must not
// depend on how the program was built.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace port {

struct seq_exec {};
struct simd_exec {};

struct RangeSegment {
  long begin, end;
};

// The policy picks the loop; the body is any callable taking an index.
template <typename Policy>
struct Executor;

template <>
struct Executor<seq_exec> {
  template <typename Body>
  static void Run(RangeSegment r, Body &&body) {
    for (long i = r.begin; i < r.end; ++i) body(i);
  }
};

template <>
struct Executor<simd_exec> {
  template <typename Body>
  static void Run(RangeSegment r, Body &&body) {
#pragma clang loop vectorize(enable)
    for (long i = r.begin; i < r.end; ++i) body(i);
  }
};

template <typename Policy, typename Body>
void forall(RangeSegment r, Body &&body) {
  Executor<Policy>::Run(r, static_cast<Body &&>(body));
}

// Sum reduction in the style of RAJA::ReduceSum: sequential order, so the
// result does not depend on vectorisation.
template <typename Policy, typename Body>
double forall_sum(RangeSegment r, Body &&body) {
  double s = 0;
  forall<seq_exec>(r, [&](long i) { s += body(i); });
  return s;
}

}  // namespace port

namespace {

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

constexpr long kN = 1 << 17;  // local 1-D field, plus one halo cell each side
constexpr long kNx = 320, kNy = 320;  // local 2-D field

}  // namespace

int main(int argc, char **argv) {
  using port::RangeSegment;
  using port::simd_exec;
  MPI_Init(&argc, &argv);
  int steps = argc > 1 ? std::atoi(argv[1]) : 6000;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int left = (rank - 1 + size) % size, right = (rank + 1) % size;

  std::vector<double> xs(kN + 2), ys(kN + 2), zs(kN + 2), gs(kNx * kNy), hs(kNx * kNy);
  double *x = xs.data(), *y = ys.data(), *z = zs.data(), *g = gs.data(), *h = hs.data();
  port::forall<port::seq_exec>(RangeSegment{0, kN + 2}, [=](long i) {
    x[i] = ((i * 7 + rank) % 11) / 11.0;
    y[i] = ((i * 5 + rank) % 13) / 13.0;
    z[i] = 0;
  });
  port::forall<port::seq_exec>(RangeSegment{0, kNx * kNy},
                               [=](long i) { g[i] = h[i] = ((i * 3 + rank) % 17) / 17.0; });

  double check = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), c0 = CpuNow();
  // Level 1: one time step.
  auto step = [&](int s) {
    const double a = 1e-3 * (s % 5 + 1);
    // Level 2: the 1-D kernel group.
    auto kernels_1d = [&]() {
      MPI_Sendrecv(&y[1], 1, MPI_DOUBLE, left, 0, &y[kN + 1], 1, MPI_DOUBLE, right, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(&y[kN], 1, MPI_DOUBLE, right, 1, &y[0], 1, MPI_DOUBLE, left, 1,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      // Level 3: the kernel bodies.
      port::forall<simd_exec>(RangeSegment{1, kN + 1}, [=](long i) { y[i] += a * x[i]; });  // daxpy
      port::forall<simd_exec>(RangeSegment{1, kN + 1},
                              [=](long i) { z[i] = 0.25 * y[i - 1] + 0.5 * y[i] + 0.25 * y[i + 1]; });
      port::forall<simd_exec>(RangeSegment{1, kN + 1},
                              [=](long i) { y[i] = z[i] + a * (x[i] - z[i]); });  // triad
    };
    // Level 2: the 2-D kernel group.
    auto kernels_2d = [&]() {
      // RAJA-style nested policy: sequential rows, vectorised columns.
      port::forall<port::seq_exec>(RangeSegment{1, kNx - 1}, [=](long i) {
        port::forall<simd_exec>(RangeSegment{1, kNy - 1}, [=](long j) {
          long c = i * kNy + j;
          h[c] = 0.2 * (g[c] + g[c - 1] + g[c + 1] + g[c - kNy] + g[c + kNy]);
        });
      });
      port::forall<simd_exec>(RangeSegment{0, kNx * kNy}, [=](long i) { g[i] = h[i] + a; });
    };
    kernels_1d();
    kernels_2d();
    double local = port::forall_sum<port::seq_exec>(RangeSegment{1, kN + 1},
                                                     [=](long i) { return y[i] * y[i]; });
    double global;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check += global;
  };
  for (int s = 0; s < steps; ++s) step(s);
  double wall = MPI_Wtime() - t0, cpu = CpuNow() - c0, wall_max, cpu_sum;
  MPI_Reduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("native_speed wall=%.6f cpu=%.6f check=%.12e\n", wall_max, cpu_sum, check + g[kNy + 1]);
  MPI_Finalize();
  return 0;
}
