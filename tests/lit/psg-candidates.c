// Indirect calls and their candidate targets (docs/formats.md section 2,
// `candidates`): the functions of the module whose address is taken, of the
// call's function type, sorted by key. Not candidates: functions of another
// type, functions only called directly, functions only handed to library
// code (atexit), and every function once more than 32 match. The same at
// -O0 and -O2. psg-candidates.test: `scalana psg` shows them.
// RUN: rm -f %t.json %t.O0.json
// RUN: env SCALANA_PSG_DUMP=%t.json %scalana_cc -O2 %s -o %t
// RUN: FileCheck %s --check-prefix=RECORD < %t.json
// RUN: env SCALANA_PSG_DUMP=%t.O0.json %scalana_cc -O0 -c %s -o %t.O0.o
// RUN: sed 's/"opt_level":[0-9]/"opt_level":N/' %t.json > %t.O2.norm
// RUN: sed 's/"opt_level":[0-9]/"opt_level":N/' %t.O0.json > %t.O0.norm
// RUN: diff %t.O0.norm %t.O2.norm
#include <mpi.h>
#include <stdlib.h>

typedef double (*kernel_fn)(double *, int);

static double jacobi(double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += a[i];
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}
static double gauss_seidel(double *a, int n) { return a[0] * n; }
static double direct_only(double *a, int n) { return a[n - 1]; }
static void progress(int step, double r) { (void)step, (void)r; }
static void finish(void) {}
static void cleanup(void) {}

// 33 functions of one type in a table: too many to be worth listing.
static int sink;
#define F(n) static void many##n(int x) { sink += x * n; }
#define F8(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7)
F8(1) F8(2) F8(3) F8(4) F(50)
#define T8(n) many##n##0, many##n##1, many##n##2, many##n##3, many##n##4, many##n##5, \
              many##n##6, many##n##7
static void (*const table[])(int) = {T8(1), T8(2), T8(3), T8(4), many50};

struct solver {
  kernel_fn kernel;
  void (*on_step)(int, double);
  void (*done)(void);
};

int main(int argc, char **argv) {
  double a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  struct solver s = {argc > 1 ? gauss_seidel : jacobi, progress, finish};
  MPI_Init(&argc, &argv);
  atexit(cleanup);
  double r = s.kernel(a, 8) + direct_only(a, 8);
  table[argc % 33](1);
  s.on_step(2, r);
  s.done();
  MPI_Finalize();
  return r < 0;
}

// RECORD: "key":"main"
// RECORD: "kind":"call",{{.*}}"line":52,"col":14,"indirect":true,"candidates":["{{[^"]*}}psg-candidates.c:gauss_seidel","{{[^"]*}}psg-candidates.c:jacobi"],"sig":"double (ptr, i32)"}
// RECORD-NEXT: "kind":"call",{{.*}}"line":52,"col":31,"callee":"{{[^"]*}}psg-candidates.c:direct_only"}
// RECORD-NEXT: "kind":"call",{{.*}}"line":53,"col":3,"indirect":true,"sig":"void (i32)"}
// RECORD-NEXT: "kind":"call",{{.*}}"line":54,"col":3,"indirect":true,"candidates":["{{[^"]*}}psg-candidates.c:progress"],"sig":"void (i32, double)"}
// RECORD-NEXT: "kind":"call",{{.*}}"line":55,"col":3,"indirect":true,"candidates":["{{[^"]*}}psg-candidates.c:finish"],"sig":"void ()"}
