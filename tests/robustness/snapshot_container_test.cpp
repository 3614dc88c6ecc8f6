// The reader of the node snapshot containers (RUN_DIR/snapshots-<L>.scs,
// docs/formats.md section 5): the newest whole record of each rank, the
// other slot when the newest is torn, the premade end record once active,
// rank files before container data, and clear messages naming file and slot
// for truncated or corrupt containers.
#include "compress.h"
#include "reader_helpers.h"
#include "scalana/profile.h"
#include "scalana/snapshot_container.h"
#include "snapshot_read.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

namespace scalana {
namespace {

using json = nlohmann::json;
using namespace test;
namespace snap = scalana::snapshots;

constexpr uint64_t kSlot = 4096;

// A one-rank document of RANK (run RUN) with SAMPLES samples.
std::string RankDoc(int rank, const std::string &run, int samples, bool premade = false,
                    const std::function<void(json &)> &edit = {}) {
  json d = json::parse(R"({"format":"scalana-profile","version":2,
    "meta":{"complete":false,"world_size":2,"binary":"/bin/app","build_id":"ab","psg_id":"0x1",
            "args":["./app"],"mpi_library":"Open MPI","start_time":"t","wall_time":1.5,
            "sampling":{"source":"itimer-prof","hz":200,"clock":"cpu","counters":[],
                        "counters_real":false,"note":""},"config":{"SCALANA_HZ":"200"}},
    "contexts":[["0x1a40"]],"comms":[[0,1]],
    "ranks":[{"rank":0,"host":"n01","pid":1,"threads":1,"wall_time":1.4,"samples":0,
              "samples_dropped":0,"errors":{},"vertices":[[0,0,1.25,[]]],
              "mpi":[],"deps":[],"snapshot":true}]})");
  d["meta"]["run_id"] = run;
  d["ranks"][0]["rank"] = rank;
  d["ranks"][0]["samples"] = samples;
  d["ranks"][0]["vertices"][0][1] = samples;
  if (premade) {
    d["ranks"][0]["errors"]["ended_by_signal_term"] = 1;
    d["ranks"][0]["end_signal"] = 15;
  }
  if (edit)
    edit(d);
  return Gzip(d.dump());
}

// A container of ranks 0 and 1 of run RUN, built as the runtime writes one.
struct Container {
  snap::Header h;
  std::string bytes;
  explicit Container(const std::string &run = "run-a") {
    h.leader = 0;
    h.ranks = 2;
    h.slot = kSlot;
    h.run_id = run;
    h.world_ranks = {0, 1};
    h.header_size = uint32_t(snap::HeaderSize(2));
    bytes = snap::EncodeHeader(h);
    bytes.resize(snap::FileSize(h), '\0');
  }
  // The record of node index I in SLOT (for slot 2, its copy COPY):
  // payload, then header.
  void Put(uint32_t i, uint32_t slot, uint64_t seq, const std::string &payload, uint32_t active = 0,
           uint32_t copy = 0) {
    snap::Record r;
    r.rank = h.world_ranks[i];
    r.sequence = seq;
    r.kind = slot == snap::kPremadeSlot ? snap::kPremadeEnd : snap::kSnapshot;
    r.active = active;
    r.length = payload.size();
    r.payload_crc = snap::Crc(payload.data(), payload.size());
    uint64_t at = At(i, slot, copy);
    bytes.replace(at + snap::kRecordHeader, payload.size(), payload);
    bytes.replace(at, snap::kRecordHeader, snap::EncodeRecord(r));
  }
  uint64_t At(uint32_t i, uint32_t slot, uint32_t copy = 0) const {
    return slot == snap::kPremadeSlot ? snap::PremadeOffset(h, i, copy)
                                      : snap::SlotOffset(h, i, slot);
  }
};

// Snapshots of both ranks: seq 1 (10 samples) in slot 0, seq 2 (20) in slot 1.
Container TwoSnapshots(const std::string &run = "run-a") {
  Container c(run);
  for (uint32_t i = 0; i < 2; ++i) {
    c.Put(i, 0, 1, RankDoc(int(i), run, 10));
    c.Put(i, 1, 2, RankDoc(int(i), run, 20));
  }
  return c;
}

const RankData &Rank(const Profile &p, int r) {
  for (const RankData &d : p.ranks)
    if (d.rank == r)
      return d;
  throw Error("no rank " + std::to_string(r));
}

std::string Joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const std::string &l : lines)
    s += l + "\n";
  return s;
}

