// Local PSGs of C code: loops and their depth, a branch guarding MPI, a
// branch guarding nothing structural (not a vertex), direct, indirect and
// static calls, library calls (not vertices), MPI classes, and a `break`
// arm: its code stays in the loop (natural loops leave it out) and the
// branch is read as a guard clause.
// RUN: rm -f %t.json
// RUN: env SCALANA_PSG_DUMP=%t.json %scalana_cc -O0 -c %s -o %t.o
// RUN: FileCheck %s < %t.json
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static double work(double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      s += sqrt(a[i] * j);
  return s;
}

void exchange(double *a, int n, int rank, int size) {
  MPI_Request req[2];
  MPI_Irecv(a, n, MPI_DOUBLE, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &req[0]);
  MPI_Isend(a, n, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD, &req[1]);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  double one = 1.0;
  MPI_Put(&one, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_WIN_NULL);
}

void extern_user_function(int);

int driver(double *a, int n, void (*hook)(int)) {
  int rank = 0, size = 1;
  if (n < 0) // no structure inside: straight-line code, not a branch
    n = -n;
  memset(a, 0, sizeof(double) * n);
  for (int step = 0; step < 10; ++step) {
    double s = work(a, n);
    if (s > 1.0) {
      MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else {
      hook(step);
      break;
    }
    exchange(a, n, rank, size);
    extern_user_function(step);
    printf("%g\n", s);
  }
  return 0;
}

// CHECK: "module":"{{.*}}psg-c.c"
// CHECK-SAME: "language":"c","opt_level":0
// CHECK: {"key":"{{.*}}psg-c.c:work","name":"work",{{.*}}"linkage":"internal"
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"loop","parent":0,"line":16,"end_line":18,"depth":1,"children":[2]}
// CHECK-NEXT: {"id":2,"kind":"loop","parent":1,"line":17,"end_line":18,"depth":2}]}
// CHECK-NEXT: {"key":"exchange",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1,2,3,4]}
// CHECK-NEXT: {"id":1,"kind":"mpi","parent":0,"line":24,"col":3,"op":"MPI_Irecv","class":"p2p_nonblocking"}
// CHECK-NEXT: {"id":2,"kind":"mpi","parent":0,"line":25,"col":3,"op":"MPI_Isend","class":"p2p_nonblocking"}
// CHECK-NEXT: {"id":3,"kind":"mpi","parent":0,"line":26,"col":3,"op":"MPI_Waitall","class":"completion"}
// CHECK-NEXT: {"id":4,"kind":"mpi","parent":0,"line":28,"col":3,"op":"MPI_Put","class":"one_sided"}]}
// CHECK-NEXT: {"key":"driver",
// CHECK-NEXT: {"id":0,"kind":"function",{{.*}}"children":[1]}
// CHECK-NEXT: {"id":1,"kind":"loop","parent":0,"line":38,"end_line":49,"depth":1,"children":[2,3,5,6,7]}
// CHECK-NEXT: {"id":2,"kind":"call","parent":1,"line":39,"col":16,"callee":"{{.*}}psg-c.c:work"}
// CHECK-NEXT: {"id":3,"kind":"branch","parent":1,"line":40,"end_line":44,"children":[4]}
// CHECK-NEXT: {"id":4,"kind":"call","parent":3,"arm":1,"line":43,"col":7,"indirect":true,"sig":"void (i32)"}
// CHECK-NEXT: {"id":5,"kind":"mpi","parent":1,"line":41,"col":7,"op":"MPI_Allreduce","class":"collective"}
// CHECK-NEXT: {"id":6,"kind":"call","parent":1,"line":46,"col":5,"callee":"exchange"}
// CHECK-NEXT: {"id":7,"kind":"call","parent":1,"line":47,"col":5,"callee":"extern_user_function"}]}]}
