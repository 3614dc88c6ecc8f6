/* An MPI error handler that longjmps out of the failing call: MPI_Send to a
 * rank outside the world under a user handler (not MPI_ERRORS_RETURN). The
 * wrapper of MPI_Send never sees its call end. What follows, a loop of
 * computation and more MPI calls, must be recorded as itself: the loop as
 * computation, the calls as calls. */
#include <mpi.h>
#include <setjmp.h>
#include <stdio.h>

static jmp_buf recover;
static volatile double sink;
static int handled;

static void Escape(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  (void)code;
  ++handled;
  longjmp(recover, 1);
}

__attribute__((noinline)) static void Work(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @after_loop */
    s += (double)(i % 7) * 0.5;
  sink = s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(Escape, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  if (setjmp(recover) == 0)
    MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD); /* @bad_send */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  Work(argc > 5 ? 1 : 400000000L); /* @after_call */
  for (int i = 0; i < 10; ++i)
    MPI_Barrier(MPI_COMM_WORLD); /* @after_barrier */
  MPI_Errhandler_free(&eh);
  MPI_Finalize();
  if (handled != 1) {
    fprintf(stderr, "error handler ran %d times, expected 1\n", handled);
    return 1;
  }
  return 0;
}
