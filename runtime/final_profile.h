// The complete profile at MPI_Finalize (docs/runtime.md, "Output"): the
// collective write of RUN_DIR/profile.scalana (collective_write.cpp) and,
// when it cannot be done or SCALANA_WRITE_GROUP is 0, rank 0's gather into
// RUN_DIR/profile.json.gz (output.cpp). Both are collectives over
// MPI_COMM_WORLD that every rank enters, its own document empty when it
// could not build one, and return the same answer on every rank.
#pragma once

#include "scalana/container_format.h"
#include "scalana/profile.h"

#include <cstdint>
#include <string>

namespace scalana::rt {

// The run directory of this job, made if missing.
std::string FinalRunDir();

// Totals of a merged profile for the one summary line at finalize.
struct FinalTotals {
  uint64_t samples = 0, dropped = 0, errors = 0; // errors: failures, not facts
};
FinalTotals TotalsOf(const Profile &p);
// The summary line, printed by rank 0 when verbose or when something went
// wrong: "scalana: wrote DIR/FILE: N ranks, ...".
void PrintFinalSummary(const std::string &file, int size, const FinalTotals &t, int missing);

// Rank 0 gathers every rank's JSON TEXT and writes profile.json.gz (format
// 2). True, on every rank, when the file is written.
bool GatherProfileJson(const std::string &text) noexcept;

// Groups of GROUP consecutive ranks write RUN_DIR/profile.scalana with
// MPI-IO (format 3). True, on every rank, when the file is in place; false
// with *WHY saying what failed (the same on every rank), and no file left.
bool WriteProfileCollective(const std::string &text, unsigned long group,
                            std::string *why) noexcept;

// One group's block and the run's meta section, as the collective writer
// puts them in the file (group_block.cpp).
std::string EncodeBlockForFile(const Profile &group, container::Codec *codec);
std::string EncodeMetaForFile(const ProfileMeta &meta);

} // namespace scalana::rt
