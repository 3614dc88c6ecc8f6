/* OpenMP threads are sampled: threads 0 and 1 of the parallel region do the
 * same work, each in a function of its own so the test can tell their
 * samples apart by where they land. The master thread runs its part from
 * main's stack, the other thread from libomp's: both land under the region
 * in main's PSG. */
#include <mpi.h>
#include <omp.h>

static volatile double sink;

__attribute__((noinline)) static void spin_thread0(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @loop0 */
    s += (double)(i % 5);
  sink = s;
}

/* Not the same instructions as spin_thread0, so no optimisation folds the
 * two into one function. */
__attribute__((noinline)) static void spin_thread1(long n) {
  double s = 1;
  for (long i = 0; i < n; ++i) /* @loop1 */
    s += (double)(i % 5);
  sink = s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
#pragma omp parallel num_threads(2) /* @region */
  {
    if (omp_get_thread_num() == 0)
      spin_thread0(1000000000L); /* @call0 */
    else
      spin_thread1(1000000000L); /* @call1 */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
