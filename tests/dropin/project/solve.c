#include <mpi.h>

double solve(int rank, int n) {
  double s = 0;
  int i, it;
  for (it = 0; it < 3; ++it) {
    for (i = 0; i < n; ++i)
      s += (rank + 1) * 0.5 * i;
    exchange(&s);
  }
  return s;
}
