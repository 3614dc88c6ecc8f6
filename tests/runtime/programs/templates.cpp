// Code shapes whose frames the stack does not show plainly:
//  - RAJA-style forall<Policy>(range, lambda): at -O2 every instance is
//    inlined, shares the template's lines, and debug info names each one
//    just forall<...>; only the call site tells the instances apart. The
//    heavy kernel (3x) and the light one (1x) must land on their own lambdas.
//  - Tail calls: run_heavy() and run_light() end in a jump to spin(), so
//    their frames are not on the stack; the call sites are restored from the
//    PSG (3:1 again).
//  - A wrapper whose call to MPI is a jump (exchange()): the MPI call must
//    still be attributed to its own line, reached through exchange().
#include <mpi.h>

#include <cstdlib>

namespace {

volatile double sink;

struct seq_exec {};

template <typename Policy> struct Executor {
  template <typename Body> static void Run(int n, Body &&body) {
    for (int i = 0; i < n; ++i)
      body(i);
  }
};

template <typename Policy, typename Body> void forall(int n, Body &&body) {
  Executor<Policy>::Run(n, static_cast<Body &&>(body));
}

__attribute__((noinline)) void spin(long n) {
  double x = 0;
  for (long i = 0; i < n; ++i) // @spin
    x += double(i % 5) * 0.25;
  sink = x;
}

// Tail calls: nothing after spin(), so at -O2 each is a jump.
__attribute__((noinline)) void run_heavy(long n) { spin(3 * n); } // @tail_heavy
__attribute__((noinline)) void run_light(long n) { spin(n); }     // @tail_light

double v = 1, w;
__attribute__((noinline)) void exchange() {
  MPI_Allreduce(&v, &w, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); // @allreduce
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? std::atol(argv[1]) : 8000000L;
  static double a[4096], b[4096];
  for (int round = 0; round < 10; ++round) {
    forall<seq_exec>(4096, [&](int i) { // @heavy_kernel
      double s = a[i];
      for (long k = 0; k < 3 * n / 4096; ++k) // @heavy_loop
        s = s * 0.999 + double(k & 7);
      a[i] = s;
    });
    forall<seq_exec>(4096, [&](int i) { // @light_kernel
      double s = b[i];
      for (long k = 0; k < n / 4096; ++k) // @light_loop
        s = s * 0.999 + double(k & 3);
      b[i] = s;
    });
    run_heavy(n); // @call_heavy
    run_light(n); // @call_light
    exchange();   // @exchange
  }
  sink = a[7] + b[7];
  MPI_Finalize();
  return 0;
}
