// Whole-program PSG shapes: one function reached from two call sites,
// recursion, an indirect call through a function pointer.
#include <mpi.h>

void exchange(int *v) {
  for (int k = 0; k < 2; ++k)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

int depth_first(int n, int *v) {
  if (n <= 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
  }
  return 1 + depth_first(n - 1, v);
}

static void hook(int *v) { *v += 1; }

int main(int argc, char **argv) {
  int v = 1;
  void (*volatile fp)(int *) = hook;
  MPI_Init(&argc, &argv);
  exchange(&v);
  for (int i = 0; i < 3; ++i)
    exchange(&v);
  depth_first(3, &v);
  fp(&v);
  MPI_Finalize();
  return v < 0;
}
