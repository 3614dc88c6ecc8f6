/* Deep calling contexts: descend() recurses 40 levels, then calls MPI and
 * spins at the bottom. The MPI call and the spinning loop must both be
 * attributed through all 40 frames. */
#include <mpi.h>
#include <stdlib.h>

static volatile double sink;
static volatile int depth_seen;

__attribute__((noinline)) static double descend(int depth, long n) {
  /* A volatile local and work after the recursive call keep a real frame
   * per level: no tail call, no recursion turned into a loop. */
  volatile int level = depth;
  double s = 0;
  if (depth == 0) {
    MPI_Barrier(MPI_COMM_WORLD); /* @bottom_mpi */
    for (long i = 0; i < n; ++i) /* @spin */
      s += (double)(i % 7) * 0.5;
  } else {
    s = descend(depth - 1, n); /* @recurse */
  }
  depth_seen = level;
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 1000000000L;
  sink = descend(40, n); /* @descend */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
