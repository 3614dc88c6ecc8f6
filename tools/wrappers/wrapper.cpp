// scalana-cc / scalana-cxx / scalana-fc: drop-in replacements for mpicc,
// mpicxx and mpif90 that compile with clang-19 / clang++-19 / flang-new-19 and
// the ScalAna pass plugin. One source, built three times with a different
// SCALANA_WRAPPER_LANGUAGE (0 = C, 1 = C++, 2 = Fortran).
//
// Every option clang or flang accepts goes through unchanged; the wrapper adds:
//   compiling: -fpass-plugin=<ScalanaPass.so>, -gline-tables-only (unless the
//              user chose a -g option) and the MPI compile flags;
//   linking:   the MPI link flags and -Wl,--build-id (the identity a profile
//              records of the binary it ran).
// The program's machine code is therefore the one mpicc/mpicxx/mpif90 would
// build with the same compiler and flags (tests/lit/wrapper-codegen.test and
// code-unchanged-fortran.test), so run-time overhead is the profiler's alone;
// the line tables are what maps sampled addresses back to PSG vertices.
//
// Unless --scalana-strict (or SCALANA_STRICT=1), the wrappers also accept what
// the GCC-based MPI wrappers accept (compat.h): GCC-only options are mapped or
// dropped with one notice per build (notices.h), C keeps GCC's warnings for
// legacy code, flang's implicit-interface warnings about MPI routines are
// dropped from its output (diagnostics.h), and code the compiler rejects gets
// a one-line hint about clang/GCC differences. None of that changes the code
// of what clang or flang accept.
//
// What build systems ask an MPI wrapper (--showme..., -show, -compile-info,
// -link-info) gets the MPI wrapper's answer, naming our compiler (showme.h).
#include "../self_path.h"
#include "compat.h"
#include "diagnostics.h"
#include "notices.h"
#include "scalana/echo.h"
#include "showme.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#ifndef SCALANA_WRAPPER_LANGUAGE
#error "SCALANA_WRAPPER_LANGUAGE must be defined"
#endif

