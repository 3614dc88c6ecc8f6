/* A run that ends abruptly, for the fault tests: every rank works (a loop
 * and an MPI_Allreduce per step) for SECONDS of wall time after MPI_Init,
 * then rank VICTIM ends the run as argv[1] says, while the others block in
 * MPI_Barrier until the launcher kills them:
 *   abort      MPI_Abort
 *   segv       a fatal signal (a store through a null pointer)
 *   kill       raise(SIGKILL): no handler runs, only periodic snapshots help
 *   exit       exit() without MPI_Finalize
 *   term       nobody fails: every rank prints "working" and keeps working
 *              until the test sends SIGTERM to mpirun
 *   fork       nobody fails: rank 0 forks a child that calls exit() (it must
 *              leave no file), then every rank finalizes normally
 *   finalize   nobody fails: a normal run, MPI_Finalize included
 * With FAULTS_UNTIL=PATH in the environment the work also ends as soon as
 * PATH exists (a test's job that must outlast whatever it does meanwhile).
 * usage: faults HOW [SECONDS=1.3] [VICTIM=1] */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile double sink;

static void work(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @work_loop */
    s += (double)(i % 7) * 0.5;
  sink += s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *how = argc > 1 ? argv[1] : "finalize";
  double seconds = argc > 2 ? atof(argv[2]) : 1.3;
  int victim = argc > 3 ? atoi(argv[3]) : 1;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (victim >= size)
    victim = size - 1;
  const char *until = getenv("FAULTS_UNTIL");
  double t0 = MPI_Wtime();
  /* Rank 0's clock decides when every rank leaves the loop, so all reach
   * the end together whatever the scheduling on oversubscribed cores. */
  for (int done = 0; !done;) {
    work(2000000);
    int mine = rank == 0 && (MPI_Wtime() - t0 >= seconds || (until && access(until, F_OK) == 0));
    MPI_Allreduce(&mine, &done, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* @step */
  }
  if (!strcmp(how, "term")) {
    if (rank == 0) {
      printf("working\n");
      fflush(stdout);
    }
    for (;;) {
      work(2000000);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  if (!strcmp(how, "fork")) {
    if (rank == 0) {
      pid_t pid = fork();
      if (pid == 0) {
        work(1000);
        exit(0); /* runs the exit handlers of the parent's image */
      }
      int status;
      waitpid(pid, &status, 0);
    }
  } else if (strcmp(how, "finalize") != 0 && rank == victim) {
    if (!strcmp(how, "segv")) {
      volatile int *p = NULL;
      *p = 1;
    } else if (!strcmp(how, "kill")) {
      raise(SIGKILL);
    } else if (!strcmp(how, "exit")) {
      exit(0);
    } else {
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  if (strcmp(how, "fork") != 0 && strcmp(how, "finalize") != 0)
    MPI_Barrier(MPI_COMM_WORLD); /* the survivors wait here to be killed */
  MPI_Finalize();
  return 0;
}
