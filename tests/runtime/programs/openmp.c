/* OpenMP threads are sampled: each thread of the parallel region sets its
 * own context (vertex 300 + thread number) and does the same work. */
#include "hand_ctx.h"

#include <mpi.h>
#include <omp.h>

static volatile double sink;

int main(int argc, char **argv) {
  CTX.vertex = ID(0);
  MPI_Init(&argc, &argv);
#pragma omp parallel num_threads(2)
  {
    CTX.vertex = ID(300 + omp_get_thread_num());
    double s = 0;
    for (long i = 0; i < 150000000L; ++i)
      s += (double)(i % 5);
    sink = s;
    CTX.vertex = ID(0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
