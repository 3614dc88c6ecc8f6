/* Weak scaling with known growth: each rank's work in grow_<form> is
   UNIT * f(p) iterations; all_to_all sends BYTES to every peer, so its
   bytes per rank grow as p. Prints "seconds S" on rank 0. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

/* A loop at each use: each form's loop is its own vertex (a shared helper
   inlined everywhere would give them one source line). */
#define SPIN(n)                                                                                    \
  do {                                                                                             \
    double x = 1.0;                                                                                \
    for (long i = 0, e = (n); i < e; ++i)                                                          \
      x = x * 1.0000001 + 1e-9;                                                                    \
    sink = x;                                                                                      \
  } while (0)

__attribute__((noinline)) static void grow_const(long unit, int p) {
  SPIN(unit);
  (void)p;
}
__attribute__((noinline)) static void grow_log(long unit, int p) {
  SPIN((long)(unit * log2((double)p)));
}
__attribute__((noinline)) static void grow_sqrt(long unit, int p) {
  SPIN((long)(unit * sqrt((double)p)));
}
__attribute__((noinline)) static void grow_lin(long unit, int p) { SPIN(unit * p); }
__attribute__((noinline)) static void grow_plogp(long unit, int p) {
  SPIN((long)(unit * p * log2((double)p)));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  long unit = argc > 1 ? atol(argv[1]) : 20000000;
  int bytes = argc > 2 ? atoi(argv[2]) : 1 << 20;
  double t0 = MPI_Wtime();
  grow_const(unit, p);
  grow_log(unit, p);
  grow_sqrt(unit, p);
  grow_lin(unit, p);
  grow_plogp(unit, p);
  char *out = calloc((size_t)bytes, (size_t)p), *in = malloc((size_t)bytes * (size_t)p);
  /* The ranks meet first: on shared cores they leave the loops up to a time
     slice apart, and that wait, not the bytes, would be the all-to-all's. */
  MPI_Barrier(MPI_COMM_WORLD);
  for (int k = 0; k < 4; ++k)
    MPI_Alltoall(out, bytes, MPI_CHAR, in, bytes, MPI_CHAR, MPI_COMM_WORLD);
  free(out);
  free(in);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("seconds %.3f\n", MPI_Wtime() - t0);
  MPI_Finalize();
  return 0;
}
