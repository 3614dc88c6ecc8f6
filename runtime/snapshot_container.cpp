// The node's snapshot container, RUN_DIR/snapshots-<L>.scs (docs/formats.md
// section 5, docs/runtime.md "Output"): made once per node at MPI_Init, then
// every periodic snapshot of every rank of the node is a pwrite() into the
// rank's own slots. Why: with a file per rank, each snapshot created a
// temporary and renamed it in the run directory, 10^5 metadata operations
// per interval in one directory at 10^5 ranks, which parallel file systems
// serve one at a time; a write into an open file is no metadata operation.
//
// Slots 0 and 1 alternate, so the older one is overwritten and the newer
// stays whole; a record's payload is written before its header, and both
// carry CRCs, so a rank killed mid-write leaves a record the readers reject
// and its other slot serves. Slot 2 holds the premade SIGTERM end record in
// two alternating copies of half a slot, written inactive; the SIGTERM
// handler's one action is the pwrite() of the published copy's active word
// (writer.cpp keeps the take/publish protocol around it).
#include "scalana/snapshot_container.h"
#include "config.h"
#include "runtime.h"
#include "signal_safe/write_whole.h"

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scalana::rt {

namespace {

using namespace scalana::snapshots;

std::atomic<int> g_fd{-1};         // this rank's descriptor of the container
std::atomic<bool> g_usable{false}; // false after a failed write: rank files from then on
bool g_leader = false;             // this rank made the file and removes it
char g_path[4096];
uint64_t g_slot_at[kSlots];            // offsets of this rank's slots
uint64_t g_premade_at[kPremadeCopies]; // and of its premade records' copies
uint64_t g_slot_size = 0;
uint32_t g_rank = 0;
uint64_t g_sequence = 0; // writer thread: the last snapshot's number
int g_next = 0;          // writer thread: the slot (0 or 1) of the next snapshot

// Payload, then the header that makes it valid: a record whose payload is
// cut short still has the old header, whose CRC then fails.
SlotResult WriteRecord(uint64_t at, uint64_t room, uint32_t kind, uint64_t sequence,
                       const std::string &gz, int *err) {
  *err = 0;
  int fd = g_fd.load();
  if (fd < 0 || !g_usable.load())
    return SlotResult::kNone;
  if (gz.size() > room - kRecordHeader)
    return SlotResult::kTooLarge;
  Record r;
  r.rank = g_rank;
  r.sequence = sequence;
  r.kind = kind;
  r.active = 0;
  r.length = gz.size();
  r.payload_crc = Crc(gz.data(), gz.size());
  std::string head = EncodeRecord(r);
  if (!WriteWhole(fd, gz.data(), gz.size(), int64_t(at + kRecordHeader), err) ||
      !WriteWhole(fd, head.data(), head.size(), int64_t(at), err)) {
    g_usable.store(false);
    return SlotResult::kFailed;
  }
  return SlotResult::kWritten;
}

} // namespace

void OpenSnapshotContainer() noexcept {
  if (!RuntimeActive() || config::UintValue(config::Id::Snapshot) == 0 ||
      config::Value(config::Id::SnapshotFiles) != "node")
    return; // the same on every rank: the launcher exports one environment
  int me = WorldRank();
  MPI_Comm node;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node) !=
      MPI_SUCCESS) {
    CountError("snapshot_container_open");
    return;
  }
  int index = 0, n = 1;
  PMPI_Comm_rank(node, &index);
  PMPI_Comm_size(node, &n);
  std::vector<int> ranks;
  int leader = me, ok = 0;
  try {
    ranks.resize(index == 0 ? size_t(n) : 1);
  } catch (...) {
  }
  // Every rank reaches every collective below, whatever failed before.
  PMPI_Gather(&me, 1, MPI_INT, ranks.data(), 1, MPI_INT, 0, node);
  PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
  uint64_t slot = config::UintValue(config::Id::SnapshotSlot);
  slot = slot < kMinSlot ? kMinSlot : slot > kMaxSlot ? kMaxSlot : slot;
  Header h;
  h.leader = uint32_t(leader);
  h.ranks = uint32_t(n);
  h.slot = slot;
  h.header_size = uint32_t(HeaderSize(uint64_t(n)));
  int fd = -1;
  try {
    std::string dir = ConfiguredRunDir();
    std::string path = dir + "/" + kPrefix + std::to_string(leader) + kSuffix;
    if (path.size() < sizeof g_path)
      std::memcpy(g_path, path.c_str(), path.size() + 1);
    if (index == 0 && path.size() < sizeof g_path && n > 0 && uint32_t(n) <= kMaxRanksPerNode) {
      MakeRunDirs(dir);
      h.run_id = RunId();
      for (int r : ranks)
        h.world_ranks.push_back(uint32_t(r));
      std::string head = EncodeHeader(h);
      int err = 0;
      fd = open(g_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      // Full size at once, as holes: readers then check every slot lies in
      // the file, and a cut file is recognised.
      ok = fd >= 0 && WriteWhole(fd, head.data(), head.size(), 0, &err) &&
           ftruncate(fd, off_t(FileSize(h))) == 0;
    }
  } catch (...) {
    ok = 0;
  }
  // The node's barrier: the file exists, header written, before any rank
  // of the node opens it; and whether it does.
  PMPI_Bcast(&ok, 1, MPI_INT, 0, node);
  PMPI_Comm_free(&node);
  if (ok && index != 0)
    fd = open(g_path, O_RDWR | O_CLOEXEC);
  if (!ok || fd < 0) {
    if (fd >= 0)
      close(fd);
    if (index == 0 && g_path[0])
      unlink(g_path);
    CountError("snapshot_container_open");
    return;
  }
  g_leader = index == 0;
  g_rank = uint32_t(me);
  g_slot_size = slot;
  for (uint32_t k = 0; k < kSlots; ++k)
    g_slot_at[k] = SlotOffset(h, uint64_t(index), k);
  for (uint32_t k = 0; k < kPremadeCopies; ++k)
    g_premade_at[k] = PremadeOffset(h, uint64_t(index), k);
  g_fd.store(fd);
  g_usable.store(true);
}

bool SnapshotContainerUsable() noexcept { return g_fd.load() >= 0 && g_usable.load(); }

SlotResult WriteSnapshotSlot(const std::string &gz, int *err) noexcept {
  try {
    SlotResult r = WriteRecord(g_slot_at[g_next], g_slot_size, kSnapshot, g_sequence + 1, gz, err);
    if (r == SlotResult::kWritten) {
      ++g_sequence;
      g_next = 1 - g_next;
    }
    return r;
  } catch (...) {
    return SlotResult::kFailed;
  }
}

SlotResult WritePremadeSlot(const std::string &gz, int copy, int *err) noexcept {
  try {
    return WriteRecord(g_premade_at[copy & 1], g_slot_size / 2, kPremadeEnd, g_sequence, gz, err);
  } catch (...) {
    return SlotResult::kFailed;
  }
}

bool ActivatePremadeSlot(int copy, bool active) noexcept {
  int fd = g_fd.load();
  char word[4];
  Put32(word, active ? 1 : 0);
  return fd >= 0 && pwrite(fd, word, 4, off_t(g_premade_at[copy & 1] + kActiveOffset)) == 4;
}

bool CloseSnapshotContainer(bool remove) noexcept {
  int fd = g_fd.exchange(-1);
  g_usable.store(false);
  if (fd < 0)
    return false;
  close(fd);
  // Once per node: the leader's file, after the profile holds every rank.
  if (remove && g_leader)
    unlink(g_path);
  return true;
}

} // namespace scalana::rt
