/* 1-D halo exchange: Gauss-Seidel sweeps on a line cut into equal strips,
 * one strip per rank (weak scaling: the strip does not grow with the ranks).
 *
 * Every iteration trades one ghost value with each neighbour through
 * MPI_Irecv/MPI_Isend/MPI_Waitall, relaxes the strip, and every tenth
 * iteration sums the change with MPI_Allreduce.
 *
 * --inject: the last rank runs an extra correction loop every iteration, so
 * its neighbour waits in MPI_Waitall and the others in MPI_Allreduce. */
#include "common.h"

enum { kPoints = 4096, kSweeps = 400, kTag = 10 };

static int my_rank, num_ranks;

/* Fills u[0] and u[n + 1] from the neighbours; the two ends of the line keep
 * their fixed boundary values. */
static void ExchangeGhosts(double *u, int n) {
  MPI_Request req[4];
  int k = 0;
  if (my_rank > 0) {
    MPI_Irecv(&u[0], 1, MPI_DOUBLE, my_rank - 1, kTag, MPI_COMM_WORLD, &req[k++]);
    MPI_Isend(&u[1], 1, MPI_DOUBLE, my_rank - 1, kTag + 1, MPI_COMM_WORLD, &req[k++]);
  }
  if (my_rank < num_ranks - 1) {
    MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, my_rank + 1, kTag + 1, MPI_COMM_WORLD, &req[k++]);
    MPI_Isend(&u[n], 1, MPI_DOUBLE, my_rank + 1, kTag, MPI_COMM_WORLD, &req[k++]);
  }
  MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
}

static double Relax(double *u, const double *f, int n, int sweeps) {
  double change = 0.0;
  for (int s = 0; s < sweeps; ++s) {
    for (int i = 1; i <= n; ++i) {
      double v = 0.5 * (u[i - 1] + u[i + 1] + f[i]);
      change += (v - u[i]) * (v - u[i]);
      u[i] = v;
    }
  }
  return change;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "halo1d", 60);
  int culprit = Culprit(&opt, num_ranks - 1, num_ranks);

  double *u = calloc(kPoints + 2, sizeof(double)), *f = malloc((kPoints + 2) * sizeof(double));
  for (int i = 0; i < kPoints + 2; ++i)
    f[i] = 1e-3 * ((i * 7 + my_rank) % 11);
  /* About two thirds of a rank's regular work, as a scalar recurrence. */
  long extra = (opt.inject && my_rank == culprit) ? SharedExtra(&opt, (long)kSweeps * kPoints, 71) : 0;
  double change = 0.0, total = 0.0, corr = 0.0, t_work = 0.0, t_extra = 0.0;

  for (long it = 0; it < opt.iters; ++it) {
    ExchangeGhosts(u, kPoints);
    double t0 = CpuSeconds();
    change += Relax(u, f, kPoints, kSweeps);
    double t1 = CpuSeconds();
    for (long d = 0; d < extra; ++d) // ROOT CAUSE: the culprit's extra correction loop
      corr = corr * 0.999999 + u[1 + (d & (kPoints - 1))];
    t_extra += CpuSeconds() - t1;
    t_work += t1 - t0;
    if (it % 10 == 9) {
      MPI_Allreduce(&change, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      change = 0.0;
    }
  }

  Report("halo1d", &opt, culprit, t_work, t_extra, total + corr * 1e-9);
  free(u);
  free(f);
  MPI_Finalize();
  return 0;
}
