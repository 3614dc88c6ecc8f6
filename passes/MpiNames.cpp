#include "MpiNames.h"

#include "llvm/ADT/StringMap.h"

#include <cctype>

namespace scalana {
namespace {

struct MpiClassEntry {
  const char *op;
  MpiClass cls;
};

// Operations by class; anything else named MPI_* is `Other`.
constexpr MpiClassEntry kMpiClasses[] = {
    // Point-to-point, blocking (Probe/Mprobe block until a message is there).
    {"MPI_Send", MpiClass::P2PBlocking},
    {"MPI_Recv", MpiClass::P2PBlocking},
    {"MPI_Ssend", MpiClass::P2PBlocking},
    {"MPI_Bsend", MpiClass::P2PBlocking},
    {"MPI_Rsend", MpiClass::P2PBlocking},
    {"MPI_Sendrecv", MpiClass::P2PBlocking},
    {"MPI_Sendrecv_replace", MpiClass::P2PBlocking},
    {"MPI_Probe", MpiClass::P2PBlocking},
    {"MPI_Mprobe", MpiClass::P2PBlocking},
    {"MPI_Mrecv", MpiClass::P2PBlocking},
    // Point-to-point, non-blocking and persistent.
    {"MPI_Isend", MpiClass::P2PNonBlocking},
    {"MPI_Irecv", MpiClass::P2PNonBlocking},
    {"MPI_Issend", MpiClass::P2PNonBlocking},
    {"MPI_Ibsend", MpiClass::P2PNonBlocking},
    {"MPI_Irsend", MpiClass::P2PNonBlocking},
    {"MPI_Iprobe", MpiClass::P2PNonBlocking},
    {"MPI_Improbe", MpiClass::P2PNonBlocking},
    {"MPI_Imrecv", MpiClass::P2PNonBlocking},
    {"MPI_Send_init", MpiClass::P2PNonBlocking},
    {"MPI_Recv_init", MpiClass::P2PNonBlocking},
    {"MPI_Ssend_init", MpiClass::P2PNonBlocking},
    {"MPI_Bsend_init", MpiClass::P2PNonBlocking},
    {"MPI_Rsend_init", MpiClass::P2PNonBlocking},
    {"MPI_Start", MpiClass::P2PNonBlocking},
    {"MPI_Startall", MpiClass::P2PNonBlocking},
    // Completion.
    {"MPI_Wait", MpiClass::Completion},
    {"MPI_Waitall", MpiClass::Completion},
    {"MPI_Waitany", MpiClass::Completion},
    {"MPI_Waitsome", MpiClass::Completion},
    {"MPI_Test", MpiClass::Completion},
    {"MPI_Testall", MpiClass::Completion},
    {"MPI_Testany", MpiClass::Completion},
    {"MPI_Testsome", MpiClass::Completion},
    // Collectives, blocking and non-blocking.
    {"MPI_Barrier", MpiClass::Collective},
    {"MPI_Bcast", MpiClass::Collective},
    {"MPI_Gather", MpiClass::Collective},
    {"MPI_Gatherv", MpiClass::Collective},
    {"MPI_Scatter", MpiClass::Collective},
    {"MPI_Scatterv", MpiClass::Collective},
    {"MPI_Allgather", MpiClass::Collective},
    {"MPI_Allgatherv", MpiClass::Collective},
    {"MPI_Alltoall", MpiClass::Collective},
    {"MPI_Alltoallv", MpiClass::Collective},
    {"MPI_Alltoallw", MpiClass::Collective},
    {"MPI_Reduce", MpiClass::Collective},
    {"MPI_Allreduce", MpiClass::Collective},
    {"MPI_Reduce_scatter", MpiClass::Collective},
    {"MPI_Reduce_scatter_block", MpiClass::Collective},
    {"MPI_Scan", MpiClass::Collective},
    {"MPI_Exscan", MpiClass::Collective},
    {"MPI_Neighbor_allgather", MpiClass::Collective},
    {"MPI_Neighbor_allgatherv", MpiClass::Collective},
    {"MPI_Neighbor_alltoall", MpiClass::Collective},
    {"MPI_Neighbor_alltoallv", MpiClass::Collective},
    {"MPI_Neighbor_alltoallw", MpiClass::Collective},
    {"MPI_Ibarrier", MpiClass::Collective},
    {"MPI_Ibcast", MpiClass::Collective},
    {"MPI_Igather", MpiClass::Collective},
    {"MPI_Igatherv", MpiClass::Collective},
    {"MPI_Iscatter", MpiClass::Collective},
    {"MPI_Iscatterv", MpiClass::Collective},
    {"MPI_Iallgather", MpiClass::Collective},
    {"MPI_Iallgatherv", MpiClass::Collective},
    {"MPI_Ialltoall", MpiClass::Collective},
    {"MPI_Ialltoallv", MpiClass::Collective},
    {"MPI_Ialltoallw", MpiClass::Collective},
    {"MPI_Ireduce", MpiClass::Collective},
    {"MPI_Iallreduce", MpiClass::Collective},
    {"MPI_Ireduce_scatter", MpiClass::Collective},
    {"MPI_Ireduce_scatter_block", MpiClass::Collective},
    {"MPI_Iscan", MpiClass::Collective},
    {"MPI_Iexscan", MpiClass::Collective},
    {"MPI_Ineighbor_allgather", MpiClass::Collective},
    {"MPI_Ineighbor_allgatherv", MpiClass::Collective},
    {"MPI_Ineighbor_alltoall", MpiClass::Collective},
    {"MPI_Ineighbor_alltoallv", MpiClass::Collective},
    {"MPI_Ineighbor_alltoallw", MpiClass::Collective},
    // MPI-IO collectives, over the file's communicator.
    {"MPI_File_open", MpiClass::Collective},
    {"MPI_File_close", MpiClass::Collective},
    {"MPI_File_write_all", MpiClass::Collective},
    {"MPI_File_write_at_all", MpiClass::Collective},
    {"MPI_File_write_ordered", MpiClass::Collective},
    {"MPI_File_read_all", MpiClass::Collective},
    {"MPI_File_read_at_all", MpiClass::Collective},
    {"MPI_File_read_ordered", MpiClass::Collective},
    {"MPI_File_set_view", MpiClass::Collective},
    {"MPI_File_set_size", MpiClass::Collective},
    {"MPI_File_preallocate", MpiClass::Collective},
    {"MPI_File_sync", MpiClass::Collective},
    // One-sided: communication and synchronisation.
    {"MPI_Put", MpiClass::OneSided},
    {"MPI_Get", MpiClass::OneSided},
    {"MPI_Accumulate", MpiClass::OneSided},
    {"MPI_Get_accumulate", MpiClass::OneSided},
    {"MPI_Fetch_and_op", MpiClass::OneSided},
    {"MPI_Compare_and_swap", MpiClass::OneSided},
    {"MPI_Rput", MpiClass::OneSided},
    {"MPI_Rget", MpiClass::OneSided},
    {"MPI_Raccumulate", MpiClass::OneSided},
    {"MPI_Rget_accumulate", MpiClass::OneSided},
    {"MPI_Win_fence", MpiClass::OneSided},
    {"MPI_Win_start", MpiClass::OneSided},
    {"MPI_Win_complete", MpiClass::OneSided},
    {"MPI_Win_post", MpiClass::OneSided},
    {"MPI_Win_wait", MpiClass::OneSided},
    {"MPI_Win_test", MpiClass::OneSided},
    {"MPI_Win_lock", MpiClass::OneSided},
    {"MPI_Win_unlock", MpiClass::OneSided},
    {"MPI_Win_lock_all", MpiClass::OneSided},
    {"MPI_Win_unlock_all", MpiClass::OneSided},
    {"MPI_Win_flush", MpiClass::OneSided},
    {"MPI_Win_flush_all", MpiClass::OneSided},
    {"MPI_Win_flush_local", MpiClass::OneSided},
    {"MPI_Win_flush_local_all", MpiClass::OneSided},
    {"MPI_Win_sync", MpiClass::OneSided},
};

const llvm::StringMap<MpiClass> &ClassTable() {
  static const llvm::StringMap<MpiClass> table = [] {
    llvm::StringMap<MpiClass> t;
    for (const auto &e : kMpiClasses)
      t[e.op] = e.cls;
    return t;
  }();
  return table;
}

// `send` -> `MPI_Send`: the C spelling capitalises the first letter only.
std::string CSpellingOfLowerCase(llvm::StringRef rest) {
  std::string op = "MPI_" + rest.lower();
  op[4] = static_cast<char>(std::toupper(static_cast<unsigned char>(op[4])));
  return op;
}

bool IsIdentifierTail(llvm::StringRef s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

// OpenSHMEM (C): shmem_*, the profiling pshmem_* and the old start_pes,
// named by their C spelling. They are communication like MPI's one-sided
// operations: computation time sampled inside them is waiting.
std::optional<std::string> ShmemOperationOfSymbol(llvm::StringRef s) {
  if (s == "start_pes")
    return s.str();
  if (!s.consume_front("shmem_") && !s.consume_front("pshmem_"))
    return std::nullopt;
  if (!IsIdentifierTail(s) || s.lower() != s)
    return std::nullopt;
  return "shmem_" + s.str();
}

MpiClass ClassifyShmemOperation(llvm::StringRef op) {
  // Start-up, shut-down and the queries (bale's MYTHREAD and THREADS are
  // shmem_my_pe and shmem_n_pes, called in hot loops): no other PE takes
  // part, as MPI_Comm_rank.
  for (const char *c : {"start_pes", "shmem_init", "shmem_init_thread", "shmem_finalize",
                        "shmem_global_exit", "shmem_my_pe", "shmem_n_pes", "shmem_pe_accessible",
                        "shmem_addr_accessible", "shmem_ptr", "shmem_info_get_version",
                        "shmem_info_get_name", "shmem_query_thread"})
    if (op == c)
      return MpiClass::Other;
  // Barriers, syncs and collectives synchronise every PE (or an active set);
  // so do the symmetric heap's allocations, which end in a barrier.
  for (const char *c : {"barrier", "sync", "broadcast", "collect", "fcollect", "alltoall",
                        "_to_all", "reduce", "shmem_malloc", "shmem_calloc", "shmem_align",
                        "shmem_realloc", "shmem_free"})
    if (op.contains(c))
      return MpiClass::Collective;
  // quiet/fence complete what was issued, wait_until/test poll a location.
  for (const char *c : {"quiet", "fence", "wait", "test"})
    if (op.contains(c))
      return MpiClass::Completion;
  return MpiClass::OneSided; // put, get, p, g, atomics, *_nbi
}

} // namespace

std::optional<std::string> MpiOperationOfSymbol(llvm::StringRef symbol) {
  llvm::StringRef s = symbol;
  if (auto op = ShmemOperationOfSymbol(s))
    return op;
  // C: MPI_Xxx / PMPI_Xxx (the letter after the prefix is upper case).
  if (s.consume_front("MPI_") || s.consume_front("PMPI_")) {
    if (!IsIdentifierTail(s) || !std::isupper(static_cast<unsigned char>(s[0])))
      return std::nullopt;
    return "MPI_" + s.str();
  }
  // Fortran: mpi_xxx_, mpi_xxx__, mpi_xxx_f08_, pmpi_xxx_ (all lower case).
  if (s.consume_front("mpi_") || s.consume_front("pmpi_")) {
    if (!s.consume_back("_"))
      return std::nullopt;
    if (!s.consume_back("_f08"))
      s.consume_back("_");
    if (!IsIdentifierTail(s) || s.lower() != s)
      return std::nullopt;
    return CSpellingOfLowerCase(s);
  }
  return std::nullopt;
}

MpiClass ClassifyMpiOperation(llvm::StringRef op) {
  if (op.starts_with("shmem_") || op == "start_pes")
    return ClassifyShmemOperation(op);
  auto it = ClassTable().find(op);
  return it == ClassTable().end() ? MpiClass::Other : it->second;
}

} // namespace scalana
