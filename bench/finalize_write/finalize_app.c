/* The cost of writing the profile at MPI_Finalize: every rank records
 * DEPTH calling contexts (an MPI call at the bottom of recursions 1 to DEPTH
 * deep, so the profile grows as DEPTH^2 frames per rank), then times its own
 * MPI_Finalize and the peak memory it took (VmHWM after the peak was reset
 * to the current size with /proc/self/clear_refs). Each rank prints
 * "rank R finalize_s S peak_kb K". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void down(int depth) {
  if (depth > 0) {
    down(depth - 1);
    __asm__ volatile("" ::: "memory"); /* keeps the recursion a call chain */
    return;
  }
  int x = 1, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0)
      kb = atol(line + n + 1);
  if (f)
    fclose(f);
  return kb;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int depth = argc > 1 ? atoi(argv[1]) : 100, r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  for (int d = 1; d <= depth; ++d)
    down(d);
  FILE *c = fopen("/proc/self/clear_refs", "w");
  if (c) {
    fputs("5", c);
    fclose(c);
  }
  long before = status_kb("VmRSS:");
  double t0 = now();
  MPI_Finalize();
  double t1 = now();
  printf("rank %d finalize_s %.6f peak_kb %ld\n", r, t1 - t0, status_kb("VmHWM:") - before);
  return 0;
}