TEST(SnapshotContainer, NewestWholeSnapshotOfEachRank) {
  TempDir d;
  WriteFile(d / "snapshots-0.scs", TwoSnapshots().bytes);
  Profile p = ReadProfile(d.path);
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_FALSE(p.meta.complete);
  EXPECT_EQ(Rank(p, 0).samples, 20u);
  EXPECT_EQ(Rank(p, 1).samples, 20u);
  EXPECT_TRUE(Rank(p, 1).snapshot);
  EXPECT_TRUE(p.skipped.empty()) << Joined(p.skipped);
}

TEST(SnapshotContainer, TornSlotFallsBackToTheOtherSlot) {
  TempDir d;
  Container c = TwoSnapshots();
  // Rank 1's newest payload cut short by a kill mid-write: its bytes changed
  // after the header was written for the old ones.
  c.bytes[c.At(1, 1) + snap::kRecordHeader + 30] ^= 0x5a;
  // Rank 0's newest header torn.
  c.bytes[c.At(0, 1) + 9] ^= 0x01;
  WriteFile(d / "snapshots-0.scs", c.bytes);
  Profile p = ReadProfile(d.path);
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(Rank(p, 0).samples, 10u);
  EXPECT_EQ(Rank(p, 1).samples, 10u);
  ASSERT_EQ(p.skipped.size(), 2u) << Joined(p.skipped);
  std::string all = Joined(p.skipped);
  EXPECT_HAS(all, d / "snapshots-0.scs" + ": slot 1 of rank 1 (node index 1): payload CRC "
                                          "mismatch (torn write or corrupt); skipped");
  EXPECT_HAS(all, d / "snapshots-0.scs" + ": slot 1 of rank 0 (node index 0): record header "
                                          "CRC mismatch");
  // The reports say so.
  EXPECT_HAS(Joined(DescribeRankEnds(p)), "slot 1 of rank 1 (node index 1): payload CRC");
}

TEST(SnapshotContainer, ActivePremadeRecordCarriesTheEnd) {
  TempDir d;
  Container c = TwoSnapshots();
  c.Put(0, snap::kPremadeSlot, 2, RankDoc(0, "run-a", 20, true), 0); // never activated
  c.Put(1, snap::kPremadeSlot, 1, RankDoc(1, "run-a", 10, true), 0, 1);
  // The SIGTERM handler's one write: the active word of the published copy.
  c.bytes[c.At(1, snap::kPremadeSlot, 1) + snap::kActiveOffset] = 1;
  WriteFile(d / "snapshots-0.scs", c.bytes);
  Profile p = ReadProfile(d.path);
  EXPECT_EQ(Rank(p, 0).errors.count("ended_by_signal_term"), 0u);
  EXPECT_EQ(Rank(p, 1).errors.at("ended_by_signal_term"), 1u);
  EXPECT_EQ(Rank(p, 1).end_signal, 15);
  EXPECT_HAS(DescribeRankEnd(Rank(p, 1)), "SIGTERM");
  EXPECT_EQ(Rank(p, 1).samples, 10u); // the premade record, not the newer snapshot
  EXPECT_TRUE(p.skipped.empty()) << Joined(p.skipped);
  // Both copies active (a stale one not yet cleared): the newer serves; a
  // torn active copy falls back to the other.
  c.Put(1, snap::kPremadeSlot, 2, RankDoc(1, "run-a", 20, true), 1, 0);
  WriteFile(d / "snapshots-0.scs", c.bytes);
  EXPECT_EQ(Rank(ReadProfile(d.path), 1).samples, 20u);
  c.bytes[c.At(1, snap::kPremadeSlot, 0) + snap::kRecordHeader + 40] ^= 0x33;
  WriteFile(d / "snapshots-0.scs", c.bytes);
  Profile q = ReadProfile(d.path);
  EXPECT_EQ(Rank(q, 1).samples, 10u);
  EXPECT_EQ(Rank(q, 1).errors.at("ended_by_signal_term"), 1u);
  EXPECT_HAS(Joined(q.skipped), "slot 2 (copy 0) of rank 1 (node index 1): payload CRC mismatch");
}

