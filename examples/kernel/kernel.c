/* A compute-kernel imbalance, after the Nekbone study of the ScalAna paper.
 *
 * Each rank applies a small dense matrix product (a dgemm-like kernel, as
 * Nekbone's mxm) to each of its --elements spectral elements per iteration
 * (weak scaling: the element count per rank does not change with the rank
 * count), exchanges element faces with its ring neighbours through
 * MPI_Isend/MPI_Irecv/MPI_Waitall, and reduces a norm with MPI_Allreduce.
 *
 * With --inject the heavy ranks (rank 3 of every group of four, and the last
 * rank) contract over --factor times more terms in the kernel's inner loop:
 * they execute that many more instructions and cycles, and the other ranks
 * wait in MPI_Waitall and MPI_Allreduce. The inner loop is marked as the root
 * cause in the code.
 *
 * usage: kernel [--inject|-i] [--iters N] [--elements N] [--order N] [--factor F]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* c (n1 x n3) = a (n1 x n2) * b (n2 x n3), column-major, as Nekbone's mxm. */
static void Mxm(const double *a, int n1, const double *b, int n2, double *c, int n3) {
  for (int j = 0; j < n3; ++j) {
    for (int i = 0; i < n1; ++i) {
      double s = 0.0;
      for (int k = 0; k < n2; ++k) // ROOT CAUSE: inner product, n2 larger on the heavy ranks
        s += a[i + n1 * k] * b[k + n2 * j];
      c[i + n1 * j] = s;
    }
  }
}

/* Sends the first and last element's face to the ring neighbours and adds
 * what they send back (a 1-D stand-in for Nekbone's gather-scatter). */
static void ExchangeFaces(double *u, int face, int elements, int element_size) {
  if (num_ranks == 1)
    return;
  int left = (my_rank - 1 + num_ranks) % num_ranks, right = (my_rank + 1) % num_ranks;
  double *recv = malloc(2 * face * sizeof(double));
  MPI_Request req[4];
  MPI_Irecv(recv, face, MPI_DOUBLE, left, 11, MPI_COMM_WORLD, &req[0]);
  MPI_Irecv(recv + face, face, MPI_DOUBLE, right, 12, MPI_COMM_WORLD, &req[1]);
  MPI_Isend(u + (long)(elements - 1) * element_size, face, MPI_DOUBLE, right, 11, MPI_COMM_WORLD,
            &req[2]);
  MPI_Isend(u, face, MPI_DOUBLE, left, 12, MPI_COMM_WORLD, &req[3]);
  MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
  for (int f = 0; f < face; ++f)
    u[f] = 0.5 * (u[f] + recv[f]);
  free(recv);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  int inject = 0, bad_usage = 0;
  long iters = 40, elements = 128, order = 12, factor = 4;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject") || !strcmp(argv[a], "-i"))
      inject = 1;
    else if (!strcmp(argv[a], "--iters"))
      iters = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--elements"))
      elements = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--order"))
      order = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--factor"))
      factor = ParseLong(argv[a + 1]), ++a;
    else
      bad_usage = 1;
  }
  if (bad_usage || iters < 1 || elements < 1 || order < 1 || factor < 1) {
    if (my_rank == 0)
      fprintf(stderr, "usage: kernel [--inject|-i] [--iters N] [--elements N] [--order N] "
                      "[--factor F]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  int heavy = inject && (my_rank % 4 == 3 || my_rank == num_ranks - 1);
  int n = (int)order, nk = heavy ? (int)(order * factor) : n;
  int element_size = n * n * n; /* u on an n x n x n element, seen as n x n^2 */
  double *u = malloc((long)elements * element_size * sizeof(double));
  double *w = malloc((long)element_size * factor * sizeof(double));
  double *d = malloc((long)n * nk * sizeof(double)); /* derivative-like operator */
  for (long e = 0; e < (long)elements * element_size; ++e)
    u[e] = 1.0 + (e % 31) * 0.01;
  for (long e = 0; e < (long)element_size * factor; ++e)
    w[e] = 1.0 / (1 + e % 7);
  for (long e = 0; e < (long)n * nk; ++e)
    d[e] = (e % 5 - 2) * 0.05;

  double t_kernel = 0.0, norm = 0.0;
  for (long it = 0; it < iters; ++it) {
    double t0 = CpuSeconds();
    for (long e = 0; e < elements; ++e) {
      double *ue = u + e * element_size;
      /* ue (n x n^2) = d (n x nk) * w (nk x n^2); w is the element's work array. */
      for (int f = 0; f < n * n; ++f)
        w[f] = ue[f];
      Mxm(d, n, w, nk, ue, n * n);
    }
    t_kernel += CpuSeconds() - t0;
    ExchangeFaces(u, n * n, (int)elements, element_size);
    double local = 0.0;
    for (long e = 0; e < (long)elements * element_size; ++e)
      local += u[e] * u[e];
    MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (long e = 0; e < (long)elements * element_size; ++e)
      u[e] = 1.0 + u[e] / (1.0 + norm);
  }

  /* In-program check of the injected effect, in CPU time. */
  double t_max, t_min;
  MPI_Reduce(&t_kernel, &t_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&t_kernel, &t_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  if (my_rank == 0)
    printf("kernel: np=%d inject=%d kernel cpu min %.3f s max %.3f s (norm %.6g)\n", num_ranks,
           inject, t_min, t_max, norm);
  free(u), free(w), free(d);
  MPI_Finalize();
  return 0;
}
