/* One MPI call site reached through two chains of calls at the same stack
 * depth, in turn (Quicksilver's one-line MPI_Test helper, utilsMpi.cc, under
 * its callers): the wrapper's return address and frame address are the same
 * for both. Each chain's calls must be counted under its own caller, and the
 * runtime must not unwind on every call (it did: 95% of the samples fell
 * inside its own unwinding, and the program ran 28x slower). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) static int Poll(MPI_Request *req) {
  int flag = 0;
  MPI_Test(req, &flag, MPI_STATUS_IGNORE); /* @test */
  return flag;
}

__attribute__((noinline)) static int PollA(MPI_Request *req) {
  volatile int pad = 1;
  return Poll(req) + pad; /* @call_a */
}

__attribute__((noinline)) static int PollB(MPI_Request *req) {
  volatile int pad = 2;
  return Poll(req) + pad; /* @call_b */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = argc > 1 ? atol(argv[1]) : 400000L;
  /* A receive nobody sends: every Test polls. */
  int buf = 0;
  MPI_Request req;
  MPI_Irecv(&buf, 1, MPI_INT, (rank + 1) % size, 99, MPI_COMM_WORLD, &req);
  long got = 0;
  double s = 0.0;
  for (long i = 0; i < n; ++i) {
    got += (i & 1) ? PollB(&req) : PollA(&req);
    for (int k = 0; k < 1000; ++k) /* @work */
      s += (double)(k % 7) * 1e-9;
  }
  sink = s + (double)got;
  MPI_Cancel(&req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("mpi_chains: %ld tests\n", n);
  MPI_Finalize();
  return 0;
}
