// Synthetic profiles of the 3-D halo program (halo3d.c) at any number of
// ranks, made from a real profile of it at a few ranks (its contexts, frames
// and modules) and written group by group as profile format 3, so the
// generator holds one group at a time however many ranks.
#pragma once

#include "scalana/profile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace scalana::bench {

// What the generator takes from the template profile: the contexts the
// rows go on, found by what they resolve to in the program's PSG.
struct Template {
  Profile profile;                 // its meta, contexts and modules (rows dropped)
  std::vector<uint32_t> compute;   // loops of Relax and Source: every rank
  std::vector<double> compute_cpu; // their CPU seconds on the template's rank 0
  std::vector<uint32_t> boundary;  // loops of Boundary: ranks on the x = 0 face
  uint32_t source = 0;             // the loop marked ROOT CAUSE
  uint32_t irecv = 0, isend = 0, waitall = 0, plane_allreduce = 0, world_allreduce = 0;
  std::vector<MpiRow> other_mpi; // MPI_Init, MPI_Comm_split, ... as rank 0 had them
  int iterations = 0;            // messages per channel
};

// Reads RUN_DIR (halo3d profiled at a few ranks) and the contexts of
// BINARY's PSG. Throws Error when a context the generator needs is missing.
Template ReadTemplate(const std::string &run_dir, const std::string &binary);

struct Layout {
  int nx = 0, ny = 0, nz = 0; // periodic in x and y, not in z
  std::vector<int> culprits;  // ranks made slow in the ROOT CAUSE loop
};
Layout MakeLayout(int ranks);

// Writes RUN_DIR/profile.scalana for RANKS ranks, GROUP ranks a block;
// returns the bytes written.
uint64_t WriteRun(const Template &t, const Layout &l, int ranks, const std::string &run_dir,
                  uint32_t group = 128);

} // namespace scalana::bench
