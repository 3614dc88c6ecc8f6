/* Legacy C as GCC 12 takes it: solve() and report() are used before any
   declaration (implicit declarations), and halo.c is old-style K&R. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  double local, global;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  local = solve(rank, 100);
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report(rank, global);
  MPI_Finalize();
  return 0;
}
