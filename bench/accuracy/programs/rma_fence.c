/* One-sided halo exchange in fence epochs: every rank exposes a small window
 * (MPI_Win_create) holding two halo slots and a published residual. Each
 * iteration relaxes the rank's ring segment, opens an epoch with
 * MPI_Win_fence, MPI_Puts its end values into its neighbours' halo slots and
 * MPI_Gets the residual its right neighbour published, and closes the epoch
 * with MPI_Win_fence; every tenth iteration the residuals are summed with
 * MPI_Allreduce. Weak scaling: a fixed segment per rank.
 *
 * --inject: the last rank runs an extra loop before the opening fence; the
 * others wait for it in MPI_Win_fence. */
#include "common.h"

enum { kPoints = 4096, kSweeps = 380 };
/* Window layout, in doubles. */
enum { kLeftHalo = 0, kRightHalo = 1, kResidual = 2, kWinSize = 3 };

static int my_rank, num_ranks;

static double Relax(double *u, int sweeps) {
  double res = 0.0;
  for (int s = 0; s < sweeps; ++s) {
    for (int i = 1; i <= kPoints; ++i) {
      double v = 0.5 * (u[i - 1] + u[i + 1]) + 1e-3 / (1.0 + u[i] * u[i]);
      res += (v - u[i]) * (v - u[i]);
      u[i] = v;
    }
  }
  return res;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "rma_fence", 60);
  int culprit = Culprit(&opt, num_ranks - 1, num_ranks);
  int left = (my_rank + num_ranks - 1) % num_ranks, right = (my_rank + 1) % num_ranks;

  double *win_buf, *u = calloc(kPoints + 2, sizeof(double));
  MPI_Alloc_mem(kWinSize * sizeof(double), MPI_INFO_NULL, &win_buf);
  for (int k = 0; k < kWinSize; ++k)
    win_buf[k] = 0.0;
  MPI_Win win;
  MPI_Win_create(win_buf, kWinSize * sizeof(double), sizeof(double), MPI_INFO_NULL,
                 MPI_COMM_WORLD, &win);
  for (int i = 0; i < kPoints + 2; ++i)
    u[i] = 0.01 * ((3 * i + my_rank) % 19);
  /* About two thirds of the regular work. */
  long extra = (opt.inject && my_rank == culprit) ? (long)kSweeps * kPoints : 0;
  double res = 0.0, neighbour_res = 0.0, sum_res = 0.0, total = 0.0, tail = 0.0;
  double t_work = 0.0, t_extra = 0.0;

  MPI_Win_fence(0, win);
  for (long it = 0; it < opt.iters; ++it) {
    double t0 = CpuSeconds();
    res = Relax(u, kSweeps);
    double t1 = CpuSeconds();
    for (long d = 0; d < extra; ++d) // ROOT CAUSE: the last rank's extra loop before the fence
      tail = tail * 0.999999 + u[1 + (d & (kPoints - 1))];
    double t2 = CpuSeconds();
    t_work += t1 - t0;
    t_extra += t2 - t1;
    /* The window is only touched between fences, never inside an epoch. */
    win_buf[kResidual] = res;
    MPI_Win_fence(0, win);
    MPI_Put(&u[1], 1, MPI_DOUBLE, left, kRightHalo, 1, MPI_DOUBLE, win);
    MPI_Put(&u[kPoints], 1, MPI_DOUBLE, right, kLeftHalo, 1, MPI_DOUBLE, win);
    MPI_Get(&neighbour_res, 1, MPI_DOUBLE, right, kResidual, 1, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    u[0] = win_buf[kLeftHalo];
    u[kPoints + 1] = win_buf[kRightHalo];
    sum_res += neighbour_res;
    if (it % 10 == 9)
      MPI_Allreduce(&sum_res, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  Report("rma_fence", &opt, culprit, t_work, t_extra, total + tail * 1e-9);
  MPI_Win_free(&win);
  MPI_Free_mem(win_buf);
  free(u);
  MPI_Finalize();
  return 0;
}
