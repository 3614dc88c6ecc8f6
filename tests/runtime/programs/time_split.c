/* Time accounting (docs/runtime.md, "Time accounting"): each rank computes
 * for CPU_S seconds of its own CPU time, then sleeps SLEEP_S seconds, and
 * prints what it measured itself, for the test to hold the profile to.
 * usage: time_split CPU_S SLEEP_S */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_s(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

volatile double sink;

static void compute(double cpu_s) {
  double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + cpu_s, s = 0;
  while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end) /* @compute */
    for (int i = 0; i < 20000; ++i)
      s += i * 0.5;
  sink = s;
}

static void rest(double sleep_s) {
  double end = clock_s(CLOCK_MONOTONIC) + sleep_s;
  for (double now; (now = clock_s(CLOCK_MONOTONIC)) < end;) {
    double left = end - now;
    struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    nanosleep(&ts, NULL); /* @sleep */
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double cpu_s = argc > 1 ? atof(argv[1]) : 0.3, sleep_s = argc > 2 ? atof(argv[2]) : 0.3;
  MPI_Barrier(MPI_COMM_WORLD); /* @start */
  double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
  compute(cpu_s);
  double c1 = clock_s(CLOCK_THREAD_CPUTIME_ID), w1 = clock_s(CLOCK_MONOTONIC);
  rest(sleep_s);
  double w2 = clock_s(CLOCK_MONOTONIC);
  printf("rank %d compute_cpu %.6f compute_wall %.6f sleep %.6f\n", rank, c1 - c0, w1 - w0,
         w2 - w1);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD); /* @end */
  MPI_Finalize();
  return 0;
}