namespace scalana {
namespace {

constexpr Language kLanguage = static_cast<Language>(SCALANA_WRAPPER_LANGUAGE);

struct EnvVarSpec {
  const char *name, *type, *default_value, *help;
};
// Every environment variable the wrappers read.
constexpr EnvVarSpec kWrapperEnvironment[] = {
    {"SCALANA_PLUGIN", "path", "<wrapper dir>/../lib/ScalanaPass.so",
     "pass plugin to load instead of the one installed beside the wrapper"},
    {"SCALANA_WRAPPER_VERBOSE", "bool", "0",
     "print each command to standard error before running it"},
    {"SCALANA_STRICT", "bool", "0",
     "as --scalana-strict: no GCC compatibility, the compiler gets the user's options as given"},
};

const char *Env(const char *name) {
  for (const EnvVarSpec &v : kWrapperEnvironment)
    if (!std::strcmp(v.name, name))
      return std::getenv(name);
  return nullptr;
}

bool EnvTrue(const char *name) {
  const char *v = Env(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

const char *WrapperName() {
  switch (kLanguage) {
  case Language::C:
    return "scalana-cc";
  case Language::Cxx:
    return "scalana-cxx";
  case Language::Fortran:
    return "scalana-fc";
  }
  return "scalana-cc";
}

const char *Compiler() {
  switch (kLanguage) {
  case Language::C:
    return SCALANA_CLANG;
  case Language::Cxx:
    return SCALANA_CLANGXX;
  case Language::Fortran:
    return SCALANA_FLANG;
  }
  return SCALANA_CLANG;
}

std::vector<std::string> SplitFlags(const char *flags) {
  std::vector<std::string> out;
  std::string cur;
  for (const char *p = flags; *p; ++p) {
    if (*p == ' ' || *p == '\t' || *p == '\n') {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

bool FileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The plugin and the Fortran module live beside the wrapper's bin/ directory
// both in the build tree (build/lib, build/include) and after installation.
std::string FindBesideBin(const std::vector<std::string> &relative) {
  std::string prefix = ExecutableDir() + "/..";
  for (const std::string &rel : relative)
    if (FileExists(prefix + "/" + rel))
      return prefix + "/" + rel;
  return "";
}

// Our `mpi` module (flang cannot read gfortran's mpi.mod) and its archive.
std::string FortranModuleDir() {
  return FindBesideBin({"include/scalana-fortran", SCALANA_REL_INCLUDEDIR "/scalana-fortran"});
}

std::string FortranModuleArchive() {
  return FindBesideBin({"include/scalana-fortran/libscalana_mpi_module.a",
                        SCALANA_REL_INCLUDEDIR "/scalana-fortran/libscalana_mpi_module.a"});
}

bool EndsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool IsLinkerInput(const std::string &path) {
  return EndsWith(path, ".o") || EndsWith(path, ".a") || EndsWith(path, ".so") ||
         path.find(".so.") != std::string::npos || EndsWith(path, ".lo");
}

struct Invocation {
  bool compile_only = false; // -c, -S, -E, -M, -MM, -fsyntax-only
  bool has_sources = false;  // something to compile
  bool has_inputs = false;   // anything at all
  bool user_debug = false;   // the user picked a -g option
  bool user_colour = false;  // the user chose whether diagnostics are coloured
  bool show = false, help = false, version = false, strict = false;
  std::vector<std::string> args; // user arguments minus --scalana-*
};

// Takes out the wrapper's own options; Classify reads the rest.
Invocation Parse(int argc, char **argv) {
  Invocation inv;
  inv.strict = EnvTrue("SCALANA_STRICT");
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--scalana-show")
      inv.show = true;
    else if (a == "--scalana-help")
      inv.help = true;
    else if (a == "--scalana-version")
      inv.version = true;
    else if (a == "--scalana-strict")
      inv.strict = true;
    else if (a == "--scalana-launcher")
      ++i; // a build system's launcher: the next argument is its compiler, replaced by ours
    else
      inv.args.push_back(a);
  }
  return inv;
}

void Classify(Invocation &inv) {
  const std::vector<std::string> &args = inv.args;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (TakesSeparateValue(a)) {
      ++i;
      continue;
    }
    if (a == "-c" || a == "-S" || a == "-E" || a == "-M" || a == "-MM" || a == "-fsyntax-only")
      inv.compile_only = true;
    else if (a.size() > 2 && a[0] == '-' && a[1] == 'g' && a.compare(0, 3, "-gz") != 0)
      inv.user_debug = true;
    else if (a == "-g")
      inv.user_debug = true;
    else if (a.find("color-diagnostics") != std::string::npos ||
             a.find("diagnostics-color") != std::string::npos)
      inv.user_colour = true;
    else if (a == "-" || (!a.empty() && a[0] != '-')) {
      inv.has_inputs = true;
      if (a == "-" || !IsLinkerInput(a))
        inv.has_sources = true;
    }
  }
}

const char *GccName() {
  switch (kLanguage) {
  case Language::C:
    return "gcc";
  case Language::Cxx:
    return "g++";
  case Language::Fortran:
    return "gfortran";
  }
  return "gcc";
}

std::string BaseName(const std::string &path) { return path.substr(path.rfind('/') + 1); }

void PrintHelp() {
  std::printf(
      "usage: %s [compiler options] files...\n\n"
      "Compiles MPI programs with %s and the ScalAna pass plugin, like mpicc/mpicxx/mpif90.\n"
      "Added when compiling: -fpass-plugin, -gline-tables-only (unless a -g option is given)\n"
      "and the MPI compile flags; when linking: the MPI link flags and -Wl,--build-id.\n"
      "Options only %s knows are mapped or dropped, with one notice per build.\n\n"
      "  --scalana-strict   no GCC compatibility: options go to the compiler as given\n"
      "  --scalana-launcher as a compiler launcher (CMake's <LANG>_COMPILER_LAUNCHER): drop\n"
      "                     the next argument, the compiler the build system chose\n"
      "  --scalana-show     print the compiler command instead of running it\n"
      "  --showme[:<what>]  (and -show, -compile-info, -link-info) what the MPI wrapper\n"
      "                     answers, naming this wrapper's compiler (--showme:help)\n"
      "  --scalana-version  print the wrapper and compiler versions\n"
      "  --scalana-help     this text\n\nenvironment:\n",
      WrapperName(), Compiler(), GccName());
  for (const EnvVarSpec &v : kWrapperEnvironment)
    std::printf("  %-24s %s (%s, default %s)\n", v.name, v.help, v.type, v.default_value);
}

std::string Quote(const std::string &s) {
  if (s.find_first_of(" \t\"'\\$`") == std::string::npos && !s.empty())
    return s;
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// --showme and the like: what the MPI wrapper underneath answers, with our
// compiler and, for Fortran, our `mpi` module (showme.h).
int AnswerQuestion(const char *argv0, const std::vector<std::string> &args, size_t at) {
  MpiWrapperFacts facts;
  facts.name = argv0;
  facts.compiler = Compiler();
  facts.compile = SplitFlags(SCALANA_MPI_COMPILE);
  facts.link = SplitFlags(SCALANA_MPI_LINK);
  facts.incdirs = SplitFlags(SCALANA_MPI_INCDIRS);
  facts.libdirs = SplitFlags(SCALANA_MPI_LIBDIRS);
  facts.libs = SplitFlags(SCALANA_MPI_LIBS);
  facts.version = SCALANA_MPI_VERSION;
  if (kLanguage == Language::Fortran) {
    facts.module_dir = FortranModuleDir();
    facts.module_archive = FortranModuleArchive();
  }
  MpiAnswer answer = AnswerMpiQuestion(facts, args, at);
  std::fputs(answer.out.c_str(), stdout);
  std::fputs(EchoedNotice(answer.err).c_str(), stderr);
  return answer.status;
}

// After a failed compile: one line on what clang/flang rejected that GCC takes.
void HintAfterFailure(const DiagnosticFilter &filter) {
  const std::string compiler = BaseName(Compiler());
  for (const std::string &o : filter.unknown_options())
    NoticeOncePerBuild(WrapperName(), "note: '" + o + "' is neither a " + compiler +
                                          " option nor a GCC option the wrapper maps; see "
                                          "docs/static.md, \"GCC compatibility\"");
  if (filter.code_error())
    NoticeOncePerBuild(WrapperName(), "note: " + compiler + " rejected this code; if " + GccName() +
                                          " accepts it, it relies on a GCC leniency and is not "
                                          "valid for " +
                                          compiler +
                                          ": see docs/static.md, \"Code only GCC accepts\"");
}

int Run(int argc, char **argv) {
  SetEchoedArgs(argc, argv);
  Invocation inv = Parse(argc, argv);
  if (inv.help) {
    PrintHelp();
    return 0;
  }
  if (int at = FindMpiQuestion(inv.args); at >= 0)
    return AnswerQuestion(argv[0], inv.args, size_t(at));
  std::vector<std::string> cmd{Compiler()};
  if (inv.version) {
    std::printf("%s %s (ScalAna), driving %s\n", WrapperName(), SCALANA_VERSION, Compiler());
    std::fflush(stdout);
    cmd.push_back("--version");
    inv.args.clear();
  }
  std::vector<std::string> notices;
  if (!inv.strict) {
    Translation t = TranslateGccOptions(kLanguage, inv.args);
    inv.args = std::move(t.args);
    notices = std::move(t.notices);
  }
  Classify(inv);
  // Nothing to compile or link (--version, -dumpmachine, -print-*): pass through.
  const bool compiling = inv.has_sources;
  const bool linking = inv.has_inputs && !inv.compile_only;
  if (compiling) {
    std::string plugin;
    if (const char *p = Env("SCALANA_PLUGIN"); p && *p)
      plugin = p;
    else
      plugin = FindBesideBin({"lib/ScalanaPass.so", SCALANA_REL_LIBDIR "/ScalanaPass.so"});
    if (plugin.empty() || !FileExists(plugin)) {
      std::fprintf(stderr,
                   "%s: error: cannot find the pass plugin ScalanaPass.so (looked in %s/../lib and "
                   "%s/../%s); set SCALANA_PLUGIN to its path or reinstall ScalAna\n",
                   WrapperName(), ExecutableDir().c_str(), ExecutableDir().c_str(),
                   SCALANA_REL_LIBDIR);
      return 2;
    }
    cmd.push_back("-fpass-plugin=" + plugin);
    if (!inv.user_debug)
      cmd.push_back("-gline-tables-only");
    if (kLanguage == Language::Fortran) {
      // Our `mpi` module comes before the MPI include directories, which
      // hold gfortran's.
      std::string dir = FortranModuleDir();
      if (!dir.empty())
        cmd.push_back("-I" + dir);
    }
    for (const std::string &f : SplitFlags(SCALANA_MPI_COMPILE))
      cmd.push_back(f);
    if (!inv.strict && kLanguage == Language::C)
      for (const std::string &f : LegacyCWarnings(inv.args))
        cmd.push_back(f);
  }
  // The wrapper reads the compiler's diagnostics through a pipe: keep their
  // colours when they go to a terminal.
  const bool filtered = !inv.strict && (compiling || linking);
  if (filtered && !inv.user_colour && isatty(STDERR_FILENO))
    cmd.push_back("-fcolor-diagnostics");
  for (const std::string &a : inv.args)
    cmd.push_back(a);
  if (linking) {
    if (kLanguage == Language::Fortran) {
      std::string lib = FortranModuleArchive();
      if (!lib.empty())
        cmd.push_back(lib);
    }
    for (const std::string &f : SplitFlags(SCALANA_MPI_LINK))
      cmd.push_back(f);
    cmd.push_back("-Wl,--build-id");
  }

  if (inv.show || EnvTrue("SCALANA_WRAPPER_VERBOSE")) {
    std::string line;
    for (const std::string &c : cmd)
      line += (line.empty() ? "" : " ") + Quote(c);
    std::fprintf(inv.show ? stdout : stderr, "%s\n", line.c_str());
    if (inv.show) {
      for (const std::string &n : notices)
        std::fprintf(stderr, "%s: %s\n", WrapperName(), EchoedNotice(n).c_str());
      return 0;
    }
  }
  for (const std::string &n : notices)
    NoticeOncePerBuild(WrapperName(), n);
  if (access(cmd[0].c_str(), X_OK) != 0) {
    std::fprintf(stderr, "%s: error: cannot run %s: %s (configure ScalAna with -D%s=<path>)\n",
                 WrapperName(), EchoValue(cmd[0]).c_str(), std::strerror(errno),
                 kLanguage == Language::C     ? "SCALANA_CLANG"
                 : kLanguage == Language::Cxx ? "SCALANA_CLANGXX"
                                              : "SCALANA_FLANG");
    return 127;
  }
  if (filtered) {
    // Under -Werror flang fails on these warnings: then they are the reason
    // the compile fails, and stay.
    DiagnosticFilter filter(kLanguage == Language::Fortran &&
                            std::find(inv.args.begin(), inv.args.end(), "-Werror") ==
                                inv.args.end());
    int rc = RunFiltered(cmd, filter);
    if (rc != 0)
      HintAfterFailure(filter);
    return rc;
  }
  std::vector<char *> cargv;
  for (std::string &c : cmd)
    cargv.push_back(c.data());
  cargv.push_back(nullptr);
  execv(cargv[0], cargv.data());
  std::fprintf(stderr, "%s: error: cannot run %s: %s\n", WrapperName(), EchoValue(cargv[0]).c_str(),
               std::strerror(errno));
  return 127;
}

} // namespace
} // namespace scalana

int main(int argc, char **argv) { return scalana::Run(argc, argv); }
