// Included by two TUs: each emits Reduce<int> and Twice (linkonce_odr) and
// its own copy of the static inline Scale.
#pragma once
#include <mpi.h>
static inline double Scale(double x) { return x * 0.5; }
template <typename T> double Reduce(const T *v, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += Scale(double(v[i]));
  double g = 0;
  MPI_Allreduce(&s, &g, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return g;
}
inline double Twice(const int *v, int n) {
  double t = 0;
  for (int k = 0; k < 2; ++k)
    t += Reduce(v, n);
  return t;
}
