/* Rank 0 gathers every rank's field each step and writes it with write(2)
 * and fsync(2): the I/O grows with the ranks (weak scaling otherwise), and
 * the other ranks wait for it in the barrier. Rank 0 also writes its log
 * through stdio (fprintf to stderr), which is not timed. Each rank prints
 * the wall seconds and bytes it measured in write + fsync, for the test to
 * hold the profile to. usage: posix_gather_write FILE [CPU_S] [KIB] */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

volatile double sink;

static void compute(double cpu_s) {
  double end = cpu_now() + cpu_s, s = 0;
  while (cpu_now() < end) /* @compute */
    for (int i = 0; i < 20000; ++i)
      s += i * 0.5;
  sink = s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *path = argc > 1 ? argv[1] : "posix_gather_write.out";
  double cpu_s = argc > 2 ? atof(argv[2]) : 0.2;
  size_t n = (size_t)(argc > 3 ? atol(argv[3]) : 4096) * 1024;
  char *field = malloc(n), *all = rank == 0 ? malloc(n * (size_t)size) : NULL;
  memset(field, 'a' + rank % 26, n);
  int fd = rank == 0 ? open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644) : -1;
  double io = 0;
  size_t bytes = 0;
  for (int step = 0; step < 4; ++step) {
    compute(cpu_s / 4);
    MPI_Gather(field, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      double t0 = wall_now();
      for (size_t done = 0; done < n * (size_t)size;) {
        ssize_t w = write(fd, all + done, n * (size_t)size - done); /* @write */
        if (w <= 0)
          MPI_Abort(MPI_COMM_WORLD, 1);
        done += (size_t)w;
        bytes += (size_t)w;
      }
      fsync(fd); /* @sync */
      io += wall_now() - t0;
      fprintf(stderr, "step %d written\n", step);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* @barrier */
  }
  if (fd >= 0)
    close(fd);
  printf("rank %d io %.6f bytes %zu\n", rank, io, bytes);
  free(field);
  free(all);
  MPI_Finalize();
  return 0;
}
