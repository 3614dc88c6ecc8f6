// Minimal ELF64 reader: the bytes of a named section and the GNU build-id.
// Header-only and dependency-free so the runtime (no LLVM) and the analyzer
// share it. Only what ScalAna needs; not a general ELF library.
//
// The file is untrusted (a profile names it): only a regular file is opened
// (a FIFO would block, a device never end), and only the headers and the
// sections asked for are read, each checked to lie inside the file and below
// kMaxElfSectionBytes, so a huge or sparse file costs what its headers say.
#pragma once

#include "scalana/regular_file.h"

#include <elf.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalana {

// No section ScalAna reads comes near this; a larger one is corrupt.
inline constexpr uint64_t kMaxElfSectionBytes = uint64_t(512) << 20;

struct ElfInfo {
  std::vector<uint8_t> section; // contents of the requested section
  bool has_section = false;
  std::string build_id; // hex, empty when the note is absent
};

// One entry of the section table, as the file states it (not checked).
struct ElfSectionEntry {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0, size = 0;
};

// The section table of a file ReadElfSections opened: its entries and the
// file's size, to tell which of them lie outside it.
struct ElfSectionTable {
  uint64_t file_size = 0;
  std::vector<ElfSectionEntry> sections;
};

namespace elf_detail {

// Reads and checks the ELF header, the section table and the section names
// of FD (SIZE bytes). False with *msg on a file that is none or whose tables
// do not fit in it.
inline bool ReadTables(int fd, uint64_t size, std::vector<Elf64_Shdr> *sh,
                       std::vector<char> *names, std::string *msg) {
  auto in_bounds = [&](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
  auto fail = [&](const char *why) {
    *msg = why;
    return false;
  };
  Elf64_Ehdr eh;
  if (size < sizeof eh || !ReadAt(fd, 0, &eh, sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return fail("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail("not a 64-bit little-endian ELF file");
  // e_shnum is 16 bits: the table is at most 4 MiB.
  if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !in_bounds(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr)) ||
      eh.e_shstrndx >= eh.e_shnum)
    return fail("corrupt ELF section table");
  sh->resize(eh.e_shnum);
  if (!ReadAt(fd, eh.e_shoff, sh->data(), sh->size() * sizeof(Elf64_Shdr)))
    return fail("cannot read the ELF section table");
  const Elf64_Shdr &strtab = (*sh)[eh.e_shstrndx];
  // Section names take a few hundred bytes; 1 MiB is far beyond any linker's.
  if (!in_bounds(strtab.sh_offset, strtab.sh_size) || strtab.sh_size > (uint64_t(1) << 20))
    return fail("corrupt section names");
  names->resize(strtab.sh_size);
  if (!ReadAt(fd, strtab.sh_offset, names->data(), names->size()))
    return fail("cannot read the section names");
  return true;
}

inline std::string_view NameOf(const Elf64_Shdr &s, const std::vector<char> &names) {
  if (s.sh_name >= names.size())
    return {};
  return std::string_view(names.data() + s.sh_name,
                          strnlen(names.data() + s.sh_name, names.size() - s.sh_name));
}

} // namespace elf_detail

// The section table of PATH, for telling a damaged or stripped file from
// one without the sections asked for. std::nullopt and *error as ReadElf.
inline std::optional<ElfSectionTable> ReadElfSections(const std::string &path,
                                                      std::string *error) {
  std::string msg;
  uint64_t size = 0;
  int fd = OpenRegularFile(path, &size, &msg);
  std::vector<Elf64_Shdr> sh;
  std::vector<char> names;
  bool ok = fd >= 0 && elf_detail::ReadTables(fd, size, &sh, &names, &msg);
  if (fd >= 0)
    ::close(fd);
  if (!ok) {
    if (error)
      *error = path + ": " + msg;
    return std::nullopt;
  }
  ElfSectionTable table;
  table.file_size = size;
  for (const Elf64_Shdr &s : sh)
    table.sections.push_back(
        {std::string(elf_detail::NameOf(s, names)), s.sh_type, s.sh_offset, s.sh_size});
  return table;
}

// Returns std::nullopt and sets *error when the file is unreadable, not a
// regular file or not a 64-bit little-endian ELF file, or when the requested
// section does not fit in it.
inline std::optional<ElfInfo> ReadElf(const std::string &path, std::string_view section_name,
                                      std::string *error) {
  auto fail = [&](std::string msg) -> std::optional<ElfInfo> {
    if (error)
      *error = path + ": " + msg;
    return std::nullopt;
  };
  std::string open_error;
  uint64_t size = 0;
  int fd = OpenRegularFile(path, &size, &open_error);
  if (fd < 0)
    return fail(open_error);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  auto in_bounds = [&](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
  std::vector<Elf64_Shdr> sh;
  std::vector<char> names;
  std::string msg;
  if (!elf_detail::ReadTables(fd, size, &sh, &names, &msg))
    return fail(msg);
  ElfInfo info;
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_name >= names.size() || s.sh_type == SHT_NOBITS)
      continue;
    std::string_view nm = elf_detail::NameOf(s, names);
    if (nm == section_name) {
      if (!in_bounds(s.sh_offset, s.sh_size))
        return fail("section " + std::string(nm) + " (" + std::to_string(s.sh_size) +
                    " bytes at offset " + std::to_string(s.sh_offset) +
                    ") lies outside the file (" + std::to_string(size) + " bytes): corrupt");
      if (s.sh_size > kMaxElfSectionBytes)
        return fail("section " + std::string(nm) + " is " + std::to_string(s.sh_size) +
                    " bytes, more than " + std::to_string(kMaxElfSectionBytes) + ": corrupt");
      info.section.resize(s.sh_size);
      if (!ReadAt(fd, s.sh_offset, info.section.data(), info.section.size()))
        return fail("cannot read section " + std::string(nm));
      info.has_section = true;
    } else if (s.sh_type == SHT_NOTE && nm == ".note.gnu.build-id" && s.sh_size >= 12 &&
               s.sh_size <= 4096 && in_bounds(s.sh_offset, s.sh_size)) {
      std::vector<uint8_t> note(s.sh_size);
      if (!ReadAt(fd, s.sh_offset, note.data(), note.size()))
        continue;
      const uint8_t *p = note.data();
      uint32_t namesz, descsz, type;
      std::memcpy(&namesz, p, 4);
      std::memcpy(&descsz, p + 4, 4);
      std::memcpy(&type, p + 8, 4);
      uint64_t desc = 12 + ((uint64_t(namesz) + 3) & ~uint64_t(3));
      if (type == NT_GNU_BUILD_ID && desc + descsz <= s.sh_size) {
        static const char hex[] = "0123456789abcdef";
        for (uint32_t i = 0; i < descsz; ++i) {
          info.build_id += hex[p[desc + i] >> 4];
          info.build_id += hex[p[desc + i] & 15];
        }
      }
    }
  }
  return info;
}

} // namespace scalana
