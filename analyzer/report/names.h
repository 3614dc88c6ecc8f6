// Readable names for the symbols in reports: C++ demangled with long
// template arguments and parameter lists elided, flang's Fortran names as
// the program unit and module path a Fortran programmer wrote.
#pragma once

#include <cstddef>
#include <string>

namespace scalana {

// "_ZN4RAJA6forallI...EEvT_" -> "RAJA::forall<…>(…)" when the full name is
// longer than MAX_LEN; "_QQmain" -> "program"; "_QMmodPsub" -> "mod::sub".
// Names that are neither (C, already demangled) are only shortened. The
// result is at most MAX_LEN characters (counting "…" as one) for MAX_LEN >= 8.
std::string ReadableName(const std::string &symbol_or_demangled, size_t max_len = 120);

} // namespace scalana
