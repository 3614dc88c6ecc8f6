/* An MPI-IO collective write that grows with the ranks (weak scaling
 * otherwise): each rank computes a fixed amount, then all write
 * BYTES_PER_RANK x size bytes each through MPI_File_write_at_all and sync.
 * Each rank prints the wall seconds it measured in the write, for the test
 * to hold the profile to. usage: mpiio_grow FILE [CPU_S] [KIB] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
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
  const char *path = argc > 1 ? argv[1] : "mpiio_grow.out";
  double cpu_s = argc > 2 ? atof(argv[2]) : 0.2;
  long kib = argc > 3 ? atol(argv[3]) : 4096;
  size_t n = (size_t)kib * 1024 * (size_t)size;
  char *buf = malloc(n);
  memset(buf, 'a' + rank % 26, n);
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                &fh); /* @open */
  double io = 0;
  for (int step = 0; step < 4; ++step) {
    compute(cpu_s / 4);
    double t0 = MPI_Wtime();
    MPI_File_write_at_all(fh, (MPI_Offset)n * (rank + (MPI_Offset)size * step), buf, (int)n,
                          MPI_BYTE, MPI_STATUS_IGNORE); /* @write */
    MPI_File_sync(fh); /* @sync */
    io += MPI_Wtime() - t0;
  }
  MPI_File_close(&fh); /* @close */
  printf("rank %d io %.6f bytes %zu\n", rank, io, 4 * n);
  free(buf);
  MPI_Finalize();
  return 0;
}
