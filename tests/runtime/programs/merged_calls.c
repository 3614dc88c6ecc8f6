/* Calls the compiler merged: Step() calls Sweep() in both arms of an `if`
 * with other arguments, and at -O2 clang sinks the two calls into one
 * call instruction whose line is 0 (Zeus-MP's avisc_d calls bvalv2 so,
 * bale's porter_push porter_try_send). The return address names no line:
 * the frame of Step matched no call vertex and was dropped, so every
 * sample of Sweep's loop fell in a context that does not fit the PSG. It
 * must stay in the loop, under Step's first call of Sweep (the test checks
 * the binary has one call). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double Sweep(int a, int b, long n) {
  double s = 0.0;
  for (long i = 0; i < n; ++i) /* @sweep_loop */
    s += (double)(i ^ a) * 1e-9 + b;
  return s;
}

__attribute__((noinline)) static double Step(int odd, long n) {
  double s;
  if (odd)
    s = Sweep(1, 2, n); /* @call_odd */
  else
    s = Sweep(3, 4, n); /* @call_even */
  return s * 0.5 + odd; /* not a tail call */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 200000L;
  double t = 0.0;
  for (int k = 0; k < 2000; ++k)
    t += Step(k & 1, n); /* @call_step */
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  printf("merged_calls: %g\n", t);
  MPI_Finalize();
  return 0;
}
