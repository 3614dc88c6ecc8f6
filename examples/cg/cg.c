/* A CG-like solver, after the NPB-CG experiment of the ScalAna paper.
 *
 * Each rank owns a strip of NY rows of an NX-wide 2-D grid (weak scaling:
 * the strip size does not change with the rank count) and stores its part of
 * a 5-point operator in CSR form. One CG iteration is a sparse mat-vec that
 * first exchanges one halo row with each neighbour rank (MPI_Irecv/MPI_Isend/
 * MPI_Waitall), then two dot products reduced with MPI_Allreduce.
 *
 * With --inject one rank (--culprit, default the last rank) runs an extra
 * computation loop in every iteration (a CPU-time delay, not a sleep); every
 * other rank waits for it in the next halo exchange and MPI_Allreduce. The
 * injected loop is the line marked as the root cause in the code.
 *
 * usage: cg [--inject|-i] [--iters N] [--nx N] [--ny N] [--factor F] [--culprit R]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int rows, nx;   /* local rows = nx * ny; the halo rows follow in x */
  int *row_start; /* CSR */
  int *col;
  double *val;
} Matrix;

static int my_rank, num_ranks;

static double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static long ParseLong(const char *text) {
  // -1 when TEXT is not a non-negative integer; main reports it.
  char *end;
  long v = strtol(text ? text : "", &end, 10);
  return (!text || !*text || *end || v < 0) ? -1 : v;
}

/* The right-hand side b. */
static double Rhs(int i) { return 1.0 + (i % 13) * 0.01; }

/* x holds [halo below (nx) | own rows | halo above (nx)]; columns index x. */
static Matrix BuildMatrix(int nx, int ny) {
  Matrix m = {nx * ny, nx, NULL, NULL, NULL};
  m.row_start = malloc((m.rows + 1) * sizeof(int));
  m.col = malloc(5 * m.rows * sizeof(int));
  m.val = malloc(5 * m.rows * sizeof(double));
  int nnz = 0;
  for (int y = 0; y < ny; ++y) {
    for (int x = 0; x < nx; ++x) {
      int self = nx + y * nx + x;
      m.row_start[y * nx + x] = nnz;
      m.col[nnz] = self, m.val[nnz++] = 4.5; /* shifted: strictly diagonally dominant */
      if (x > 0)
        m.col[nnz] = self - 1, m.val[nnz++] = -1.0;
      if (x < nx - 1)
        m.col[nnz] = self + 1, m.val[nnz++] = -1.0;
      m.col[nnz] = self - nx, m.val[nnz++] = -1.0; /* halo or own row below */
      m.col[nnz] = self + nx, m.val[nnz++] = -1.0; /* halo or own row above */
    }
  }
  m.row_start[m.rows] = nnz;
  return m;
}

/* Fills the halo rows of x from the neighbour ranks; a missing neighbour
 * (the domain boundary) leaves a zero halo. */
static void ExchangeHalo(const Matrix *m, double *x) {
  MPI_Request req[4];
  int n = 0, nx = m->nx;
  int below = my_rank - 1, above = my_rank + 1;
  if (below >= 0) {
    MPI_Irecv(x, nx, MPI_DOUBLE, below, 1, MPI_COMM_WORLD, &req[n++]);
    MPI_Isend(x + nx, nx, MPI_DOUBLE, below, 2, MPI_COMM_WORLD, &req[n++]);
  }
  if (above < num_ranks) {
    MPI_Irecv(x + nx + m->rows, nx, MPI_DOUBLE, above, 2, MPI_COMM_WORLD, &req[n++]);
    MPI_Isend(x + m->rows, nx, MPI_DOUBLE, above, 1, MPI_COMM_WORLD, &req[n++]);
  }
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}

static void MatVec(const Matrix *m, double *x, double *y) {
  ExchangeHalo(m, x);
  for (int i = 0; i < m->rows; ++i) {
    double s = 0.0;
    for (int k = m->row_start[i]; k < m->row_start[i + 1]; ++k)
      s += m->val[k] * x[m->col[k]];
    y[i] = s;
  }
}

