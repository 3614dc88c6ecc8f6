// C++ attribution through the PSG: a member function's loop reached from two
// call sites (3:1 work), plus a std::thread running its own loop, and a ring
// exchange whose peers must come out as world ranks.
#include <mpi.h>

#include <cstdlib>
#include <thread>

namespace {
volatile double sink;
}

struct Solver {
  __attribute__((noinline)) void Sweep(long n) {
    double s = 0;
    for (long i = 0; i < n; ++i)
      s += double(i % 7) * 0.5;
    sink = s;
  }
};

__attribute__((noinline)) void Background(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i)
    s += double(i % 5) * 0.25;
  sink = s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? std::atol(argv[1]) : 400000000L;
  int r, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Solver solver;
  for (int round = 0; round < 10; ++round) { // interleaved: interference hits both alike
    solver.Sweep(3 * n / 10);
    solver.Sweep(n / 10);
  }
  std::thread worker(Background, 2 * n);
  worker.join();
  int token = r, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (r + 1) % size, 7, &got, 1, MPI_INT, MPI_ANY_SOURCE, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
