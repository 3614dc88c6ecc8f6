// A program that blocks every signal on its main thread for most of its
// CPU time (as codes do around sections they protect from their own
// handlers): the profiler cannot sample there, and must say so.
#include <mpi.h>

#include <signal.h>
#include <stdio.h>

static volatile double sink;

static void Work(long n) {
  double x = 0;
  for (long i = 0; i < n; ++i) // @work
    x += i * 1e-9;
  sink = x;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  Work(400000000); // @blocked_work
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  Work(20000000); // @open_work
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
