// The readers of untrusted files: profiles (numbers checked against each
// other, bounded inflation, clear messages), special files (FIFOs, devices,
// link loops, sparse giants), per-rank files of different runs, the ELF
// section reader, source snippets and the escaping of control characters.
#include "ppg/ppg.h"
#include "reader_helpers.h"
#include "report/report.h"
#include "scalana/elf_section.h"
#include "scalana/profile.h"
#include "scalana/text_escape.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace scalana {
namespace {

using json = nlohmann::json;
using namespace test;
namespace fs = std::filesystem;

// A small valid document: 2 ranks, one communicator, rows of every kind.
json Doc() {
  return json::parse(R"({"format":"scalana-profile","version":2,
    "meta":{"complete":true,"world_size":2,"binary":"/bin/app","build_id":"ab","psg_id":"0x1",
            "args":["./app"],"mpi_library":"Open MPI","start_time":"t","wall_time":1.5,
            "sampling":{"source":"itimer-prof","hz":200,"clock":"cpu","counters":["C"],
                        "counters_real":true,"note":""},"config":{"SCALANA_HZ":"200"}},
    "contexts":[["0x1a40","0x1c3b"],[]],
    "comms":[[0,1]],
    "ranks":[{"rank":0,"host":"n01","pid":1,"threads":1,"wall_time":1.4,"samples":280,
              "samples_dropped":0,"errors":{},"vertices":[[0,250,1.25,[1000]]],
              "mpi":[[0,10,0.5,4096]],"deps":[[0,"send",1,7,0,10,4096,0.0]]},
             {"rank":1,"host":"n02","pid":2,"threads":1,"wall_time":1.4,"samples":270,
              "samples_dropped":0,"errors":{},"vertices":[[1,3,0.01,[]]],
              "mpi":[],"deps":[[0,"recv",0,7,0,10,4096,0.25]]}]})");
}

// The message ProfileFromJson gives for DOC, or "" when it accepts it.
std::string ErrorOf(const json &doc) { return ErrorOfText(doc.dump()); }

// --- item 4: numbers are checked against each other ----------------------

TEST(RobustProfile, TheSampleDocumentIsValid) {
  EXPECT_EQ(ErrorOf(Doc()), "");
  json d = Doc();
  d["contexts"][1] = json::array(); // no program frame on the stack: valid
  d.erase("comms");
  EXPECT_HAS(ErrorOf(d), "p.json: comms is missing");
}

TEST(RobustProfile, HugeWorldSizeIsRefusedBeforeAnyAllocation) {
  json d = Doc();
  d["meta"]["world_size"] = 100000000;
  EXPECT_HAS(ErrorOf(d), "p.json: meta.world_size 100000000 is larger than 4194304, the most "
                         "ranks a profile may hold");
  d["meta"]["world_size"] = -4;
  EXPECT_HAS(ErrorOf(d), "meta.world_size -4 is negative");
  d["meta"]["world_size"] = 2.5;
  EXPECT_HAS(ErrorOf(d), "meta.world_size is not an integer (2.5)");
}

TEST(RobustProfile, RankBeyondWorldSizeIsRefused) {
  json d = Doc();
  d["ranks"][1]["rank"] = 5;
  EXPECT_HAS(ErrorOf(d), "ranks[1].rank 5 is not below meta.world_size 2: rank ids run from 0 to "
                         "world_size-1");
  d = Doc();
  d["ranks"][1]["rank"] = 0;
  EXPECT_HAS(ErrorOf(d), "ranks[1].rank 0 appears twice (also in ranks[0])");
  d = Doc();
  d["ranks"][0]["deps"][0][2] = 2;
  EXPECT_HAS(ErrorOf(d), "ranks[0].deps[0][2] (peer) 2 is not below meta.world_size 2");
  d = Doc();
  d["comms"][0][1] = 9;
  EXPECT_HAS(ErrorOf(d), "comms[0][1] (world rank) 9 is not below meta.world_size 2");
}

