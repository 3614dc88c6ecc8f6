// OpenMP constructs in the PSG. A parallel region is a call of its outlined
// body at the directive's line (region "parallel"), the body's records say
// which construct they are (outlined), a task is a call of its entry at the
// task directive (region "task") inside the code that creates it, and the
// loops worksharing calls start are marked (static, and dynamic, whose
// chunk loop is no vertex of its own). The `if` clause's serialized call of
// the body is the same region: no second call site. With -g clang adds a
// `_debug__` body behind each outlined entry; `scalana psg` shows the same
// graph either way, in the program's terms.
// REQUIRES: openmp, scalana-psg
// RUN: rm -f %t.O0.json %t.g.json
// RUN: env SCALANA_PSG_DUMP=%t.O0.json %scalana_cc -O0 -fopenmp %s -o %t.O0
// RUN: env SCALANA_PSG_DUMP=%t.g.json %scalana_cc -O2 -g -fopenmp %s -o %t.g
// RUN: FileCheck %s < %t.O0.json
// RUN: FileCheck %s --check-prefix=DEBUG < %t.g.json
// RUN: %scalana psg %t.O0 | FileCheck %s --check-prefix=PSG --implicit-check-not=omp_outlined
// RUN: %scalana psg %t.g | FileCheck %s --check-prefix=PSG --implicit-check-not=omp_outlined
// RUN: %scalana psg --format json %t.g | FileCheck %s --check-prefix=JSON
#include <mpi.h>

void work(double *a, int n);

static void step(double *a, int n) {
#pragma omp parallel if (n > 1)
  {
#pragma omp for
    for (int i = 0; i < n; ++i)
      a[i] += 1.0;
#pragma omp for schedule(dynamic, 4)
    for (int i = 0; i < n; ++i)
      work(a, i);
#pragma omp single
    {
#pragma omp task
      work(a, n);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

void work(double *a, int n) {
  for (int i = 0; i < n; ++i)
    a[i] *= 0.5;
}

int main(int argc, char **argv) {
  double a[64] = {0};
  MPI_Init(&argc, &argv);
  for (int it = 0; it < 3; ++it)
    step(a, 64);
#pragma omp parallel for
  for (int i = 0; i < 64; ++i)
    a[i] -= 1.0;
  MPI_Finalize();
  return a[0] > 0;
}

// Each check must stay on one line.
// clang-format off
// The region's call is the fork, at the directive (line 24); the `if`
// clause's test and its serialized call are not vertices.
// CHECK:      {"key":"{{.*}}openmp.c:step","name":"step",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1,2]}
// CHECK-NEXT: {"id":1,"kind":"call","parent":0,"line":24,{{.*}}"callee":"{{.*}}openmp.c:step.omp_outlined","region":"parallel"}
// CHECK-NEXT: {"id":2,"kind":"mpi",{{.*}}"line":38,{{.*}}"op":"MPI_Allreduce"
// The body: the `omp for` loops (their trip-count tests are not branches,
// the dynamic loop's chunk loop is not a loop of its own), `single` a branch,
// the task a call of its entry at its directive (line 34).
// CHECK-NEXT: {"key":"{{.*}}openmp.c:step.omp_outlined",{{.*}}"outlined":"parallel","vertices":[
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1,2,4]}
// CHECK-NEXT: {"id":1,"kind":"loop","parent":0,"line":26,"end_line":28,"depth":1,"worksharing":"static"}
// CHECK-NEXT: {"id":2,"kind":"loop","parent":0,"line":29,"end_line":31,"depth":1,"worksharing":"dynamic","children":[3]}
// CHECK-NEXT: {"id":3,"kind":"call","parent":2,"line":31,{{.*}}"callee":"work"}
// CHECK-NEXT: {"id":4,"kind":"branch","parent":0,"line":32,"end_line":36,"children":[5]}
// CHECK-NEXT: {"id":5,"kind":"call","parent":4,"arm":0,"line":34,{{.*}}"callee":"{{.*}}openmp.c:.omp_task_entry.","region":"task"}
// The task's entry calls its body, whose subprogram has no line: still the
// program's code, not a helper without source.
// CHECK-NEXT: {"key":"{{.*}}openmp.c:.omp_task_entry.",{{.*}}"outlined":"task","vertices":[
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"call","parent":0,"line":34,{{.*}}"callee":"{{.*}}openmp.c:.omp_outlined."}
// CHECK-NEXT: {"key":"{{.*}}openmp.c:.omp_outlined.",{{.*}}"line":35,"end_line":35,"outlined":"task","vertices":[
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"call","parent":0,"line":35,{{.*}}"callee":"work"}
// CHECK:      {"key":"main","name":"main",
// CHECK:      {"id":4,"kind":"call","parent":0,"line":51,{{.*}}"callee":"{{.*}}openmp.c:main.omp_outlined","region":"parallel"}
// CHECK:      {"key":"{{.*}}openmp.c:main.omp_outlined",{{.*}}"outlined":"parallel","vertices":[
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"loop","parent":0,"line":51,"end_line":53,"depth":1,"worksharing":"static"}]}

// With -g the entry only calls the `_debug__` body; both are the region's.
// DEBUG:      {"key":"{{.*}}openmp.c:step.omp_outlined",{{.*}}"outlined":"parallel","vertices":[
// DEBUG-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// DEBUG-NEXT: {"id":1,"kind":"call","parent":0,"line":24,{{.*}}"callee":"{{.*}}openmp.c:step.omp_outlined_debug__"}
// DEBUG-NEXT: {"key":"{{.*}}openmp.c:step.omp_outlined_debug__",{{.*}}"outlined":"parallel","vertices":[
// DEBUG-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1,2,4]}
// DEBUG-NEXT: {"id":1,"kind":"loop",{{.*}}"worksharing":"static"}

// PSG:      Root main {{.*}}openmp.c:46-55
// PSG-NEXT:   MPI MPI_Init {{.*}}openmp.c:48
// PSG-NEXT:   Loop {{.*}}openmp.c:49-50
// PSG-NEXT:     Parallel {{.*}}openmp.c:24 (in step)
// PSG-NEXT:       Loop {{.*}}openmp.c:26-28 (omp for static) (in step)
// PSG-NEXT:       Loop {{.*}}openmp.c:29-31 (omp for dynamic) (in step)
// PSG-NEXT:         Loop {{.*}}openmp.c:42-43 (in work)
// PSG-NEXT:       Branch {{.*}}openmp.c:32-36 (in step)
// PSG-NEXT:         Task {{.*}}openmp.c:34 (arm 0) (in step)
// PSG-NEXT:           Loop {{.*}}openmp.c:42-43 (in work)
// PSG-NEXT:     MPI MPI_Allreduce {{.*}}openmp.c:38 (in step)
// PSG-NEXT:   Parallel {{.*}}openmp.c:51
// PSG-NEXT:     Loop {{.*}}openmp.c:51-53 (omp for static)
// PSG-NEXT:   MPI MPI_Finalize {{.*}}openmp.c:54
// PSG-NEXT: summary: 14 vertices before contraction, 14 after; loop 6, branch 1, comp 0, mpi 3, call 0, region 3

// JSON:     "functions": [
// JSON:     "name": "step.omp_outlined",
// JSON-NEXT: "object":
// JSON-NEXT: "outlined": "parallel"
// JSON:     "summary": {
// JSON:     "region": 3,
// JSON:     "vertices": [
// JSON:     "label": "parallel region",
// JSON:     "region": "parallel"
// JSON:     "worksharing": "static"
