/* A reduction-heavy preconditioned conjugate gradient solver on a 1-D
 * operator split into equal segments (weak scaling: a fixed segment per
 * rank). Every iteration: one ghost exchange with MPI_Sendrecv for the
 * matrix-vector product, then four MPI_Allreduce calls (the two inner
 * products CG needs, the residual norm and a solution norm for monitoring)
 * around local vector updates and a local symmetric Gauss-Seidel
 * preconditioner.
 *
 * --inject: the last rank re-estimates a spectral bound for its
 * preconditioner every iteration (an extra loop); everyone else waits in
 * the next MPI_Allreduce. */
#include "common.h"

#include <math.h>

enum { kN = 8192, kSgsSweeps = 50 };

static int my_rank, num_ranks;

/* p's ghost points from the neighbours; the ends of the line have none. */
static void ExchangeGhosts(double *p) {
  int left = my_rank > 0 ? my_rank - 1 : MPI_PROC_NULL;
  int right = my_rank < num_ranks - 1 ? my_rank + 1 : MPI_PROC_NULL;
  MPI_Sendrecv(&p[kN], 1, MPI_DOUBLE, right, 51, &p[0], 1, MPI_DOUBLE, left, 51, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(&p[1], 1, MPI_DOUBLE, left, 52, &p[kN + 1], 1, MPI_DOUBLE, right, 52,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* q = A p for A = tridiag(-1, 2.05, -1). */
static void Apply(const double *p, double *q) {
  for (int i = 1; i <= kN; ++i)
    q[i] = 2.05 * p[i] - p[i - 1] - p[i + 1];
}

/* z ~ A^-1 r on this rank's block: symmetric Gauss-Seidel sweeps. */
static void Precondition(const double *r, double *z) {
  for (int i = 0; i <= kN + 1; ++i)
    z[i] = 0.0;
  for (int s = 0; s < kSgsSweeps; ++s) {
    for (int i = 1; i <= kN; ++i)
      z[i] = (r[i] + z[i - 1] + z[i + 1]) / 2.05;
    for (int i = kN; i >= 1; --i)
      z[i] = (r[i] + z[i - 1] + z[i + 1]) / 2.05;
  }
}

static double Dot(const double *a, const double *b) {
  double local = 0.0, global;
  for (int i = 1; i <= kN; ++i)
    local += a[i] * b[i];
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
  Options opt = ParseOptions(argc, argv, "cg_reduce", 60);
  int culprit = Culprit(&opt, num_ranks - 1, num_ranks);

  size_t bytes = (kN + 2) * sizeof(double);
  double *x = calloc(1, bytes), *r = calloc(1, bytes), *z = calloc(1, bytes);
  double *p = calloc(1, bytes), *q = calloc(1, bytes);
  for (int i = 1; i <= kN; ++i)
    r[i] = 1.0 + 0.01 * ((i + my_rank) % 9); /* b, with x0 = 0 */
  /* About two thirds of the regular work. */
  long extra = (opt.inject && my_rank == culprit) ? SharedExtra(&opt, 100L * kN, 62) : 0;
  double bound = 0.0, t_work = 0.0, t_extra = 0.0;

  double t0 = CpuSeconds();
  Precondition(r, z);
  for (int i = 1; i <= kN; ++i)
    p[i] = z[i];
  t_work += CpuSeconds() - t0;
  double rz = Dot(r, z), rnorm = 0.0, xnorm = 0.0;
  for (long it = 0; it < opt.iters; ++it) {
    ExchangeGhosts(p);
    double t1 = CpuSeconds();
    Apply(p, q);
    double t2 = CpuSeconds();
    double alpha = rz / Dot(p, q);
    double t3 = CpuSeconds();
    for (int i = 1; i <= kN; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    Precondition(r, z);
    double t4 = CpuSeconds();
    for (long d = 0; d < extra; ++d) // ROOT CAUSE: the last rank's spectral bound estimate
      bound = fmax(bound * 0.999999, fabs(r[1 + (d & (kN - 1))]) + 1e-12 * (double)d);
    double t5 = CpuSeconds();
    double rz_new = Dot(r, z);
    rnorm = sqrt(Dot(r, r));
    xnorm = sqrt(Dot(x, x));
    double beta = rz_new / rz;
    rz = rz_new;
    double t6 = CpuSeconds();
    for (int i = 1; i <= kN; ++i)
      p[i] = z[i] + beta * p[i];
    t_work += (t2 - t1) + (t4 - t3) + (CpuSeconds() - t6);
    t_extra += t5 - t4;
  }

  Report("cg_reduce", &opt, culprit, t_work, t_extra, rnorm + xnorm * 1e-6 + bound * 1e-12);
  free(x);
  free(r);
  free(z);
  free(p);
  free(q);
  MPI_Finalize();
  return 0;
}
