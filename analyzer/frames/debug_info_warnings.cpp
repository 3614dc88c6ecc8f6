// What the profiled objects' debug information lacked, said so that the user
// knows what to rebuild: a damaged section, a stripped binary, a binary
// without line tables (frames.h).
#include "frames.h"

#include "scalana/elf_section.h"

namespace scalana {

const Context &UnplacedContext() {
  // One id no PSG context holds alone (raw ids are hashes: a collision
  // needs a function hash of all ones).
  static const Context kUnplaced{~uint64_t(0)};
  return kUnplaced;
}

std::string DamagedDebugSection(const std::string &object) {
  std::optional<ElfSectionTable> table = ReadElfSections(object, nullptr);
  if (!table)
    return {};
  for (const ElfSectionEntry &s : table->sections) {
    bool debug = s.name.rfind(".debug_", 0) == 0 || s.name.rfind(".zdebug_", 0) == 0 ||
                 s.name == ".symtab" || s.name == ".strtab";
    if (!debug || s.type == SHT_NOBITS)
      continue;
    if (s.offset <= table->file_size && s.size <= table->file_size - s.offset)
      continue;
    std::string name = s.name.size() > 64 ? s.name.substr(0, 64) + "..." : s.name;
    return object + ": damaged or truncated file: section " + name + " (" + std::to_string(s.size) +
           " bytes at offset " + std::to_string(s.offset) + ") ends past the end of the file (" +
           std::to_string(table->file_size) + " bytes)";
  }
  return {};
}

std::vector<std::string> DebugInfoWarnings(const FrameStats &s, const std::string &binary,
                                           const std::string &build_id) {
  std::vector<std::string> out;
  std::string samples = std::to_string(s.unnamed_samples) + " sample" +
                        (s.unnamed_samples == 1 ? "" : "s") + " could not be placed";
  if (!s.damaged_section.empty()) {
    // Whatever the readers made of it, the file is the problem.
    std::string w = s.damaged_section + ": its debug information cannot be read";
    if (s.unnamed_samples)
      w += " and " + samples;
    else if (s.no_line_tables)
      w += ", so samples are placed on their functions only";
    out.push_back(w + "; copy the binary again, or rebuild it");
    return out;
  }
  if (s.NoSymbols()) {
    std::string w = binary + ": no symbols: " + samples +
                    " (counted as unplaced, not as time of the program); it was stripped "
                    "(strip, or linked with -s): rebuild it with scalana-cc/-cxx/-fc and do "
                    "not strip it, or keep its debug information in a file of its own before "
                    "stripping (objcopy --only-keep-debug BINARY BINARY.debug; objcopy "
                    "--add-gnu-debuglink=BINARY.debug BINARY)";
    if (build_id.size() > 2)
      w += " or under /usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" +
           build_id.substr(2) + ".debug";
    out.push_back(w);
    return out;
  }
  if (s.unnamed_samples)
    out.push_back(samples + ": their frames lie in code the debug information names no "
                            "function of (a stripped object, or code without symbols)");
  if (s.no_line_tables)
    out.push_back(binary + ": no line tables, so samples cannot be placed on loops and call "
                           "sites; rebuild with scalana-cc/-cxx/-fc (they add -gline-tables-only)");
  return out;
}

} // namespace scalana
