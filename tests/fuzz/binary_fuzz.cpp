// libFuzzer target: a whole binary as the analyzer reads it. The input is an
// ELF file (the seeds: a program built with scalana-cc); it is read as the
// profiled binary is: its sections and build id (ReadElf), its scalana_psg
// section (ParsePsgSection, Psg::Build), and its line tables and
// inlined-subroutine frames (DebugReader, LLVM in a child process) at a
// spread of code addresses. Bad input must end in a scalana::Error or a
// failed reader, never a crash in this process.
//
// SCALANA_FUZZ_READER_EVERY=N runs the child reader on every Nth input only
// (default 1): the long runs count the in-process readers' inputs at full
// speed and the child's at its own.
#include "debug_reader.h"
#include "psg.h"
#include "scalana/elf_section.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t ReaderEvery() {
  const char *e = std::getenv("SCALANA_FUZZ_READER_EVERY");
  uint64_t n = e ? std::strtoull(e, nullptr, 10) : 1;
  return n ? n : 1;
}

// Addresses to look up: the entry point and a spread after it, as a
// profile's frames would name them (the header's e_entry, possibly mutated).
std::vector<std::pair<uint32_t, uint64_t>> Addresses(const uint8_t *data, size_t size) {
  uint64_t entry = 0x1000;
  if (size >= 0x20)
    std::memcpy(&entry, data + 0x18, 8);
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (uint64_t k = 0; k < 24; ++k)
    out.emplace_back(0, entry + k * 37);
  out.emplace_back(1, entry); // an object the reader does not have
  return out;
}

// One file per fuzzing process, rewritten for every input: the readers
// take a path, as they do for a profile's binary. In memory (/dev/shm)
// where there is one: on a disk file system truncating and rewriting it
// costs ten times what the readers do.
const std::string &InputPath() {
  static const std::string path = [] {
    const char *dir = std::getenv("TMPDIR");
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : dir && *dir ? dir : "/tmp";
    std::string p = base + "/scalana-binary-fuzz-" + std::to_string(getpid());
    std::atexit([] { unlink(InputPath().c_str()); });
    return p;
  }();
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint64_t every = ReaderEvery();
  static uint64_t inputs = 0;
  const std::string &path = InputPath();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return 0;
  for (size_t done = 0; done < size;) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0)
      break;
    done += size_t(w);
  }
  close(fd);
  std::string error;
  if (auto elf = scalana::ReadElf(path, "scalana_psg", &error); elf && elf->has_section) {
    try {
      std::vector<std::string> warnings;
      std::vector<scalana::LocalPsg> fns = scalana::ParsePsgSection(elf->section, &warnings);
      scalana::PsgOptions opts;
      opts.max_vertices = 100000;
      scalana::Psg::Build(std::move(fns), opts).Stats();
    } catch (const scalana::Error &) {
    }
  }
  if (inputs++ % every == 0) {
    scalana::DebugReader reader({path}, /*timeout_seconds=*/5);
    auto frames = reader.Lookup(Addresses(data, size));
    for (const auto &f : frames)
      for (const scalana::DebugFrame &d : f)
        if (d.name.size() > (1u << 16) || d.file.size() > (1u << 16))
          __builtin_trap(); // beyond the reader's own bound
  }
  return 0;
}
