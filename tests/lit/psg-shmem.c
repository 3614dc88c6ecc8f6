// OpenSHMEM calls are communication vertices named by their C spelling
// (pshmem_* as shmem_*), classed like MPI's: puts, gets and atomics
// one-sided, quiet completion, barriers, reductions and the symmetric heap's
// allocations collective, init, finalize and the queries (bale's MYTHREAD
// and THREADS) other. Declared here, so the test needs no OpenSHMEM headers.
// RUN: rm -f %t.json
// RUN: env SCALANA_PSG_DUMP=%t.json %scalana_cc -O0 -c %s -o %t.o
// RUN: FileCheck %s < %t.json
void shmem_init(void);
void shmem_finalize(void);
int shmem_my_pe(void);
int shmem_n_pes(void);
void *shmem_malloc(unsigned long size);
void shmem_free(void *p);
void shmem_long_atomic_add(long *dest, long value, int pe);
long shmem_long_g(const long *src, int pe);
void pshmem_quiet(void);
void shmem_barrier_all(void);
void shmem_long_sum_to_all(long *dest, const long *src, int n, int start, int stride, int size,
                           long *work, long *sync);

long table[64];

void kernel(int npes, long *work, long *sync) {
  shmem_init();
  long *heap = shmem_malloc(64 * sizeof(long));
  long got = shmem_my_pe() < shmem_n_pes();
  for (int i = 0; i < 64; ++i) {
    shmem_long_atomic_add(&table[i], 1, i % npes);
    got += shmem_long_g(&table[i], (i + 1) % npes);
  }
  pshmem_quiet();
  shmem_barrier_all();
  shmem_long_sum_to_all(&got, &got, 1, 0, 0, npes, work, sync);
  shmem_free(heap);
  shmem_finalize();
}

// CHECK: {"key":"kernel",
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_init","class":"other"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_malloc","class":"collective"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_my_pe","class":"other"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_n_pes","class":"other"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_long_atomic_add","class":"one_sided"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_long_g","class":"one_sided"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_quiet","class":"completion"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_barrier_all","class":"collective"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_long_sum_to_all","class":"collective"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_free","class":"collective"}
// CHECK: "kind":"mpi",{{.*}}"op":"shmem_finalize","class":"other"}
