#include "shard_mpi.h"

#include "scalana/profile.h"

// The C API only: no C++ bindings to link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>

namespace scalana {

namespace {
// MPI counts are ints: pieces of 1 GiB.
constexpr size_t kPiece = size_t(1) << 30;

// Waits for REQ without spinning: the processes share the cores with each
// other (K above the core count is usual), and a process spinning in MPI
// while it waits for another takes that one's CPU time.
void Wait(MPI_Request *req) {
  int done = 0;
  for (long ns = 1000;; ns = std::min(ns * 2, 2000000L)) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    timespec t{0, ns};
    nanosleep(&t, nullptr);
  }
}
} // namespace

std::unique_ptr<MpiShards> MpiShards::Start(int *argc, char ***argv) {
  const char *n = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!n || std::atoi(n) <= 1)
    return nullptr;
  std::unique_ptr<MpiShards> s(new MpiShards());
  MPI_Init(argc, argv);
  // Errors end the process here with the message of Error, not MPI's own.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &s->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &s->size_);
  return s;
}

MpiShards::~MpiShards() { MPI_Finalize(); }

// Moves BYTES in pieces of at most kPiece: POST(offset, size, &request)
// starts one piece, which is waited for before the next; WHAT names the
// direction in the error.
template <typename Post> void InPieces(size_t bytes, const std::string &what, Post post) {
  size_t done = 0;
  do {
    size_t n = std::min(bytes - done, kPiece);
    MPI_Request req;
    if (post(done, int(n), &req) != MPI_SUCCESS)
      throw Error("sharded analysis: " + what + " failed");
    Wait(&req);
    done += n;
  } while (done < bytes);
}

void MpiShards::Send(int peer, const void *data, size_t bytes) {
  const char *p = static_cast<const char *>(data);
  InPieces(bytes, "sending to analysis process " + std::to_string(peer),
           [&](size_t at, int n, MPI_Request *req) {
             return MPI_Isend(p + at, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, req);
           });
}

void MpiShards::Recv(int peer, void *data, size_t bytes) {
  char *p = static_cast<char *>(data);
  InPieces(bytes, "receiving from analysis process " + std::to_string(peer),
           [&](size_t at, int n, MPI_Request *req) {
             return MPI_Irecv(p + at, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, req);
           });
}

void MpiShards::Abort(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

} // namespace scalana
