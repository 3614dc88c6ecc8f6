/* Collectives on sub-communicators made by MPI_Comm_split: the ranks form
 * two interleaved halves (even and odd ranks) and neighbouring pairs. Every
 * iteration each rank updates a small block, sums a vector over its half
 * with MPI_Allreduce, updates again, and takes its pair leader's vector with
 * MPI_Bcast; every fifth iteration a scalar is summed over MPI_COMM_WORLD
 * (weak scaling: the block per rank is fixed).
 *
 * --inject: rank 1 runs an extra loop before the half's MPI_Allreduce; the
 * other odd ranks wait there, the even ranks in the world MPI_Allreduce (rank
 * 0 leads the pair's MPI_Bcast, so it does not wait for rank 1 there). */
#include "common.h"

#include <math.h>

enum { kBlock = 2048, kVec = 64, kPasses = 768 };

static int my_rank, num_ranks;

static double Update(double *a, const double *v, int passes) {
  double s = 0.0;
  for (int p = 0; p < passes; ++p) {
    for (int i = 0; i < kBlock; ++i) {
      a[i] = 0.75 * a[i] + 0.25 * v[i % kVec] / (1.0 + a[i] * a[i]);
      s += a[i];
    }
  }
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "subcomm", 60);
  int culprit = Culprit(&opt, 1, num_ranks);

  MPI_Comm half, pair;
  MPI_Comm_split(MPI_COMM_WORLD, my_rank % 2, my_rank, &half);
  MPI_Comm_split(MPI_COMM_WORLD, my_rank / 2, my_rank, &pair);

  double a[kBlock], v[kVec], vsum[kVec];
  for (int i = 0; i < kBlock; ++i)
    a[i] = 0.01 * ((i + my_rank) % 13);
  for (int i = 0; i < kVec; ++i)
    v[i] = 1.0 + 0.001 * i;
  /* About two thirds of the regular work. */
  long extra = (opt.inject && my_rank == culprit) ? (long)kPasses * kBlock : 0;
  double s = 0.0, world = 0.0, slack = 0.0, t_work = 0.0, t_extra = 0.0;

  for (long it = 0; it < opt.iters; ++it) {
    double t0 = CpuSeconds();
    s += Update(a, v, kPasses);
    double t1 = CpuSeconds();
    for (long d = 0; d < extra; ++d) // ROOT CAUSE: rank 1's extra loop before the half's allreduce
      slack = slack * 0.999999 + a[d & (kBlock - 1)];
    double t2 = CpuSeconds();
    for (int i = 0; i < kVec; ++i)
      v[i] = a[i * (kBlock / kVec)];
    MPI_Allreduce(v, vsum, kVec, MPI_DOUBLE, MPI_SUM, half);
    double t3 = CpuSeconds();
    for (int i = 0; i < kVec; ++i)
      v[i] = vsum[i] / (1.0 + fabs(vsum[i]));
    s += Update(a, v, kPasses);
    double t4 = CpuSeconds();
    MPI_Bcast(v, kVec, MPI_DOUBLE, 0, pair);
    t_work += (t1 - t0) + (t4 - t3);
    t_extra += t2 - t1;
    if (it % 5 == 4)
      MPI_Allreduce(&s, &world, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  Report("subcomm", &opt, culprit, t_work, t_extra, world + slack * 1e-9);
  MPI_Comm_free(&half);
  MPI_Comm_free(&pair);
  MPI_Finalize();
  return 0;
}
