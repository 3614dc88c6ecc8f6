/* Loop-heavy C: Jacobi relaxation of a 2-D Poisson problem, rows split over
 * the ranks (weak scaling: every rank owns the same number of rows), with a
 * halo exchange of the boundary rows and an allreduce of the residual every
 * sweep, plus a CSR sparse matrix-vector product of the same 5-point
 * operator every few sweeps (the indirect loads a stencil does not have).
 *
 * usage: stencil [sweeps]
 * Prints on rank 0 one line "native_speed wall=<s> cpu=<s> check=<value>":
 * wall is the main phase's MPI_Wtime span (max over ranks), cpu the process
 * CPU time of that phase summed over ranks, check a checksum that must not
 * depend on how the program was built. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { NX = 400, NY = 400 }; /* local rows x columns, without halo rows */

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct {
  int rows;
  int *row_start, *col;
  double *val;
} Csr;

/* The 5-point Laplacian on the local rows; neighbours across the rank
 * boundary are dropped (a block-Jacobi preconditioner's operator). */
static Csr build_csr(void) {
  Csr a;
  int n = NX * NY, k = 0;
  a.rows = n;
  a.row_start = malloc((n + 1) * sizeof(int));
  a.col = malloc(5 * (size_t)n * sizeof(int));
  a.val = malloc(5 * (size_t)n * sizeof(double));
  for (int i = 0; i < NX; ++i)
    for (int j = 0; j < NY; ++j) {
      int r = i * NY + j;
      a.row_start[r] = k;
      if (i > 0) { a.col[k] = r - NY; a.val[k++] = -1.0; }
      if (j > 0) { a.col[k] = r - 1; a.val[k++] = -1.0; }
      a.col[k] = r; a.val[k++] = 4.0;
      if (j < NY - 1) { a.col[k] = r + 1; a.val[k++] = -1.0; }
      if (i < NX - 1) { a.col[k] = r + NY; a.val[k++] = -1.0; }
    }
  a.row_start[n] = k;
  return a;
}

static void spmv(const Csr *a, const double *x, double *y) {
  for (int r = 0; r < a->rows; ++r) {
    double s = 0.0;
    for (int k = a->row_start[r]; k < a->row_start[r + 1]; ++k)
      s += a->val[k] * x[a->col[k]];
    y[r] = s;
  }
}

/* One Jacobi sweep over the interior; u and v have NX + 2 rows (halo rows 0
 * and NX + 1). Returns the local squared residual. */
static double sweep(const double *u, double *v, const double *f, double h2) {
  double res = 0.0;
  for (int i = 1; i <= NX; ++i) {
    const double *up = u + (i - 1) * NY, *mid = u + i * NY, *dn = u + (i + 1) * NY;
    double *out = v + i * NY;
    const double *rhs = f + (i - 1) * NY;
    out[0] = mid[0];
    out[NY - 1] = mid[NY - 1];
    for (int j = 1; j < NY - 1; ++j) {
      double nv = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1] + h2 * rhs[j]);
      double d = nv - mid[j];
      res += d * d;
      out[j] = nv;
    }
  }
  return res;
}

static void exchange(double *u, int up, int down) {
  MPI_Sendrecv(u + NY, NY, MPI_DOUBLE, up, 0, u + (NX + 1) * NY, NY, MPI_DOUBLE, down, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(u + NX * NY, NY, MPI_DOUBLE, down, 1, u, NY, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int sweeps = argc > 1 ? atoi(argv[1]) : 5000;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Open boundaries at the first and last rank: MPI_PROC_NULL makes the
   * exchange a no-op there and keeps the halo rows at zero. */
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  size_t cells = (size_t)(NX + 2) * NY;
  double *u = calloc(cells, sizeof(double)), *v = calloc(cells, sizeof(double));
  double *f = malloc((size_t)NX * NY * sizeof(double)), *y = malloc((size_t)NX * NY * sizeof(double));
  for (int i = 0; i < NX; ++i)
    for (int j = 0; j < NY; ++j)
      f[i * NY + j] = ((i * 31 + j * 17 + rank * 7) % 23) / 23.0;
  Csr a = build_csr();
  double h2 = 1.0 / ((double)NY * NY), res = 0.0, norm = 0.0;

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), c0 = cpu_now();
  for (int s = 0; s < sweeps; ++s) {
    exchange(u, up, down);
    double local = sweep(u, v, f, h2);
    double *t = u;
    u = v;
    v = t;
    MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (s % 8 == 0) {
      spmv(&a, u + NY, y);
      double l = 0.0;
      for (int k = 0; k < NX * NY; ++k)
        l += y[k] * y[k];
      MPI_Allreduce(&l, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double wall = MPI_Wtime() - t0, cpu = cpu_now() - c0, wall_max, cpu_sum;
  MPI_Reduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("native_speed wall=%.6f cpu=%.6f check=%.12e\n", wall_max, cpu_sum, res + norm);
  free(u);
  free(v);
  free(f);
  free(y);
  free(a.row_start);
  free(a.col);
  free(a.val);
  MPI_Finalize();
  return 0;
}
