// Minimal ELF64 reader: the bytes of a named section and the GNU build-id.
// Header-only and dependency-free so the runtime (no LLVM) and the analyzer
// share it. Only what ScalAna needs; not a general ELF library.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalana {

struct ElfInfo {
  std::vector<uint8_t> section; // contents of the requested section
  bool has_section = false;
  std::string build_id; // hex, empty when the note is absent
};

// Returns std::nullopt and sets *error when the file is unreadable or not a
// 64-bit little-endian ELF file.
inline std::optional<ElfInfo> ReadElf(const std::string &path, std::string_view section_name,
                                      std::string *error) {
  auto fail = [&](std::string msg) -> std::optional<ElfInfo> {
    if (error)
      *error = path + ": " + msg;
    return std::nullopt;
  };
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return fail(std::strerror(errno));
  std::vector<uint8_t> data;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0)
    return fail("not an ELF file");
  Elf64_Ehdr eh;
  std::memcpy(&eh, data.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail("not a 64-bit little-endian ELF file");
  auto in_bounds = [&](uint64_t off, uint64_t len) {
    return off <= data.size() && len <= data.size() - off;
  };
  if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !in_bounds(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr)) ||
      eh.e_shstrndx >= eh.e_shnum)
    return fail("corrupt ELF section table");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), data.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  const Elf64_Shdr &strtab = sh[eh.e_shstrndx];
  if (!in_bounds(strtab.sh_offset, strtab.sh_size))
    return fail("corrupt section names");
  ElfInfo info;
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_name >= strtab.sh_size)
      continue;
    const char *name = reinterpret_cast<const char *>(data.data() + strtab.sh_offset + s.sh_name);
    size_t max = strtab.sh_size - s.sh_name;
    std::string_view nm(name, strnlen(name, max));
    if (s.sh_type == SHT_NOBITS || !in_bounds(s.sh_offset, s.sh_size))
      continue;
    const uint8_t *p = data.data() + s.sh_offset;
    if (nm == section_name) {
      info.section.assign(p, p + s.sh_size);
      info.has_section = true;
    } else if (s.sh_type == SHT_NOTE && nm == ".note.gnu.build-id" && s.sh_size >= 12) {
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
