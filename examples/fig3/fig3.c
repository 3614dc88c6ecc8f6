/* The MPI program of the ScalAna paper's Fig. 3, made runnable.
 *
 *   main: Loop 1 { A[i] = rand(); Loop 1.1; Loop 1.2; foo(); MPI_Bcast }
 *   foo:  if (even rank) MPI_Send else MPI_Recv
 *
 * Weak scaling: every rank does the same work at any rank count. With
 * --inject one rank (--culprit, default the last rank) runs Loop 1.1 over
 * --factor times more elements, so the others wait for it in MPI_Recv and
 * MPI_Bcast. The injected root cause is Loop 1.1, marked in the code.
 *
 * usage: fig3 [--inject|-i] [--iters N] [--size N] [--factor F] [--culprit R]
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

/* Even ranks send a token to their odd neighbour. The rank count may be
 * odd (or 1): a rank with no partner skips the exchange. */
static void foo(double *token) {
  int partner = my_rank ^ 1;
  if (partner >= num_ranks)
    return;
  if (my_rank % 2 == 0)
    MPI_Send(token, 1, MPI_DOUBLE, partner, 7, MPI_COMM_WORLD);
  else
    MPI_Recv(token, 1, MPI_DOUBLE, partner, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static long ParseLong(const char *text) {
  // -1 when TEXT is not a non-negative integer; main reports it.
  char *end;
  long v = strtol(text ? text : "", &end, 10);
  return (!text || !*text || *end || v < 0) ? -1 : v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);

  int inject = 0, bad_usage = 0;
  // A per-rank array that fits in cache: with 8 ranks sharing 2 cores, a large
  // one is refetched after every context switch, and that CPU time scatters
  // from rank to rank more than the effects this example is meant to show.
  long iters = 800, size = 20000, factor = 6, culprit = num_ranks - 1;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject") || !strcmp(argv[a], "-i"))
      inject = 1;
    else if (!strcmp(argv[a], "--iters"))
      iters = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--size"))
      size = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--factor"))
      factor = ParseLong(argv[a + 1]), ++a;
    else if (!strcmp(argv[a], "--culprit"))
      culprit = ParseLong(argv[a + 1]), ++a;
    else
      bad_usage = 1;
  }
  if (bad_usage || iters < 1 || size < 1 || factor < 1 || culprit < 0) {
    if (my_rank == 0)
      fprintf(stderr,
              "usage: fig3 [--inject|-i] [--iters N] [--size N] [--factor F] [--culprit R]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  culprit %= num_ranks;

  /* Loop 1.1 reads A cyclically, so the injected work needs no more memory. */
  long len11 = (inject && my_rank == culprit) ? size * factor : size;
  double *A = malloc(size * sizeof *A);
  for (long j = 0; j < size; ++j)
    A[j] = 1.0 + (double)(j % 97) / 97.0;
  srand(1234 + my_rank);

  double sum = 0.0, product = 1.0, token = 0.0, t11 = 0.0;
  for (long i = 0; i < iters; ++i) { // Loop 1
    A[i % size] = 1.0 + (double)rand() / RAND_MAX;
    double t0 = CpuSeconds();
    for (long j = 0; j < len11; ++j) // ROOT CAUSE: Loop 1.1
      sum += A[j % size];
    t11 += CpuSeconds() - t0;
    for (long k = 0; k < size; ++k) // Loop 1.2
      product *= A[k] * (1.0 / 1.0000001);
    if (product > 1e100 || product < 1e-100)
      product = 1.0;
    token = sum;
    foo(&token);
    MPI_Bcast(&token, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }

  /* In-program check of the injected effect, in CPU time. */
  double t11_max, t11_min;
  MPI_Reduce(&t11, &t11_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&t11, &t11_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  if (my_rank == 0)
    printf("fig3: np=%d inject=%d culprit=%ld loop1.1 cpu min %.3f s max %.3f s "
           "(checksum %.6g)\n",
           num_ranks, inject, culprit, t11_min, t11_max, token + product);
  free(A);
  MPI_Finalize();
  return 0;
}
