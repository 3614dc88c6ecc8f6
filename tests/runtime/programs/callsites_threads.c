/* Attribution: heavy()'s loop reached from call site A (3x the work) and call
 * site B (1x); a worker thread's loop must be sampled too. The test finds the
 * call sites by their marker comments. */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) static void heavy(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @heavy_loop */
    s += (double)(i % 7) * 0.5;
  sink = s;
}

static void *worker(void *arg) {
  double s = 0;
  for (long i = 0; i < *(long *)arg; ++i) /* @worker_loop */
    s += (double)(i % 5) * 0.25;
  sink = s;
  return NULL;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 400000000L;
  /* Interleaved in rounds, so interference from other jobs on the shared
   * cores hits both call sites alike. */
  for (int round = 0; round < 10; ++round) {
    heavy(3 * n / 10); /* @site_a */
    heavy(n / 10);     /* @site_b */
  }
  pthread_t t;
  long wn = 2 * n;
  pthread_create(&t, NULL, worker, &wn);
  pthread_join(t, NULL);
  MPI_Barrier(MPI_COMM_WORLD); /* @barrier */
  MPI_Finalize();
  return 0;
}
