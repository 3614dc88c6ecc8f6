// A program that closes every descriptor it did not open before it starts
// (a daemon's habit): `loop` with close() up to its limit, `closefrom` with
// closefrom(3). Then its first open() and, after MPI_Init, whether
// LD_PRELOAD exists; then 1.5 s of its CPU time in a loop, measured by its
// own clock. Prints what it saw.
#define _GNU_SOURCE
#include <mpi.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double ProcessCpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "loop";
  if (strcmp(mode, "closefrom") == 0) {
    closefrom(3);
  } else {
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < max && fd < (1L << 20); ++fd)
      close((int)fd);
  }
  int first = open("/dev/null", O_RDONLY);
  MPI_Init(&argc, &argv);
  const char *preload = getenv("LD_PRELOAD");
  volatile double x = 0;
  double t0 = ProcessCpu();
  while (ProcessCpu() - t0 < 1.5)
    for (int i = 0; i < 100000; ++i) // @spin
      x += i * 1e-9;
  printf("first_open %d preload %s process_cpu %.4f\n", first,
         preload ? (*preload ? "set" : "empty") : "unset", ProcessCpu());
  MPI_Finalize();
  return 0;
}
