#include "structure_note.h"

#include "scalana/elf_section.h"
#include "scalana/psg_format.h"

namespace scalana {

std::string StructureNote(const std::string &path) {
  // Not an ELF file we can read (a script, a file gone): nothing to say;
  // the program starts or execvp says why not.
  std::optional<ElfSectionTable> table = ReadElfSections(path, nullptr);
  if (!table)
    return "";
  bool psg = false, lines = false, symbols = false;
  for (const ElfSectionEntry &s : table->sections) {
    psg |= s.name == kPsgSection;
    lines |= s.name == ".debug_line";
    symbols |= s.name == ".symtab";
  }
  // (A separate debug file, gnu_debuglink, is found by detect: line tables
  // missing here may be there.)
  if (!psg && !lines)
    return path +
           " has neither a Program Structure Graph nor line tables (built without "
           "scalana-cc/-cxx/-fc and without -g, or stripped): the run is profiled, but "
           "`scalana detect` can place nothing on lines and will refuse it; rebuild with the "
           "wrappers (CC=scalana-cc make, or the CMake routes of the README), or at least "
           "with -g, and profile again";
  if (!psg)
    return path + " has no Program Structure Graph (not built with scalana-cc, scalana-cxx or "
                  "scalana-fc): `scalana detect` recovers its structure from its line tables and "
                  "machine code, without branch vertices or OpenMP constructs; rebuild with the "
                  "wrappers for the full PSG";
  if (!lines)
    return path + " has no line tables (" +
           (symbols ? "built without -g or -gline-tables-only, or stripped of debug information"
                    : "stripped") +
           "): samples are placed on functions at best, not on loops and lines, unless a "
           "separate debug file (gnu_debuglink) has them; rebuild without stripping it";
  return "";
}

} // namespace scalana
