/* Attribution with hand-set contexts: heavy()'s loop (vertex 101) reached
 * from call site 1 (3x the work) and call site 2 (1x); a worker thread's
 * loop (vertex 201) must be sampled too. */
#include "hand_ctx.h"

#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) static void heavy(long n) {
  CTX.vertex = ID(100); /* function entry */
  CTX.vertex = ID(101); /* the loop */
  double s = 0;
  for (long i = 0; i < n; ++i)
    s += (double)(i % 7) * 0.5;
  sink = s;
  CTX.vertex = ID(100);
}

static void *worker(void *arg) {
  CTX.vertex = ID(201);
  double s = 0;
  for (long i = 0; i < *(long *)arg; ++i)
    s += (double)(i % 5) * 0.25;
  sink = s;
  return NULL;
}

int main(int argc, char **argv) {
  CTX.vertex = ID(0);
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 100000000L;
  /* Interleaved in rounds, so interference from other jobs on the shared
   * cores hits both call sites alike. */
  for (int round = 0; round < 10; ++round) {
    CALL_AT(1, heavy(3 * n / 10));
    CALL_AT(2, heavy(n / 10));
  }
  pthread_t t;
  long wn = 2 * n;
  pthread_create(&t, NULL, worker, &wn);
  pthread_join(t, NULL);
  MPI_AT(3, MPI_Barrier(MPI_COMM_WORLD));
  MPI_Finalize();
  return 0;
}
