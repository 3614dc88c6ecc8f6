/* Worksharing constructs are recorded only when asked for
 * (--omp-worksharing): each thread's count of the loop and its iterations.
 * REGIONS regions of two threads each split ITERS iterations of a static
 * loop.
 *
 *   openmp_worksharing [REGIONS [ITERS]] */
#include <mpi.h>
#include <omp.h>
#include <stdlib.h>

static volatile double sink;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long regions = argc > 1 ? atol(argv[1]) : 50;
  long iters = argc > 2 ? atol(argv[2]) : 2000;
  for (long r = 0; r < regions; ++r) {
#pragma omp parallel num_threads(2)
    {
      double s = 0;
#pragma omp for schedule(static)
      for (long i = 0; i < iters; ++i) /* @loop */
        for (int k = 0; k < 200; ++k)
          s += (double)((i + k) % 7);
      sink += s;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
