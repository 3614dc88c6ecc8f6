// Recognition of MPI entry points by symbol name, for C and Fortran callers.
// Kept apart from the pass so the table reads as a table.
#pragma once

#include "scalana/psg_format.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace scalana {

// The C spelling of the MPI operation a symbol calls, or nullopt when the
// symbol is not an MPI entry point. Accepts `MPI_Send`, `PMPI_Send` and the
// Fortran symbols `mpi_send_`, `mpi_send__`, `mpi_send_f08_`, `pmpi_send_`;
// also OpenSHMEM's `shmem_*`, `pshmem_*` and `start_pes` (communication
// vertices too: Open MPI's oshmem runs on MPI).
std::optional<std::string> MpiOperationOfSymbol(llvm::StringRef symbol);

// Class of an MPI operation in C spelling (`MPI_Isend` -> P2PNonBlocking).
// Operations missing from the table are `Other` (init, comm management, ...).
MpiClass ClassifyMpiOperation(llvm::StringRef op);

} // namespace scalana
