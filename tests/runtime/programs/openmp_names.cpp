/* A loop in the body of a C++ function's parallel region: the outlined
 * body's symbol is mangled with a clone suffix
 * ("_ZN7physics5RelaxEl.omp_outlined_debug__"), as in LULESH. `scalana
 * show` names it as C++ does, demangled. */
#include <mpi.h>
#include <stdlib.h>

static volatile double sink;

namespace physics {
__attribute__((noinline)) void Relax(long n) {
#pragma omp parallel num_threads(2)
  {
    double s = 0;
    for (long i = 0; i < n; ++i) /* @body_loop */
      s += (double)(i % 5);
    sink = s;
  }
}
} // namespace physics

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  for (int k = 0; k < 10; ++k)
    physics::Relax(n);
  MPI_Finalize();
  return 0;
}
