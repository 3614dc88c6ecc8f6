/* Counts the reads of this thread's CPU clock while the profiler samples a
 * spin loop. The executable exports clock_gettime (built with -rdynamic), so
 * the preloaded runtime's calls reach this definition first; it forwards to
 * the system call. Under the perf source the sampling handler must not read
 * the thread's CPU clock: that read lets the scheduler end the thread's time
 * slice at the sample (docs/contexts.md, "Sampling"). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long thread_clock_reads;
static volatile int counting;

int clock_gettime(clockid_t clock, struct timespec *ts) {
  if (counting && clock == CLOCK_THREAD_CPUTIME_ID)
    ++thread_clock_reads;
  return (int)syscall(SYS_clock_gettime, clock, ts);
}

static double thread_cpu(void) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  volatile double acc = 0;
  double t0 = thread_cpu();
  counting = 1;
  while (thread_cpu() - t0 < 0.4)
    for (long k = 0; k < 100000; ++k) /* @spin */
      acc += 1e-9 * (double)(k ^ (k >> 3));
  counting = 0;
  printf("thread_clock_reads %ld cpu %.3f\n", thread_clock_reads, thread_cpu() - t0);
  MPI_Finalize();
  return acc < 0;
}