TEST(RobustProfile, NegativeAndFractionalCountsAreRefused) {
  json d = Doc();
  d["ranks"][0]["vertices"][0][1] = -3;
  EXPECT_HAS(ErrorOf(d), "ranks[0].vertices[0][1] (samples) -3 is negative");
  d = Doc();
  d["ranks"][0]["samples"] = -1;
  EXPECT_HAS(ErrorOf(d), "ranks[0].samples -1 is negative");
  d = Doc();
  d["ranks"][0]["mpi"][0][1] = 1e300;
  EXPECT_HAS(ErrorOf(d), "ranks[0].mpi[0][1] (calls) is not an integer (1e+300)");
  d = Doc();
  d["ranks"][0]["errors"]["x"] = -2;
  EXPECT_HAS(ErrorOf(d), "ranks[0].errors.x -2 is negative");
}

TEST(RobustProfile, RatesAndTimesMustBeFiniteAndSane) {
  json d = Doc();
  d["meta"]["sampling"]["hz"] = 1e-300;
  EXPECT_HAS(ErrorOf(d), "meta.sampling.hz 1e-300 is not a sampling rate (0 for none, or 1 to "
                         "1e+06 Hz)");
  d["meta"]["sampling"]["hz"] = 0; // no sampling: valid
  EXPECT_EQ(ErrorOf(d), "");
  d = Doc();
  d["ranks"][0]["deps"][0][7] = -0.5;
  EXPECT_HAS(ErrorOf(d), "ranks[0].deps[0][7] (wait seconds) -0.5 is negative");
  d = Doc();
  d["meta"]["wall_time"] = 1e30;
  EXPECT_HAS(ErrorOf(d), "meta.wall_time 1e+30 is larger than 1e+09");
  // JSON has no infinity; 1e400 overflows the parser's double.
  std::string text = Doc().dump();
  text.replace(text.find("\"wall_time\":1.5"), 15, "\"wall_time\":1e400");
  try {
    ProfileFromJson(text, "p.json");
    ADD_FAILURE() << "1e400 accepted";
  } catch (const Error &e) {
    EXPECT_HAS(e.what(), "p.json:");
  }
}

TEST(RobustProfile, RowShapesAndIndicesAreChecked) {
  json d = Doc();
  d["ranks"][0]["vertices"][0][3] = json::array({1, 2});
  EXPECT_HAS(ErrorOf(d), "ranks[0].vertices[0][3] (counters) has 2 values for the 1 counters");
  d = Doc();
  d["ranks"][0]["vertices"][0] = json::array({0, 1});
  EXPECT_HAS(ErrorOf(d), "ranks[0].vertices[0] has 2 elements, expected 4");
  d = Doc();
  d["ranks"][0]["deps"][0][4] = 3;
  EXPECT_HAS(ErrorOf(d), "communicator index 3 out of range (1 communicators)");
  d = Doc();
  d["ranks"][0]["mpi"][0][0] = 2;
  EXPECT_HAS(ErrorOf(d), "ranks[0].mpi[0][0] (context): context index 2 out of range (2 contexts)");
  d = Doc();
  d["contexts"][0] = json::array();
  for (int i = 0; i < 1025; ++i)
    d["contexts"][0].push_back("0x1");
  EXPECT_HAS(ErrorOf(d), "contexts[0] has 1025 frames, more than 1024");
  d = Doc();
  d["meta"]["sampling"]["counters"] = json::array();
  for (int i = 0; i < 65; ++i)
    d["meta"]["sampling"]["counters"].push_back("C" + std::to_string(i));
  EXPECT_HAS(ErrorOf(d), "meta.sampling.counters lists 65 counters, more than 64");
  d = Doc();
  d["version"] = 1;
  EXPECT_HAS(ErrorOf(d), "profile version 1 is not supported (expected 2)");
}

TEST(RobustProfile, WhatTheReaderAcceptsTheWriterWritesBack) {
  Profile p = ProfileFromJson(Doc().dump(), "p.json");
  std::string text = ProfileToJson(p);
  EXPECT_EQ(ProfileToJson(ProfileFromJson(text, "again")), text);
}