static double Dot(int n, const double *a, const double *b) {
  double local = 0.0, global;
  for (int i = 0; i < n; ++i)
    local += a[i] * b[i];
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  int inject = 0, bad_usage = 0;
  /* A strip of 1024 x 16 rows keeps a rank's matrix and vectors near 1.8 MB,
   * so eight ranks together stay in a 32 MB last-level cache: with 160 rows
   * one rank fitted and eight spilled to memory, and the mat-vec's CPU time
   * doubled from 1 to 8 ranks on a shared machine with no change in the
   * code. The iterations give each rank about 0.2 s of solver. */
  long iters = 2000, nx = 1024, ny = 16, factor = 4, culprit = num_ranks - 1;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject") || !strcmp(argv[a], "-i"))
      inject = 1;
    else if (!strcmp(argv[a], "--iters"))
      iters = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--nx"))
      nx = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--ny"))
      ny = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--factor"))
      factor = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--culprit"))
      culprit = ParseLong(argv[a + 1]), ++a;
    else
      bad_usage = 1;
  }
  if (bad_usage || iters < 1 || nx < 1 || ny < 1 || factor < 1 || culprit < 0) {
    if (my_rank == 0)
      fprintf(stderr, "usage: cg [--inject|-i] [--iters N] [--nx N] [--ny N] [--factor F] "
                      "[--culprit R]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  culprit %= num_ranks;

  Matrix A = BuildMatrix((int)nx, (int)ny);
  int n = A.rows;
  /* p carries halo rows on both sides for the mat-vec. */
  double *x = calloc(n, sizeof(double)), *r = malloc(n * sizeof(double));
  double *p = calloc(n + 2 * nx, sizeof(double)), *q = malloc(n * sizeof(double));
  double *p_own = p + nx;
  for (int i = 0; i < n; ++i)
    r[i] = p_own[i] = Rhs(i); /* x0 = 0 */

  /* The delay does (factor - 1) mat-vecs' worth of flops on the culprit. */
  long delay_work = (inject && my_rank == culprit) ? (factor - 1) * 5L * n : 0;
  long restarts = 0;
  double rr = Dot(n, r, r), rr0 = rr, delay_acc = 0.0, t_delay = 0.0, t_total = CpuSeconds();
  for (long it = 0; it < iters; ++it) {
    MatVec(&A, p, q);
    double t0 = CpuSeconds();
    for (long d = 0; d < delay_work; ++d) // ROOT CAUSE: injected delay
      delay_acc = delay_acc * 0.999999 + q[d % n];
    t_delay += CpuSeconds() - t0;
    double alpha = rr / Dot(n, p_own, q);
    for (int i = 0; i < n; ++i) {
      x[i] += alpha * p_own[i];
      r[i] -= alpha * q[i];
    }
    double rr_new = Dot(n, r, r), beta = rr_new / rr;
    if (rr_new < 1e-24 * rr0) {
      /* Converged to round-off: start over from x = 0, so that every
       * iteration does the same work and the numbers stay finite. */
      for (int i = 0; i < n; ++i)
        x[i] = 0.0, r[i] = p_own[i] = Rhs(i);
      rr = rr0, ++restarts;
      continue;
    }
    rr = rr_new;
    for (int i = 0; i < n; ++i)
      p_own[i] = r[i] + beta * p_own[i];
  }
  t_total = CpuSeconds() - t_total;

  /* In-program check of the injected effect, in CPU time. */
  double t_in[2] = {t_delay, t_total}, t_max[2], t_min[2];
  MPI_Reduce(t_in, t_max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(t_in, t_min, 2, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  if (my_rank == 0)
    printf("cg: np=%d inject=%d culprit=%ld residual %.3e (%ld restarts) delay cpu max %.3f s, "
           "solver cpu min %.3f max %.3f s (%g)\n",
           num_ranks, inject, culprit, rr / rr0, restarts, t_max[0], t_min[1], t_max[1], delay_acc);
  MPI_Finalize();
  return 0;
}
