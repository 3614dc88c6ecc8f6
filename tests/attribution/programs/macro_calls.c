/* A macro that expands to two MPI calls on one line, as bale's MYTHREAD and
 * THREADS expand to shmem_my_pe() and shmem_n_pes() beside a put: both calls
 * share the line and the column of the macro's use, so only the operation
 * the wrapper saw tells which one a call site is. Rank 0 polls for the
 * others' results with the macro's MPI_Iprobe (most of its calls), while
 * they compute. The report must label the polling by MPI_Iprobe.
 *   macro_calls [--steps N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANK_AND_PROBE(me, flag)                                                                   \
  (MPI_Comm_rank(MPI_COMM_WORLD, &(me)),                                                           \
   MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &(flag), MPI_STATUS_IGNORE))

static double Work(int n) {
  double s = 0.0;
  for (int i = 1; i <= n; ++i)
    s += 1.0 / ((double)i * i);
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int steps = 200, size, me = 0;
  for (int a = 1; a + 1 < argc; ++a)
    if (!strcmp(argv[a], "--steps"))
      steps = atoi(argv[++a]);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  double total = 0.0;
  for (int s = 0; s < steps; ++s) {
    if (me == 0) {
      for (int got = 1; got < size; ++got) {
        int flag = 0;
        while (!flag)
          RANK_AND_PROBE(me, flag); // MACRO: two calls on this line
        double v;
        MPI_Recv(&v, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        total += v;
      }
    } else {
      double v = Work(200000);
      MPI_Send(&v, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
    }
  }
  if (me == 0)
    printf("macro_calls: %g\n", total);
  MPI_Finalize();
  return 0;
}
