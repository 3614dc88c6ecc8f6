// Many threads alive at once, each with a little CPU time, while the
// program opens files: under `ulimit -n 1024` the profiler must leave it
// the descriptors it would have without it (the perf source holds one per
// thread only within a budget). Prints how many of its open() calls failed
// and the process's CPU time once every thread has ended.
//
// usage: many_threads THREADS FILES [ITERATIONS per thread, 400000]
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t started, release;
static volatile double sink;
static long iterations = 400000;

static double ProcessCpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *Worker(void *arg) {
  (void)arg;
  double x = 0;
  for (long i = 0; i < iterations; ++i) // @worker_loop
    x += (double)i * 1e-9;
  sink = x;
  pthread_barrier_wait(&started);
  pthread_barrier_wait(&release);
  return NULL;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3 && argc != 4)
    MPI_Abort(MPI_COMM_WORLD, 2);
  int threads = atoi(argv[1]), files = atoi(argv[2]);
  if (argc == 4)
    iterations = atol(argv[3]);
  pthread_t *ids = malloc(sizeof(pthread_t) * (size_t)threads);
  int *fds = malloc(sizeof(int) * (size_t)files);
  pthread_barrier_init(&started, NULL, (unsigned)threads + 1);
  pthread_barrier_init(&release, NULL, (unsigned)threads + 1);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  int made = 0;
  for (; made < threads; ++made)
    if (pthread_create(&ids[made], &attr, Worker, NULL) != 0)
      break;
  if (made < threads) {
    fprintf(stderr, "made only %d threads\n", made);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  pthread_barrier_wait(&started); // every thread alive, its sampler started
  int failures = 0, first_errno = 0;
  for (int i = 0; i < files; ++i) {
    fds[i] = open("/dev/null", O_RDONLY);
    if (fds[i] < 0 && !failures++)
      first_errno = errno;
  }
  pthread_barrier_wait(&release);
  for (int i = 0; i < made; ++i)
    pthread_join(ids[i], NULL);
  for (int i = 0; i < files; ++i)
    if (fds[i] >= 0)
      close(fds[i]);
  printf("threads %d open failures %d%s%s process_cpu %.4f\n", made, failures,
         failures ? " " : "", failures ? strerror(first_errno) : "", ProcessCpu());
  MPI_Finalize();
  return 0;
}
