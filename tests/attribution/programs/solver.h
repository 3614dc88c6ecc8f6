/* The library's entry point (solver.c), and the driver its test programs
 * share: options, the rank's block, the residual printed by rank 0. */
#ifndef SOLVER_H
#define SOLVER_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double solver_relax(double *u, int n, int steps, int inject);
typedef double (*solver_relax_fn)(double *u, int n, int steps, int inject);

/* [--inject] [--steps N]: the rank's block of *N values. */
static inline double *solver_block(int argc, char **argv, int *n, int *steps, int *inject) {
  *n = 80000, *steps = 400, *inject = 0;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--inject"))
      *inject = 1;
    else if (!strcmp(argv[a], "--steps") && a + 1 < argc)
      *steps = atoi(argv[++a]);
  }
  double *u = malloc(sizeof(double) * (size_t)*n);
  for (int i = 0; i < *n; ++i)
    u[i] = (i % 17) * 0.1;
  return u;
}

static inline void solver_report(double residual) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("residual %g\n", residual);
}

#endif
