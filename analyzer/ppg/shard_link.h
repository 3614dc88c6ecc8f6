// The channel between the processes of a sharded analysis (`mpirun -np K
// scalana detect`, docs/detect.md section 9): each reads a share of every
// run's groups and process 0 gathers what they built. An interface, so the
// analysis library does not link MPI: the command implements it over MPI
// (tools/detect/shard_mpi.cpp), only when started by mpirun.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace scalana {

class ShardLink {
public:
  virtual ~ShardLink() = default;
  virtual int rank() const = 0; // this process's share, 0 to size() - 1
  virtual int size() const = 0;
  // BYTES bytes to or from process PEER, in order; any length (the link cuts
  // it into pieces MPI can count). Blocking.
  virtual void Send(int peer, const void *data, size_t bytes) = 0;
  virtual void Recv(int peer, void *data, size_t bytes) = 0;

  // A length-prefixed byte string.
  void SendString(int peer, const std::string &s) {
    uint64_t n = s.size();
    Send(peer, &n, sizeof n);
    Send(peer, s.data(), s.size());
  }
  std::string RecvString(int peer) {
    uint64_t n = 0;
    Recv(peer, &n, sizeof n);
    std::string s(size_t(n), '\0');
    Recv(peer, s.data(), s.size());
    return s;
  }
  // Process 0's S to every other (S is set on them).
  void Broadcast(std::string &s) {
    if (rank() == 0)
      for (int p = 1; p < size(); ++p)
        SendString(p, s);
    else
      s = RecvString(0);
  }
  // The elements of V from FIRST on, as raw bytes (trivially copyable T).
  template <class T> void SendTail(int peer, const std::vector<T> &v, size_t first = 0) {
    uint64_t n = v.size() > first ? v.size() - first : 0;
    Send(peer, &n, sizeof n);
    if (n)
      Send(peer, v.data() + first, size_t(n) * sizeof(T));
  }
  // Appends what SendTail sent to V; returns where it starts.
  template <class T> size_t RecvAppend(int peer, std::vector<T> &v) {
    uint64_t n = 0;
    Recv(peer, &n, sizeof n);
    size_t at = v.size();
    v.resize(at + size_t(n));
    if (n)
      Recv(peer, v.data() + at, size_t(n) * sizeof(T));
    return at;
  }
};

} // namespace scalana
