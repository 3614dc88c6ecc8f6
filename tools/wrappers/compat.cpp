// GCC-only options: mapped to clang's spelling, or dropped with a notice.
#include "compat.h"

#include <cctype>
#include <cstring>
#include <sstream>

namespace scalana {
namespace {

struct GccOnlyOption {
  const char *text;
  bool prefix;  // matches every option starting with `text` (a joined value)
  bool ignored; // clang/flang accept it but ignore it (else they reject it)
};
#include "gcc_options.inc"

template <size_t N>
const GccOnlyOption *Find(const GccOnlyOption (&table)[N], const std::string &a) {
  for (const GccOnlyOption &o : table)
    if (o.prefix ? a.compare(0, std::strlen(o.text), o.text) == 0 : a == o.text)
      return &o;
  return nullptr;
}

const GccOnlyOption *FindGccOnly(Language lang, const std::string &a) {
  switch (lang) {
  case Language::C:
    return Find(kGccOnlyC, a);
  case Language::Cxx:
    return Find(kGccOnlyCxx, a);
  case Language::Fortran:
    return Find(kGccOnlyFortran, a);
  }
  return nullptr;
}

const char *CompilerName(Language lang) { return lang == Language::Fortran ? "flang" : "clang"; }

bool StartsWith(const std::string &s, const char *prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

bool AllDigits(const std::string &s, size_t from) {
  if (from >= s.size())
    return false;
  for (size_t i = from; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return false;
  return true;
}

// The option GCC's -Werror=<w> / -Wno-error=<w> names, as -W<w>.
std::string WarningOfErrorOption(const std::string &a) {
  for (const char *p : {"-Werror=", "-Wno-error="})
    if (StartsWith(a, p))
      return "-W" + a.substr(std::strlen(p));
  return "";
}

} // namespace

bool TakesSeparateValue(const std::string &a) {
  static const char *const kOptions[] = {"-o",
                                         "-I",
                                         "-L",
                                         "-D",
                                         "-U",
                                         "-include",
                                         "-imacros",
                                         "-isystem",
                                         "-iquote",
                                         "-idirafter",
                                         "-isysroot",
                                         "-x",
                                         "-MF",
                                         "-MT",
                                         "-MQ",
                                         "-Xlinker",
                                         "-Xclang",
                                         "-Xassembler",
                                         "-Xpreprocessor",
                                         "-l",
                                         "-target",
                                         "-arch",
                                         "-module-dir",
                                         "-J",
                                         "-T",
                                         "-u",
                                         "-z",
                                         "--param",
                                         "-aux-info",
                                         "-mllvm",
                                         "-Xflang",
                                         "-Xcuda-ptxas",
                                         "-Xopenmp-target",
                                         "-e"};
  for (const char *o : kOptions)
    if (a == o)
      return true;
  return false;
}

Translation TranslateGccOptions(Language lang, const std::vector<std::string> &args) {
  Translation t;
  const std::string compiler = CompilerName(lang);
  auto drop = [&](const std::string &shown, bool ignored) {
    t.notices.push_back("note: dropped GCC option '" + shown + "' (" + compiler +
                        (ignored ? " ignores it)" : " rejects it)"));
  };
  auto map = [&](const std::string &from, const std::string &to) {
    t.notices.push_back("note: GCC option '" + from + "' is '" + to + "' for " + compiler);
    t.args.push_back(to);
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--param" && i + 1 < args.size()) {
      // GCC's tuning parameters: clang and flang have none.
      if (const GccOnlyOption *o = FindGccOnly(lang, "--param=" + args[i + 1])) {
        drop(a + " " + args[i + 1], o->ignored);
        ++i;
        continue;
      }
    }
    if (TakesSeparateValue(a)) {
      t.args.push_back(a);
      if (i + 1 < args.size())
        t.args.push_back(args[++i]);
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      t.args.push_back(a);
      continue;
    }
    // -O4 and above: GCC takes any level as -O3; clang warns on every file.
    if (lang != Language::Fortran && StartsWith(a, "-O") && AllDigits(a, 2) &&
        std::stoul(a.substr(2, 9)) > 3) {
      t.notices.push_back("warning: optimization level '" + a +
                          "' is not supported by clang; using '-O3'");
      t.args.push_back("-O3");
      continue;
    }
    // GCC's number of parallel LTO jobs; clang and flang take no number.
    if (StartsWith(a, "-flto=") && AllDigits(a, 6)) {
      map(a, "-flto");
      continue;
    }
    if (lang != Language::Fortran) {
      if (StartsWith(a, "-fmax-errors=")) {
        map(a, "-ferror-limit=" + a.substr(std::strlen("-fmax-errors=")));
        continue;
      }
      if (a == "-fdiagnostics-show-caret" || a == "-fno-diagnostics-show-caret") {
        map(a, a[2] == 'n' ? "-fno-caret-diagnostics" : "-fcaret-diagnostics");
        continue;
      }
      std::string warning = WarningOfErrorOption(a);
      if (!warning.empty() && FindGccOnly(lang, warning)) {
        drop(a, true);
        continue;
      }
    } else if (StartsWith(a, "-W") && a != "-Werror" && !StartsWith(a, "-Wl,")) {
      // flang 19 takes -Werror and -Wl, only ("Only -Werror is supported").
      if (StartsWith(a, "-Wp,")) {
        // GCC hands these to its preprocessor; flang's is built in.
        std::string joined;
        std::istringstream pieces(a.substr(4));
        for (std::string piece; std::getline(pieces, piece, ',');)
          if (!piece.empty()) {
            t.args.push_back(piece);
            joined += joined.empty() ? piece : " " + piece;
          }
        t.notices.push_back("note: GCC option '" + a + "' is '" + joined + "' for flang");
        continue;
      }
      t.notices.push_back("note: dropped GCC option '" + a +
                          "' (flang takes no warning option but -Werror)");
      continue;
    }
    if (lang == Language::Fortran && StartsWith(a, "-std=") && a != "-std=f2018") {
      t.notices.push_back("note: dropped GCC option '" + a + "' (flang only knows -std=f2018)");
      continue;
    }
    if (const GccOnlyOption *o = FindGccOnly(lang, a)) {
      drop(a, o->ignored);
      continue;
    }
    t.args.push_back(a);
  }
  return t;
}

std::vector<std::string> LegacyCWarnings(const std::vector<std::string> &args) {
  for (const std::string &a : args)
    if (a == "-Werror" || a == "-pedantic-errors")
      return {};
  return {"-Wno-error=implicit-function-declaration",
          "-Wno-error=implicit-int",
          "-Wno-error=int-conversion",
          "-Wno-error=incompatible-pointer-types",
          "-Wno-error=incompatible-function-pointer-types",
          "-Wno-error=return-mismatch"};
}

} // namespace scalana
