/* A loop that calls a small function every iteration, as an injected loop
 * in HPCCG's HPC_sparsemv did (its bound was a call): the accumulator lives
 * across the call, so clang spills it before the call and reloads it where
 * the call returns, and the line tables give both instructions line 0.
 * Samples there fit no loop by their line; they went to the function's
 * vertex, i.e. to the call of Relax in main, and the loop kept about a
 * third of its samples. The last rank runs the marked loop with --inject.
 *   line0 [--inject] [--steps N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long SweepLength(void); // line0_len.c: another translation unit

double Plain(const double *u, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i)
    s += u[i] * 1.0001;
  return s;
}

double Relax(const double *u, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i)
    s += u[i] * 1.0001;
  // The loop is one line, as the injected loop was.
  // clang-format off
  for (long k = 0; k < SweepLength(); ++k) s += (double)k * 1e-9; // ROOT CAUSE
  // clang-format on
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, steps = 400, inject = 0, n = 20000;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject"))
      inject = 1;
    else if (!strcmp(argv[a], "--steps") && a + 1 < argc)
      steps = atoi(argv[++a]);
  }
  double *u = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i)
    u[i] = 1.0 / (i + 1);
  int late = inject && rank == size - 1; // Relax: about 0.5 s of CPU more
  double total = 0.0;
  for (int step = 0; step < steps; ++step) {
    double local = late ? Relax(u, n) : Plain(u, n), sum = 0.0;
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    total += sum;
  }
  if (rank == 0)
    printf("line0: %d steps, total %g\n", steps, total);
  free(u);
  MPI_Finalize();
  return 0;
}
