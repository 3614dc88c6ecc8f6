// The collective write of RUN_DIR/profile.scalana at MPI_Finalize (format 3,
// docs/formats.md section 4; docs/runtime.md, "Output").
//
// Why: rank 0 gathering every rank's document holds the whole job's data
// and spends time in p on it, and MPI_Gatherv's int counts and displacements
// overflow past 2 GiB. Here groups of GROUP consecutive ranks each send their
// documents to the group's lowest rank (its leader), which merges and
// encodes one block; the leaders place their blocks by a prefix sum of
// their lengths and write them, with their index entries, in one MPI-IO
// collective. No rank holds more than one group's data, and every step
// beyond the group is a collective of log p rounds.
//
// Every rank enters every collective below, even one whose own part failed:
// failures are agreed on (Agree) and the whole job then falls back together.
#include "final_profile.h"
#include "runtime.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

namespace scalana::rt {

namespace {

constexpr uint64_t kHeader = container::kHeaderBytes; // the meta follows it
constexpr uint64_t kWriteChunk = uint64_t(1) << 30;   // bytes per write call

int WorldSize() {
  int n = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

std::string MpiError(const char *what, int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    len = 0;
  return std::string(what) + " failed: " + std::string(text, size_t(len));
}

// Whether every rank's step went well, in one MPI_Allreduce. A rank's MINE
// is non-empty on failure; on return *WHY is the lowest failing rank's
// reason, the same everywhere. *MAX_VALUE, when given, gets the largest
// VALUE over the ranks (folded in here to save a collective).
bool Agree(const std::string &mine, std::string *why, uint64_t value = 0,
           uint64_t *max_value = nullptr) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  // The lowest failing rank has the largest key.
  uint64_t in[2] = {mine.empty() ? 0 : uint64_t(size - rank), value}, out[2] = {0, 0};
  if (PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
    *why = "MPI_Allreduce failed";
    return false;
  }
  if (max_value)
    *max_value = out[1];
  if (!out[0])
    return true;
  int failed = size - int(out[0]);
  std::string text = rank == failed ? mine : std::string();
  int len = int(std::min<size_t>(text.size(), 400));
  PMPI_Bcast(&len, 1, MPI_INT, failed, MPI_COMM_WORLD);
  text.resize(size_t(len));
  PMPI_Bcast(text.data(), len, MPI_CHAR, failed, MPI_COMM_WORLD);
  *why = (failed ? "rank " + std::to_string(failed) + ": " : std::string()) + text;
  return false;
}

// The members' documents on the group's leader (rank 0 of G), in rank
// order; nothing elsewhere. Sizes travel as 64-bit integers; the bytes in
// rounds where each member sends at most INT_MAX / (group size) bytes, so a
// round's counts and displacements, ints in MPI_Gatherv, cannot overflow.
std::string GatherGroup(const std::string &text, MPI_Comm g, std::vector<std::string> *docs) {
  int gr = 0, gs = 1;
  PMPI_Comm_rank(g, &gr);
  PMPI_Comm_size(g, &gs);
  uint64_t len = text.size(), longest = 0;
  std::vector<uint64_t> lens(gr == 0 ? size_t(gs) : 0);
  if (PMPI_Gather(&len, 1, MPI_UINT64_T, lens.data(), 1, MPI_UINT64_T, 0, g) != MPI_SUCCESS ||
      PMPI_Allreduce(&len, &longest, 1, MPI_UINT64_T, MPI_MAX, g) != MPI_SUCCESS)
    return "gathering the group's sizes failed";
  const uint64_t piece = uint64_t(INT_MAX) / uint64_t(gs);
  const uint64_t rounds = (longest + piece - 1) / piece;
  std::vector<int> counts, displs;
  std::vector<char> buf;
  std::string error;
  if (gr == 0) {
    try {
      docs->assign(size_t(gs), std::string());
      for (int i = 0; i < gs; ++i)
        (*docs)[size_t(i)].reserve(lens[size_t(i)]);
      counts.assign(size_t(gs), 0);
      displs.assign(size_t(gs), 0);
    } catch (...) {
      error = "out of memory for the group's documents";
    }
  }
  for (uint64_t k = 0; k < rounds; ++k) {
    const uint64_t from = k * piece;
    int mine = from < len ? int(std::min(piece, len - from)) : 0;
    if (gr == 0 && error.empty()) {
      long total = 0;
      for (int i = 0; i < gs; ++i) {
        uint64_t l = lens[size_t(i)];
        counts[size_t(i)] = l > from ? int(std::min(piece, l - from)) : 0;
        displs[size_t(i)] = int(total);
        total += counts[size_t(i)];
      }
      try {
        buf.resize(size_t(total) + 1);
      } catch (...) {
        error = "out of memory for the group's documents";
      }
    }
    if (gr == 0 && !error.empty()) // still takes part, receiving nothing
      std::fill(counts.begin(), counts.end(), 0);
    if (PMPI_Gatherv(text.data() + std::min(from, len), mine, MPI_CHAR, buf.data(), counts.data(),
                     displs.data(), MPI_CHAR, 0, g) != MPI_SUCCESS)
      return "gathering the group's documents failed";
    if (gr == 0 && error.empty())
      for (int i = 0; i < gs; ++i)
        (*docs)[size_t(i)].append(buf.data() + displs[size_t(i)], size_t(counts[size_t(i)]));
  }
  return error;
}

// What a leader makes of its group: the block, and the parts of the run's
// totals it knows.
struct GroupResult {
  std::string block;
  container::Codec codec = container::Codec::JsonGzip;
  ProfileMeta meta; // rank 0: the run's meta section comes from its group
  FinalTotals totals;
};

// The group's documents parsed and merged (as the gather does for the whole
// job), with MISSING ranks of the run counted on group 0's first rank, as
// the gather counts them on the first rank it has.
std::string MergeGroup(std::vector<std::string> &docs, int first_rank, int *missing,
                       Profile *merged) {
  try {
    std::vector<Profile> parts;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (docs[i].empty()) {
        ++*missing;
        continue;
      }
      try {
        parts.push_back(ProfileFromJson(docs[i], "rank " + std::to_string(first_rank + int(i))));
      } catch (const std::exception &) {
        ++*missing;
      }
      std::string().swap(docs[i]);
    }
    *merged = MergeProfiles(std::move(parts));
    return "";
  } catch (const std::exception &e) {
    return std::string("merging the group failed: ") + e.what();
  }
}

// One rank's writes into the open file. OUT goes at OFFSET (may be empty);
// ROUNDS collective writes of at most 1 GiB each, so int counts hold.
std::string WriteAll(MPI_File fh, uint64_t offset, const std::string &out, uint64_t rounds) {
  const uint64_t chunk = kWriteChunk;
  std::string error;
  for (uint64_t k = 0; k < rounds; ++k) {
    uint64_t from = std::min<uint64_t>(k * chunk, out.size());
    int n = int(std::min<uint64_t>(chunk, out.size() - from));
    MPI_Status st;
    int rc =
        PMPI_File_write_at_all(fh, MPI_Offset(offset + from), out.data() + from, n, MPI_BYTE, &st);
    int got = 0;
    if (rc != MPI_SUCCESS) {
      if (error.empty())
        error = MpiError("MPI_File_write_at_all", rc);
    } else if (n > 0 && (PMPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS || got != n)) {
      if (error.empty())
        error = "MPI_File_write_at_all wrote " + std::to_string(got) + " of " + std::to_string(n) +
                " bytes";
    }
  }
  return error;
}

} // namespace

