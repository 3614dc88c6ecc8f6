/* Passive-target one-sided communication: every rank allocates a window
 * (MPI_Win_allocate) with an inbox and a published value. Each iteration a
 * rank updates its block, publishes a summary in its own window, MPI_Puts
 * its boundary value into its right neighbour's inbox under MPI_Win_lock/
 * MPI_Win_unlock, meets everyone in MPI_Barrier, then MPI_Gets the value its
 * left neighbour published under a shared lock; every tenth iteration an
 * MPI_Allreduce sums the results. Weak scaling: a fixed block per rank.
 *
 * --inject: rank 1 runs an extra loop before its MPI_Put; the others wait for
 * it in MPI_Barrier. */
#include "common.h"

enum { kBlock = 4096, kPasses = 1600 };
/* Window layout, in doubles: the inbox and the published value, each twice,
 * for even and odd iterations: a neighbour one iteration ahead writes or
 * reads the other copy, never the one still in use. */
enum { kInbox = 0, kPublished = 2, kWinSize = 4 };

static int my_rank, num_ranks;

static double Update(double *a, double inflow, int passes) {
  double s = 0.0;
  for (int p = 0; p < passes; ++p) {
    double prev = inflow;
    for (int i = 0; i < kBlock; ++i) {
      double v = 0.6 * a[i] + 0.4 * prev - 1e-3 * a[i] * a[i];
      prev = a[i];
      a[i] = v;
      s += v;
    }
  }
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "rma_lock", 60);
  int culprit = Culprit(&opt, 1, num_ranks);
  int left = (my_rank + num_ranks - 1) % num_ranks, right = (my_rank + 1) % num_ranks;

  double *win_buf;
  MPI_Win win;
  MPI_Win_allocate(kWinSize * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win_buf, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, my_rank, 0, win);
  for (int k = 0; k < kWinSize; ++k)
    win_buf[k] = 0.0;
  MPI_Win_unlock(my_rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  double *a = malloc(kBlock * sizeof(double));
  for (int i = 0; i < kBlock; ++i)
    a[i] = 0.01 * ((5 * i + my_rank) % 23);
  /* About two thirds of the regular work. */
  long extra = (opt.inject && my_rank == culprit) ? (long)kPasses * kBlock / 4 : 0;
  double inflow = 0.0, fetched = 0.0, acc = 0.0, total = 0.0, noise = 0.0;
  double t_work = 0.0, t_extra = 0.0;

  for (long it = 0; it < opt.iters; ++it) {
    double t0 = CpuSeconds();
    double s = Update(a, inflow, kPasses);
    double t1 = CpuSeconds();
    for (long d = 0; d < extra; ++d) // ROOT CAUSE: rank 1's extra loop before its put
      noise = noise * 0.999999 + a[d & (kBlock - 1)];
    double t2 = CpuSeconds();
    t_work += t1 - t0;
    t_extra += t2 - t1;

    int parity = (int)(it % 2), slot = kPublished + parity;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, my_rank, 0, win);
    win_buf[slot] = s;
    MPI_Win_unlock(my_rank, win);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(&a[kBlock - 1], 1, MPI_DOUBLE, right, kInbox + parity, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(right, win);
    /* Every put and publish of this iteration is complete after the barrier. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(&fetched, 1, MPI_DOUBLE, left, slot, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(left, win);
    MPI_Win_lock(MPI_LOCK_SHARED, my_rank, 0, win);
    inflow = win_buf[kInbox + parity];
    MPI_Win_unlock(my_rank, win);
    acc += fetched * 1e-6;
    if (it % 10 == 9)
      MPI_Allreduce(&acc, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  Report("rma_lock", &opt, culprit, t_work, t_extra, total + noise * 1e-9);
  MPI_Win_free(&win);
  free(a);
  MPI_Finalize();
  return 0;
}
