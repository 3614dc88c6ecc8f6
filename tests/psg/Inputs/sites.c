/* `scalana psg` on a real binary: one function called from two sites, a
 * recursion, nested loops (folded by --max-loop-depth) and library calls. */
#include <mpi.h>
#include <stdlib.h>

__attribute__((noinline)) static double Work(int n, double *a) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += a[i] * a[i];
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

__attribute__((noinline)) int Depth(int d) {
  if (d <= 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
  }
  return Depth(d - 1) + 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = argc > 5 ? 5 : 100;
  double *a = calloc(n, sizeof *a), t = 0;
  for (int it = 0; it < 4; ++it) {
    t += Work(n, a);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        a[i] += j * 0.5;
  }
  t += Work(n / 2, a);
  t += Depth(3);
  free(a);
  MPI_Finalize();
  return t < 0;
}
