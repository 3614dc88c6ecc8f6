// GCC compatibility of the compiler wrappers (docs/static.md section 2): what
// the GCC-based mpicc/mpicxx/mpif90 accept and clang/flang reject or ignore.
#pragma once

#include <string>
#include <vector>

namespace scalana {

enum class Language { C = 0, Cxx = 1, Fortran = 2 };

// Options whose value is the next argument (so that value is not an input).
bool TakesSeparateValue(const std::string &arg);

struct Translation {
  std::vector<std::string> args; // what the compiler gets
  // One short line per mapped or dropped option, "note: ..." or "warning: ...".
  std::vector<std::string> notices;
};

// Maps or drops the GCC-only options among the user's arguments: a fixed
// mapping for a few (-O5, -fmax-errors=, -flto=<jobs>, flang's -W options)
// and the generated table gcc_options.inc for the rest. Options clang or
// flang accept are kept as given, so their code is what the plain compiler
// builds.
Translation TranslateGccOptions(Language lang, const std::vector<std::string> &args);

// For C: the warning options that keep GCC 12's defaults where clang 19 makes
// legacy C an error (implicit declarations, implicit int, int conversions,
// incompatible pointer types, return without value). Empty when the user
// asked for errors (-Werror, -pedantic-errors) as GCC would then fail too.
// They go before the user's options, so a -Werror=<warning> of the user
// still wins. Warning options change no code.
std::vector<std::string> LegacyCWarnings(const std::vector<std::string> &args);

} // namespace scalana