TEST(RobustProfile, BuildRunRefusesRanksOutsideTheWorld) {
  Profile p = ProfileFromJson(Doc().dump(), "p.json");
  p.ranks[1].rank = 5; // made in memory, past the reader
  Psg psg;
  try {
    BuildRun(psg, p, "run");
    ADD_FAILURE() << "rank 5 of 2 accepted";
  } catch (const Error &e) {
    EXPECT_HAS(e.what(), "run: rank 5 is outside the run (2 ranks)");
  }
}

// --- item 8: what is wrong with the bytes ---------------------------------

TEST(RobustGzip, EachKindOfBadDataHasItsOwnMessage) {
  auto error = [](const std::string &bytes) {
    try {
      ProfileFromGzip(bytes, "f.gz");
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string text = Doc().dump(), gz = Gzip(text);
  EXPECT_EQ(error(gz), "");
  size_t half = text.size() / 2; // concatenated members, as gzip allows
  EXPECT_EQ(error(Gzip(text.substr(0, half)) + Gzip(text.substr(half))), "");
  EXPECT_HAS(error(""), "f.gz: empty file");
  EXPECT_HAS(error(Gzip(text, MAX_WBITS)), "f.gz: zlib data, not gzip");
  EXPECT_HAS(error(text), "f.gz: not gzip data: uncompressed JSON?");
  EXPECT_HAS(error("PK\3\4zip"), "f.gz: not gzip data (no 1f 8b magic bytes at the start)");
  EXPECT_HAS(error(gz.substr(0, gz.size() / 2)), "f.gz: truncated gzip data");
  std::string corrupt = gz;
  for (size_t i = 20; i < 40; ++i)
    corrupt[i] = char(~corrupt[i]);
  EXPECT_HAS(error(corrupt), "f.gz: corrupt gzip data (");
  EXPECT_HAS(error(gz + "junk"), "f.gz: 4 bytes of other data after the gzip data");
  EXPECT_HAS(error(Gzip("{\"format\": ")), "f.gz: not valid JSON");
}

TEST(RobustGzip, BombsStopAtTheInflationLimit) {
  // 64 MiB of spaces: about 64 KB of gzip, allowed 16 MiB (the floor).
  std::string bomb = Gzip(std::string(size_t(64) << 20, ' '));
  ASSERT_LT(bomb.size(), size_t(256) << 10);
  auto start = std::chrono::steady_clock::now();
  try {
    ProfileFromGzip(bomb, "bomb.gz");
    ADD_FAILURE() << "bomb accepted";
  } catch (const Error &e) {
    EXPECT_HAS(e.what(), "bomb.gz: inflates to more than 16 MiB (a profile may inflate to 64 "
                         "times its compressed size, to at least 16 MiB and at most 1 GiB)");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// --- items 5 and 8: special files and links --------------------------------

TEST(RobustFiles, FifoAsProfileIsAnErrorNotAHang) {
  TempDir d;
  ASSERT_EQ(mkfifo((d / "profile.json.gz").c_str(), 0600), 0);
  EXPECT_HAS(ReadError(d.path),
             d / "profile.json.gz" + ": cannot read: not a regular file (a FIFO)");
  TempDir r;
  ASSERT_EQ(mkfifo((r / "rank-0.json.gz").c_str(), 0600), 0);
  EXPECT_HAS(ReadError(r.path),
             r / "rank-0.json.gz" + ": cannot read: not a regular file (a FIFO)");
}

TEST(RobustFiles, DevicesAndDirectoriesAreNotProfiles) {
  TempDir d;
  fs::create_symlink("/dev/zero", d / "profile.json.gz");
  EXPECT_HAS(ReadError(d.path), "profile.json.gz: cannot read: not a regular file (a character "
                                "device)");
  EXPECT_HAS(ReadError("/dev/urandom"), "/dev/urandom: cannot read: not a regular file (a "
                                        "character device)");
  TempDir e;
  fs::create_directory(e / "profile.json.gz");
  EXPECT_HAS(ReadError(e.path), "not a regular file (a directory)");
}

TEST(RobustFiles, LinkLoopsAndDanglingLinksSayWhatTheyAre) {
  TempDir d;
  fs::create_symlink(d / "profile.json.gz", d / "profile.json.gz");
  EXPECT_HAS(ReadError(d.path), "profile.json.gz: cannot read: symbolic link loop");
  TempDir e;
  fs::create_symlink(e / "gone", e / "profile.json.gz");
  EXPECT_HAS(ReadError(e.path), "profile.json.gz: cannot read: No such file or directory");
  TempDir f;
  fs::create_symlink(f / "run", f / "run");
  EXPECT_HAS(ReadError(f / "run"), f / "run" + ": symbolic link loop (the run directory is a link "
                                               "that leads back to itself)");
  fs::create_symlink(f / "nowhere", f / "run2");
  EXPECT_HAS(ReadError(f / "run2"), "symbolic link to a missing run directory");
  EXPECT_HAS(ReadError(f / "none"), "no such run directory");
}

// --- item 6: rank files of different runs ---------------------------------

// Writes DOC's ranks as per-rank files of DIR, after EDIT changes each.
template <typename Edit> void WriteRankFiles(const TempDir &dir, Edit edit) {
  for (int r = 0; r < 2; ++r) {
    json d = Doc();
    d["meta"]["complete"] = false;
    d["ranks"] = json::array({Doc()["ranks"][r]});
    edit(r, d);
    WriteFile(dir / ("rank-" + std::to_string(r) + ".json.gz"), Gzip(d.dump()));
  }
}

TEST(RobustRankFiles, FilesOfOneRunMerge) {
  TempDir d;
  WriteRankFiles(d, [](int, json &) {});
  WriteFile(d / "rank-01.json.gz", "not a rank file name: ignored");
  Profile p = ReadProfile(d.path);
  EXPECT_FALSE(p.meta.complete);
  EXPECT_EQ(p.meta.world_size, 2);
  EXPECT_EQ(p.ranks.size(), 2u);
}

TEST(RobustRankFiles, AnotherBuildOrWorldSizeIsAnError) {
  TempDir a;
  WriteRankFiles(a, [](int r, json &d) { d["meta"]["psg_id"] = r ? "0x2" : "0x1"; });
  EXPECT_HAS(ReadError(a.path), a / "rank-1.json.gz" + ": meta.psg_id 0x2 differs from 0x1 in " +
                                    a / "rank-0.json.gz" +
                                    ": the run directory mixes rank files of different runs or "
                                    "builds");
  TempDir b;
  WriteRankFiles(b, [](int r, json &d) { d["meta"]["world_size"] = r ? 4 : 2; });
  EXPECT_HAS(ReadError(b.path), "rank-1.json.gz: meta.world_size 4 differs from 2 in");
  TempDir c;
  WriteRankFiles(c, [](int r, json &d) { d["ranks"][0]["rank"] = 1 - r; });
  EXPECT_HAS(ReadError(c.path),
             "rank-0.json.gz: holds rank 1, not rank 0 as its name says: it was renamed or "
             "copied from another run; remove it");
}

// --- item 5: the binary and source files ----------------------------------

std::string ElfError(const std::string &path) {
  std::string error;
  EXPECT_FALSE(ReadElf(path, "scalana_psg", &error).has_value()) << path;
  return error;
}

TEST(RobustElf, SpecialAndHugeFilesAreNotRead) {
  TempDir d;
  ASSERT_EQ(mkfifo((d / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(ElfError(d / "fifo"), d / "fifo" + ": not a regular file (a FIFO)");
  EXPECT_EQ(ElfError("/dev/zero"), "/dev/zero: not a regular file (a character device)");
  // 3 GiB of holes: refused after reading its first 64 bytes.
  WriteFile(d / "sparse", "");
  ASSERT_EQ(truncate((d / "sparse").c_str(), off_t(3) << 30), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ElfError(d / "sparse"), d / "sparse" + ": not an ELF file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// A minimal ELF64 file: header, section names, one section "scalana_psg"
// that claims SIZE bytes at OFFSET, and the section table.
std::string TinyElf(uint64_t offset, uint64_t size) {
  const std::string names = std::string("\0.shstrtab\0scalana_psg\0", 23);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  eh.e_shstrndx = 1;
  eh.e_shoff = sizeof eh + names.size();
  Elf64_Shdr sh[3]{};
  sh[1].sh_name = 1;
  sh[1].sh_type = SHT_STRTAB;
  sh[1].sh_offset = sizeof eh;
  sh[1].sh_size = names.size();
  sh[2].sh_name = 11;
  sh[2].sh_type = SHT_PROGBITS;
  sh[2].sh_offset = offset;
  sh[2].sh_size = size;
  std::string out(reinterpret_cast<const char *>(&eh), sizeof eh);
  out += names;
  out.append(reinterpret_cast<const char *>(sh), sizeof sh);
  return out;
}

TEST(RobustElf, SectionsAreBoundedByTheFileAndALimit) {
  TempDir d;
  std::string elf = TinyElf(0, 4);
  WriteFile(d / "ok", elf);
  std::string error;
  auto info = ReadElf(d / "ok", "scalana_psg", &error);
  ASSERT_TRUE(info) << error;
  EXPECT_TRUE(info->has_section);
  EXPECT_EQ(info->section.size(), 4u);
  WriteFile(d / "outside", TinyElf(64, uint64_t(1) << 40));
  EXPECT_HAS(ElfError(d / "outside"), "section scalana_psg (1099511627776 bytes at offset 64) lies "
                                      "outside the file");
  // A sparse file large enough to hold the absurd section it claims.
  WriteFile(d / "huge", TinyElf(4096, uint64_t(600) << 20));
  ASSERT_EQ(truncate((d / "huge").c_str(), off_t(700) << 20), 0);
  EXPECT_HAS(ElfError(d / "huge"), "section scalana_psg is 629145600 bytes, more than 536870912");
}

TEST(RobustSource, SnippetsReadOnlyRegularFilesAndEscapeThem) {
  TempDir d;
  ASSERT_EQ(mkfifo((d / "fifo.c").c_str(), 0600), 0);
  bool found = true;
  EXPECT_TRUE(SourceSnippet("fifo.c", 1, 1, {d.path}, &found).empty());
  EXPECT_FALSE(found);
  WriteFile(d / "x.c", "int a;\n\tb = \x1b[2J;\r\nc;\n" + std::string(1000, 'y') + "\n");
  auto lines = SourceSnippet("x.c", 2, 2, {d.path}, &found);
  ASSERT_TRUE(found);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "    2> \tb = \\x1b[2J;\\x0d");
  EXPECT_EQ(lines[3].size(), 7u + 400 + 3); // cut, with "..."
}

// --- item 7: escaping -------------------------------------------------------

TEST(RobustEscape, ControlsAreEscapedAndTextIsKept) {
  EXPECT_EQ(EscapeControls("Open MPI \x1b]0;pwned\x07\x1b[2J"),
            "Open MPI \\x1b]0;pwned\\x07\\x1b[2J");
  EXPECT_EQ(EscapeControls("n01\r\nforged"), "n01\\x0d\\x0aforged");
  EXPECT_EQ(EscapeControls("a\tb\x7f"), "a\\x09b\\x7f");
  EXPECT_EQ(EscapeControls("a\tb\nc", "\n\t"), "a\tb\nc");
  EXPECT_EQ(EscapeControls("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");   // valid UTF-8 stays
  const std::string csi = "\xc2\x9b", rlo = "\xe2\x80\xae"; // C1 CSI, right-to-left override
  EXPECT_EQ(EscapeControls(csi + "2J"), "\\xc2\\x9b2J");
  EXPECT_EQ(EscapeControls(rlo + "txt"), "\\xe2\\x80\\xaetxt");
  EXPECT_EQ(EscapeControls("\x9b\xff\xc0\xaf"), "\\x9b\\xff\\xc0\\xaf"); // not UTF-8
  EXPECT_EQ(EscapeControls(std::string("a\0b", 3)), "a\\x00b");
}

TEST(RobustEscape, AsciiJsonIsTheSameDocument) {
  json doc = {{"s", "\x1b[2J caf\xc3\xa9 \xc2\x85 \xf0\x9f\x98\x80 \x7f"}};
  std::string text = AsciiJson(doc.dump());
  for (char c : text)
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << int(c);
  EXPECT_EQ(json::parse(text), doc);
}

} // namespace
} // namespace scalana
