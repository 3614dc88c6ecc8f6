/* OpenMP tasks run at a barrier. In each region thread 0 creates the
 * tasks, one of them four times as slow as the others, and both threads
 * run them at the region's closing barrier (thread 1 goes there at once).
 * Running a task there is work: the profiler must place the task bodies'
 * samples on their loops, not book them as the barrier's wait. The program
 * measures the CPU time of the slow tasks itself (each thread's CPU clock
 * around the loop) and prints it.
 *
 *   openmp_tasks [REGIONS] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

static double ThreadCpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

__attribute__((noinline)) static void task_body(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @task_loop */
    s += (double)(i % 5) * 0.5;
  sink += s;
}

__attribute__((noinline)) static void slow_body(long n, double *cpu) {
  double t0 = ThreadCpu(), s = 0;
  for (long i = 0; i < n; ++i) /* @slow_loop */
    s += (double)(i % 7) * 0.25;
  sink += s;
  double spent = ThreadCpu() - t0;
#pragma omp atomic
  *cpu += spent;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long regions = argc > 1 ? atol(argv[1]) : 40;
  const long n = 1000000L;
  double slow_cpu = 0;
  double wall0 = MPI_Wtime();
  for (long r = 0; r < regions; ++r) {
#pragma omp parallel num_threads(2)
    {
#pragma omp master
      {
        for (int k = 0; k < 6; ++k) {
#pragma omp task
          task_body(n); /* @task */
        }
#pragma omp task
        slow_body(4 * n, &slow_cpu); /* @slow_task */
      }
    } /* the closing barrier runs the tasks */
  }
  double wall = MPI_Wtime() - wall0;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("openmp_tasks: rank %d slow_cpu %.6f wall %.6f\n", rank, slow_cpu, wall);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