bool WriteProfileCollective(const std::string &text, unsigned long group_ranks,
                            std::string *why) noexcept {
  const int rank = WorldRank(), size = WorldSize();
  const uint64_t gsize = group_ranks;
  const int group = int(uint64_t(rank) / gsize);
  const bool leader = uint64_t(rank) % gsize == 0;
  const uint64_t groups = (uint64_t(size) + gsize - 1) / gsize;
  std::string mine, dir, partial, final_path;
  try {
    dir = FinalRunDir();
    final_path = dir + "/" + container::kFileName;
    partial = final_path + container::kPartialSuffix;
  } catch (const std::exception &e) {
    mine = e.what();
  }

  // The group's communicator, made here from the PMPI layer: the program
  // never sees it. Among leaders, collectives over MPI_COMM_WORLD where the
  // others add 0 serve: a second split would cost another allgather over
  // the whole job.
  MPI_Comm gcomm = MPI_COMM_NULL;
  if (PMPI_Comm_split(MPI_COMM_WORLD, group, rank, &gcomm) != MPI_SUCCESS) {
    *why = "MPI_Comm_split failed";
    return false;
  }
  auto free_comms = [&] {
    if (gcomm != MPI_COMM_NULL)
      PMPI_Comm_free(&gcomm);
  };

  // 1. Documents to the leaders, merged there; the run's missing ranks.
  std::vector<std::string> docs;
  std::string gathered = GatherGroup(text, gcomm, &docs);
  if (mine.empty())
    mine = gathered;
  int missing = 0, run_missing = 0;
  Profile merged;
  if (leader && mine.empty())
    mine = MergeGroup(docs, rank, &missing, &merged);
  std::vector<std::string>().swap(docs);
  free_comms(); // the group's part is done
  PMPI_Allreduce(&missing, &run_missing, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  // 2. Blocks and the meta section encoded.
  GroupResult res;
  std::string meta_bytes;
  if (leader && mine.empty()) {
    try {
      merged.meta.complete = run_missing == 0;
      merged.meta.world_size = size;
      if (rank == 0 && run_missing && !merged.ranks.empty())
        merged.ranks[0].errors["ranks_missing"] += uint64_t(run_missing);
      res.totals = TotalsOf(merged);
      res.block = EncodeBlockForFile(merged, &res.codec);
      if (rank == 0)
        meta_bytes = EncodeMetaForFile(merged.meta);
    } catch (const std::exception &e) {
      mine = std::string("encoding the group's block failed: ") + e.what();
    }
  }
  merged = Profile();
  // A partial file of an earlier attempt goes before anyone opens the name
  // (the agreement below orders the two); a directory there stays and makes
  // the open fail.
  if (rank == 0 && mine.empty())
    unlink(partial.c_str());
  // Writes of at most 1 GiB, so that int counts hold: as many rounds as the
  // largest piece any rank writes needs (rank 0's has the header and meta).
  uint64_t piece = leader ? res.block.size() + (rank == 0 ? kHeader + meta_bytes.size() : 0) : 0;
  uint64_t longest = 0;
  if (!Agree(mine, why, piece, &longest)) {
    free_comms();
    return false;
  }
  const uint64_t rounds = std::max<uint64_t>(1, (longest + kWriteChunk - 1) / kWriteChunk);

  // 3. Where everything goes: blocks in group order after the meta section,
  // the index after the last block. Ranks that are not leaders add 0.
  uint64_t contrib = leader ? res.block.size() + meta_bytes.size() : 0, before = 0;
  uint64_t sums[4] = {contrib, res.totals.samples, res.totals.dropped, res.totals.errors};
  uint64_t total[4] = {0, 0, 0, 0};
  PMPI_Exscan(&contrib, &before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    before = 0; // Exscan leaves the first one's undefined
  PMPI_Allreduce(sums, total, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const uint64_t index_offset = kHeader + total[0];
  std::string out; // this rank's bytes at OUT_AT: rank 0 header + meta + block
  uint64_t out_at = 0;
  std::string entry;
  try {
    if (leader) {
      container::GroupEntry e;
      e.first_rank = uint64_t(rank);
      e.rank_count = uint32_t(std::min<uint64_t>(gsize, uint64_t(size) - uint64_t(rank)));
      e.codec = res.codec;
      e.offset = kHeader + before + meta_bytes.size();
      e.length = res.block.size();
      e.crc32 = container::Crc32(res.block.data(), res.block.size());
      entry = container::EncodeGroupEntry(e);
      out_at = rank == 0 ? 0 : e.offset;
      if (rank == 0) {
        container::Header h;
        h.world_size = uint64_t(size);
        h.meta_offset = kHeader;
        h.meta_length = meta_bytes.size();
        h.index_offset = index_offset;
        h.group_count = groups;
        out = container::EncodeHeader(h) + meta_bytes;
        std::string().swap(meta_bytes);
      }
      out += res.block;
      std::string().swap(res.block);
    }
  } catch (const std::exception &e) {
    mine = e.what(); // agreed on with the open's outcome
  }

  // 4. The file, written by everyone in two collectives: the blocks (rank
  // 0's with the header and meta before it), then the index entries.
  MPI_File fh = MPI_FILE_NULL;
  int rc = PMPI_File_open(MPI_COMM_WORLD, partial.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh);
  if (rc != MPI_SUCCESS) {
    if (mine.empty())
      mine = MpiError(("MPI_File_open of " + partial).c_str(), rc);
    fh = MPI_FILE_NULL;
  }
  if (!Agree(mine, why)) {
    // Hazard: MPI_File_close is collective, so an open that failed on some
    // ranks only (not seen here: the causes met, a directory or a
    // permission in the way, fail alike everywhere) leaves the ranks whose
    // open worked waiting for the others here.
    if (fh != MPI_FILE_NULL)
      PMPI_File_close(&fh);
    if (rank == 0) // made by the ranks whose open worked, if any
      unlink(partial.c_str());
    free_comms();
    return false;
  }
  // The file is new (rank 0 removed any earlier one) and the writes below
  // cover every byte of it, so its size needs no MPI_File_set_size.
  std::string werr = WriteAll(fh, out_at, out, rounds);
  std::string().swap(out);
  if (mine.empty())
    mine = werr;
  werr = WriteAll(fh, index_offset + uint64_t(group) * container::kIndexEntryBytes,
                  leader ? entry : std::string(), 1);
  if (mine.empty())
    mine = werr;
  if ((rc = PMPI_File_close(&fh)) != MPI_SUCCESS && mine.empty())
    mine = MpiError("MPI_File_close", rc);
  free_comms();
  if (!Agree(mine, why)) {
    if (rank == 0)
      unlink(partial.c_str());
    return false;
  }

  // 5. In place, under its final name, only once every byte is written.
  if (rank == 0 && rename(partial.c_str(), final_path.c_str()) != 0) {
    mine = "renaming " + partial + ": " + std::strerror(errno);
    unlink(partial.c_str());
  }
  if (!Agree(mine, why))
    return false;
  if (rank == 0) {
    FinalTotals t{total[1], total[2], total[3]};
    PrintFinalSummary(final_path, size, t, run_missing);
  }
  return true;
}

} // namespace scalana::rt
