/* Attribution of inlined code: work() is small and static, so at -O2 the
 * compiler inlines it into both phase_a() (3x the work) and phase_b() (1x)
 * and no out-of-line copy is left (the test checks the binary). Its samples
 * must still land on two contexts, one per inlined call site, about 3:1. */
#include <mpi.h>
#include <stdlib.h>

static volatile double sink;

static inline void work(long n) {
  double s = 0;
  for (long i = 0; i < n; ++i) /* @work_loop */
    s += (double)(i % 7) * 0.5;
  sink = s;
}

/* noinline: the two inlined copies of work() stay in two different callers. */
__attribute__((noinline)) static void phase_a(long n) {
  work(3 * n); /* @call_a */
}

__attribute__((noinline)) static void phase_b(long n) {
  work(n); /* @call_b */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 40000000L;
  /* Interleaved rounds: interference from other jobs hits both phases alike. */
  for (int round = 0; round < 10; ++round) {
    phase_a(n); /* @phase_a */
    phase_b(n); /* @phase_b */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
