// MPI calls from several threads at once (MPI_THREAD_MULTIPLE), in rounds
// of new threads, so that later threads take over the records earlier ones
// left. Each worker accumulates into the next rank's window and flushes,
// posts receives that the main thread completes after the join (a request
// completed by another thread than the one that posted it), and sends.
// A thread_local object whose destructor makes MPI calls runs after the
// thread has given its record up. The test checks that every call is
// counted where it was made and that the runtime counted no error.
//
// usage: mpi_threads ROUNDS THREADS OPS MESSAGES
#include <mpi.h>

#include <cstdlib>
#include <thread>
#include <vector>

namespace {

int kRounds, kThreads, kOps, kMessages;
int rank, size;
MPI_Win win;

void Late() {
  double one = 1;
  int next = (rank + 1) % size;
  MPI_Accumulate(&one, 1, MPI_DOUBLE, next, 1, 1, MPI_DOUBLE, MPI_SUM, win); // @late_acc
  MPI_Win_flush(next, win);                                                  // @late_flush
}

// Made before the thread's first MPI call, so destroyed after the runtime's
// own thread_local that gives the thread's record up.
struct LateCalls {
  bool armed = false;
  ~LateCalls() {
    if (armed)
      Late();
  }
};
thread_local LateCalls late_calls;

void Worker(int id, MPI_Request *recvs, int *inbox) {
  late_calls.armed = true;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  double one = 1;
  for (int i = 0; i < kOps; ++i) {
    MPI_Accumulate(&one, 1, MPI_DOUBLE, next, id, 1, MPI_DOUBLE, MPI_SUM, win); // @thread_acc
    if (i % 100 == 99)
      MPI_Win_flush(next, win); // @thread_flush
  }
  MPI_Win_flush(next, win); // @thread_flush_end
  for (int m = 0; m < kMessages; ++m)
    MPI_Irecv(&inbox[m], 1, MPI_INT, prev, 100 + id, MPI_COMM_WORLD, &recvs[m]); // @thread_irecv
  for (int m = 0; m < kMessages; ++m)
    MPI_Send(&m, 1, MPI_INT, next, 100 + id, MPI_COMM_WORLD); // @thread_send
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE)
    MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5)
    MPI_Abort(MPI_COMM_WORLD, 2);
  kRounds = std::atoi(argv[1]);
  kThreads = std::atoi(argv[2]);
  kOps = std::atoi(argv[3]);
  kMessages = std::atoi(argv[4]);
  double *base = nullptr;
  MPI_Win_allocate(kThreads * sizeof(double) + sizeof(double), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  MPI_Win_lock_all(0, win);
  std::vector<MPI_Request> recvs(kThreads * kMessages);
  std::vector<int> inbox(kThreads * kMessages);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(Worker, t, &recvs[t * kMessages], &inbox[t * kMessages]);
    for (std::thread &t : threads)
      t.join();
    MPI_Waitall(int(recvs.size()), recvs.data(), MPI_STATUSES_IGNORE); // @main_waitall
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
