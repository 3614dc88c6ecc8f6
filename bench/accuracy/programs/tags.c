/* One tag, two phases: a solver that, in each of a few outer steps, first
 * sets up coefficients and trades the boundary ones with its neighbours
 * (blocking MPI_Send/MPI_Recv), then runs solve iterations that trade
 * boundary values with the same neighbours (MPI_Irecv/MPI_Isend/
 * MPI_Waitall). Both phases use tag 99 on MPI_COMM_WORLD, so a message's
 * peer and tag alone do not say which phase sent it. Weak scaling: a fixed
 * strip per rank on a line of ranks.
 *
 * --inject: rank 0 runs an extra loop in every solve iteration; its right
 * neighbour waits in the solve phase's MPI_Waitall, and the delay travels
 * down the line. The setup phase is balanced: going back through a setup
 * message would lead to the wrong code. */
#include "common.h"

enum { kPoints = 2048, kTag = 99, kOuter = 4, kSetupPasses = 9000, kSolvePasses = 150 };

static int my_rank, num_ranks;

/* Setup: coefficients from a nonlinear material law. */
static void SetupCoefficients(double *coef, int outer) {
  for (int p = 0; p < kSetupPasses; ++p)
    for (int i = 1; i <= kPoints; ++i)
      coef[i] = 1.0 + 0.5 / (1.0 + coef[i] * coef[i] + 1e-3 * (double)(outer + i % 5));
}

/* Setup: trades the boundary coefficients. */
static void SetupExchange(double *coef) {
  int left = my_rank - 1, right = my_rank + 1;
  /* Blocking calls, ordered so two neighbours never both receive first. */
  if (my_rank % 2 == 0) {
    if (right < num_ranks) {
      MPI_Send(&coef[kPoints], 1, MPI_DOUBLE, right, kTag, MPI_COMM_WORLD);
      MPI_Recv(&coef[kPoints + 1], 1, MPI_DOUBLE, right, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (left >= 0) {
      MPI_Send(&coef[1], 1, MPI_DOUBLE, left, kTag, MPI_COMM_WORLD);
      MPI_Recv(&coef[0], 1, MPI_DOUBLE, left, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else {
    if (left >= 0) {
      MPI_Recv(&coef[0], 1, MPI_DOUBLE, left, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&coef[1], 1, MPI_DOUBLE, left, kTag, MPI_COMM_WORLD);
    }
    if (right < num_ranks) {
      MPI_Recv(&coef[kPoints + 1], 1, MPI_DOUBLE, right, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&coef[kPoints], 1, MPI_DOUBLE, right, kTag, MPI_COMM_WORLD);
    }
  }
}

/* Solve: trades the strip's ends. */
static void SolveExchange(double *u) {
  MPI_Request req[4];
  int k = 0;
  if (my_rank > 0) {
    MPI_Irecv(&u[0], 1, MPI_DOUBLE, my_rank - 1, kTag, MPI_COMM_WORLD, &req[k++]);
    MPI_Isend(&u[1], 1, MPI_DOUBLE, my_rank - 1, kTag, MPI_COMM_WORLD, &req[k++]);
  }
  if (my_rank < num_ranks - 1) {
    MPI_Irecv(&u[kPoints + 1], 1, MPI_DOUBLE, my_rank + 1, kTag, MPI_COMM_WORLD, &req[k++]);
    MPI_Isend(&u[kPoints], 1, MPI_DOUBLE, my_rank + 1, kTag, MPI_COMM_WORLD, &req[k++]);
  }
  MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
}

/* Solve: smoothing passes. */
static double Smooth(double *u, const double *coef) {
  double change = 0.0;
  for (int p = 0; p < kSolvePasses; ++p) {
    for (int i = 1; i <= kPoints; ++i) {
      double v = (u[i - 1] + u[i + 1] + coef[i] * u[i]) / (2.0 + coef[i]);
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
  /* --iters: solve iterations per outer step. */
  Options opt = ParseOptions(argc, argv, "tags", 30);
  int culprit = Culprit(&opt, 0, num_ranks);

  double *u = calloc(kPoints + 2, sizeof(double)), *coef = calloc(kPoints + 2, sizeof(double));
  for (int i = 0; i < kPoints + 2; ++i)
    u[i] = 0.01 * ((i + my_rank) % 7);
  /* About half of a rank's regular work. */
  long extra = (opt.inject && my_rank == culprit) ? SharedExtra(&opt, 2L * kSolvePasses * kPoints, 50) : 0;
  double change = 0.0, total = 0.0, drift = 0.0, t_work = 0.0, t_extra = 0.0;

  for (int outer = 0; outer < kOuter; ++outer) {
    double t0 = CpuSeconds();
    SetupCoefficients(coef, outer);
    t_work += CpuSeconds() - t0;
    SetupExchange(coef);
    for (long it = 0; it < opt.iters; ++it) {
      SolveExchange(u);
      double t1 = CpuSeconds();
      change += Smooth(u, coef);
      double t2 = CpuSeconds();
      for (long d = 0; d < extra; ++d) // ROOT CAUSE: rank 0's extra loop in the solve phase
        drift = drift * 0.999999 + u[1 + (d & (kPoints - 1))];
      double t3 = CpuSeconds();
      t_work += t2 - t1;
      t_extra += t3 - t2;
    }
    MPI_Allreduce(&change, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  Report("tags", &opt, culprit, t_work, t_extra, total + drift * 1e-9);
  free(u);
  free(coef);
  MPI_Finalize();
  return 0;
}
