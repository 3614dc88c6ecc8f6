/* The library's one entry point (solver.c). */
#ifndef SOLVER_H
#define SOLVER_H
double solver_relax(double *u, int n, int steps, int inject);
typedef double (*solver_relax_fn)(double *u, int n, int steps, int inject);
#endif
