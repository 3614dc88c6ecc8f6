// The processes of `mpirun -np K scalana detect` (docs/detect.md section 9):
// a ShardLink over MPI. MPI is started only when Open MPI's launcher says
// there are several processes, so a plain `scalana detect` never starts it
// (a singleton MPI_Init is slow, and needs no MPI at all).
#pragma once

#include "ppg/shard_link.h"

#include <memory>
#include <string>

namespace scalana {

class MpiShards : public ShardLink {
public:
  // Null unless started by mpirun with more than one process; then MPI is
  // started and the link is process RANK of SIZE.
  static std::unique_ptr<MpiShards> Start(int *argc, char ***argv);
  ~MpiShards() override; // MPI_Finalize
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Send(int peer, const void *data, size_t bytes) override;
  void Recv(int peer, void *data, size_t bytes) override;
  // Ends every process (MPI_Abort) with STATUS, after this one printed why.
  [[noreturn]] void Abort(int status);

private:
  MpiShards() = default;
  int rank_ = 0, size_ = 1;
};

} // namespace scalana