TEST(SnapshotContainer, RankFileWinsOverContainerData) {
  TempDir d;
  WriteFile(d / "snapshots-0.scs", TwoSnapshots().bytes);
  json end = json::parse(detail::Gunzip(RankDoc(1, "run-a", 99), "x"));
  end["ranks"][0].erase("snapshot");
  end["ranks"][0]["errors"]["ended_by_MPI_Abort"] = 1;
  WriteFile(d / "rank-1.json.gz", Gzip(end.dump()));
  Profile p = ReadProfile(d.path);
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(Rank(p, 1).samples, 99u);
  EXPECT_FALSE(Rank(p, 1).snapshot);
  EXPECT_EQ(Rank(p, 0).samples, 20u);
}

TEST(SnapshotContainer, TruncatedContainersAreRefusedByName) {
  TempDir d;
  std::string path = d / "snapshots-0.scs";
  std::string bytes = TwoSnapshots().bytes;
  WriteFile(path, bytes.substr(0, 50));
  EXPECT_HAS(ReadError(d.path), path + ": truncated: 50 bytes, shorter than the header (104); "
                                       "not a usable snapshot container, skipped");
  WriteFile(path, bytes.substr(0, 4096 + 3 * kSlot));
  EXPECT_HAS(ReadError(d.path), path + ": truncated: 16384 bytes, shorter than 2 ranks x 3 "
                                       "slots of 4096 bytes");
  // Beside readable rank files: the run reads, the container is named as skipped.
  WriteFile(d / "rank-0.json.gz", RankDoc(0, "run-a", 5));
  Profile p = ReadProfile(d.path);
  EXPECT_EQ(p.ranks.size(), 1u);
  EXPECT_HAS(Joined(p.skipped), path + ": truncated");
}

