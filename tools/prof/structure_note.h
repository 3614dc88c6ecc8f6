// What the program's file holds for `scalana detect`, said once when it
// starts, so that a run that cannot give a report is known before it is made
// (docs/runtime.md, "What prof says at start").
#pragma once

#include <string>

namespace scalana {

// One line on what the ELF file PATH lacks for a report: no Program
// Structure Graph (detect recovers one from the binary, with less in it),
// no line tables, or neither (no report); "" when it has both, or when it
// is no ELF file (a script that starts the program: not known here).
std::string StructureNote(const std::string &path);

} // namespace scalana
