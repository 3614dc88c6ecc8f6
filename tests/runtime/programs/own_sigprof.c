/* A program that profiles itself the classic way: a SIGPROF handler and
 * setitimer(ITIMER_PROF) every 10 ms of CPU time. Profiled or not, it must
 * see its own ticks and only those, and the profiler must keep sampling.
 * Prints "ticks=<n> cpu=<seconds>" from rank 0. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t ticks;
static volatile double sink;

static void on_prof(int sig) {
  (void)sig;
  ++ticks;
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  struct itimerval every = {{0, 10000}, {0, 10000}};
  setitimer(ITIMER_PROF, &every, NULL);
  double start = cpu_seconds(), x = 0;
  while (cpu_seconds() - start < 0.8)
    for (int i = 0; i < 100000; ++i) /* @spin */
      x += i * 0.5;
  sink = x;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("ticks=%d cpu=%.3f\n", (int)ticks, cpu_seconds() - start);
  MPI_Finalize();
  return 0;
}