TEST(SnapshotContainer, CorruptHeadersAreRefusedClearly) {
  auto error_of = [](const std::string &bytes) {
    detail::ReadAt read = [&](uint64_t at, uint64_t n, std::string *out) {
      if (at > bytes.size() || n > bytes.size() - at)
        return false;
      *out = bytes.substr(at, n);
      return true;
    };
    try {
      detail::ParseSnapshotContainer(read, bytes.size(), "c.scs");
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Container good = TwoSnapshots();
  EXPECT_EQ(error_of(good.bytes), "");
  std::string b = good.bytes;
  b[0] = 'X';
  EXPECT_HAS(error_of(b), "c.scs: bad magic");
  b = good.bytes;
  b[snap::kHeaderFixed + 4] = 7; // rank 1 -> 7: the header CRC fails
  EXPECT_HAS(error_of(b), "c.scs: header CRC mismatch (corrupt)");
  // Sizes that cannot be: each refused before anything is read from them.
  auto with = [&](void (*edit)(snap::Header &)) {
    snap::Header h = good.h;
    edit(h);
    std::string head = snap::EncodeHeader(h);
    // EncodeHeader makes header_size right: put the edited one back.
    snap::Put32(&head[12], h.header_size);
    return head + good.bytes.substr(std::min<size_t>(head.size(), good.bytes.size()));
  };
  EXPECT_HAS(error_of(with([](snap::Header &h) { h.slot = 10; })), "c.scs: slot size 10");
  EXPECT_HAS(error_of(with([](snap::Header &h) { h.slot = uint64_t(1) << 40; })),
             "slot size 1099511627776");
  EXPECT_HAS(error_of(with([](snap::Header &h) {
               h.ranks = 0;
               h.world_ranks.clear();
             })),
             "header says 0 ranks on the node");
  EXPECT_HAS(error_of(with([](snap::Header &h) { h.header_size = 8192; })), "header size 8192");
  // 1000 ranks x 3 slots x 1 GiB: far more than the file.
  EXPECT_HAS(error_of(with([](snap::Header &h) {
               h.ranks = 1000;
               h.slot = uint64_t(1) << 30;
               h.world_ranks.clear();
               for (uint32_t r = 0; r < 1000; ++r)
                 h.world_ranks.push_back(r);
               h.header_size = uint32_t(snap::HeaderSize(1000));
             })),
             "shorter than 1000 ranks x 3 slots of 1073741824 bytes");
  EXPECT_HAS(error_of(with([](snap::Header &h) {
               h.world_ranks = {1, 0};
             })),
             "rank table: index 0 holds rank 1");
  EXPECT_HAS(error_of(with([](snap::Header &h) { h.version = 9; })), "version 9");
}

TEST(SnapshotContainer, RecordsThatDoNotFitOrLieAreSkipped) {
  TempDir d;
  Container c = TwoSnapshots();
  // Rank 1's slot 1 claims rank 0; its slot 0 claims a payload past the slot.
  c.Put(1, 1, 3, RankDoc(1, "run-a", 30));
  snap::Put32(&c.bytes[c.At(1, 1) + 4], 0);
  snap::Put32(&c.bytes[c.At(1, 1) + 36], snap::RecordHeaderCrc(&c.bytes[c.At(1, 1)]));
  snap::Put64(&c.bytes[c.At(1, 0) + 24], kSlot);
  snap::Put32(&c.bytes[c.At(1, 0) + 36], snap::RecordHeaderCrc(&c.bytes[c.At(1, 0)]));
  WriteFile(d / "snapshots-0.scs", c.bytes);
  Profile p = ReadProfile(d.path);
  ASSERT_EQ(p.ranks.size(), 1u); // rank 1 has nothing usable left
  std::string all = Joined(p.skipped);
  EXPECT_HAS(all, "slot 1 of rank 1 (node index 1): holds rank 0, not rank 1 of the header");
  EXPECT_HAS(all, "slot 0 of rank 1 (node index 1): payload length 4096 does not fit the slot");
  EXPECT_HAS(Joined(DescribeRankEnds(p)), "rank 1 left no data");
}

TEST(SnapshotContainer, RecordsWithImpossibleNumbersAreSkippedNamingTheField) {
  // Rank 1's newest record claims 1e8 s of CPU time in 1.4 s (its CRCs right).
  TempDir d;
  Container c = TwoSnapshots();
  c.Put(1, 1, 3, RankDoc(1, "run-a", 30, false, [](json &doc) {
          doc["ranks"][0]["cpu_time"] = 1e8;
        }));
  WriteFile(d / "snapshots-0.scs", c.bytes);
  Profile p = ReadProfile(d.path);
  EXPECT_EQ(Rank(p, 1).samples, 10u); // the other slot's record
  EXPECT_HAS(Joined(p.skipped), d / "snapshots-0.scs" +
                                    " (rank 1, slot 1): ranks[0].cpu_time 1e+08 s of CPU time "
                                    "is more than its threads could use");
  EXPECT_HAS(Joined(p.skipped), "impossible for rank 1;");
  // Both records lie: the rank has no data, and the reader says why.
  c.Put(1, 0, 1, RankDoc(1, "run-a", 10, false, [](json &doc) {
          doc["ranks"][0]["mpi"] = json::array({json::array({0, UINT64_MAX, 0.1, 0})});
        }));
  WriteFile(d / "snapshots-0.scs", c.bytes);
  Profile q = ReadProfile(d.path);
  EXPECT_EQ(q.ranks.size(), 1u);
  EXPECT_HAS(Joined(q.skipped), " (rank 1, slot 0): ranks[0].mpi[0][1] (calls, with the rows "
                                "before it) 1.84467e+19 MPI calls");
}

TEST(SnapshotContainer, AnotherRunsContainerIsSkipped) {
  TempDir d;
  WriteFile(d / ".scalana-job", "job-1\nrun run-b\n");
  WriteFile(d / "snapshots-0.scs", TwoSnapshots("run-a").bytes);
  WriteFile(d / "rank-0.json.gz", RankDoc(0, "run-b", 5));
  Profile p = ReadProfile(d.path);
  EXPECT_EQ(p.ranks.size(), 1u);
  EXPECT_HAS(Joined(p.skipped), d / "snapshots-0.scs" + ": of run run-a, not run run-b that "
                                                        ".scalana-job names");
  // A record whose document names another run than its container's.
  TempDir e;
  Container c = TwoSnapshots();
  c.Put(0, 1, 2, RankDoc(0, "run-z", 20));
  WriteFile(e / "snapshots-0.scs", c.bytes);
  Profile q = ReadProfile(e.path);
  EXPECT_EQ(Rank(q, 0).samples, 10u);
  EXPECT_HAS(Joined(q.skipped), "(rank 0, slot 1): of run run-z, not the container's run run-a");
}

} // namespace
} // namespace scalana
