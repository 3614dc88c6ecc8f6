// Attribution across C++ control flow: a hot loop reached through a virtual
// call, an exception thrown through a frame of its own and caught, an MPI call
// in the handler, then a second hot loop after the catch (2x the virtual
// call's work). Unwinding an exception must not disturb the attribution of
// what follows.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace {
volatile double sink;
}

struct Kernel {
  virtual ~Kernel() = default;
  virtual void Run(long n) = 0;
};

struct Spin : Kernel {
  __attribute__((noinline)) void Run(long n) override {
    double s = 0;
    for (long i = 0; i < n; ++i) // @virtual_loop
      s += double(i % 7) * 0.5;
    sink = s;
  }
};

struct Idle : Kernel {
  void Run(long) override {}
};

__attribute__((noinline)) void Fail(int round) {
  if (round >= 0)
    throw std::runtime_error("round failed");
}

__attribute__((noinline)) void AfterCatch(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) // @after_loop
    s += double(i % 5) * 0.25;
  sink = s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = 600000000L;
  // The dynamic type depends on the input, so the call stays virtual.
  std::unique_ptr<Kernel> k(argc > 5 ? static_cast<Kernel *>(new Idle) : new Spin);
  int caught = 0;
  for (int round = 0; round < 10; ++round) { // interleaved: interference hits both alike
    try {
      k->Run(n / 10); // @virtual_call
      Fail(round);
    } catch (const std::runtime_error &) {
      ++caught;
      MPI_Barrier(MPI_COMM_WORLD); // @in_handler
    }
    AfterCatch(2 * n / 10); // @after_call
  }
  MPI_Finalize();
  if (caught != 10) {
    std::fprintf(stderr, "caught %d exceptions, expected 10\n", caught);
    return 1;
  }
  return 0;
}
