// scalana-cc / scalana-cxx / scalana-fc: drop-in replacements for mpicc,
// mpicxx and mpif90 that compile with clang-19 / clang++-19 / flang-new-19 and
// the ScalAna pass plugin. One source, built three times with a different
// SCALANA_WRAPPER_LANGUAGE (0 = C, 1 = C++, 2 = Fortran).
//
// Everything the user passes goes through unchanged; the wrapper only adds:
//   compiling: -fpass-plugin=<ScalanaPass.so>, -gline-tables-only (unless the
//              user chose a -g option) and the MPI compile flags;
//   linking:   the MPI link flags and -Wl,--build-id (the identity a profile
//              records of the binary it ran).
// The program's machine code is therefore the one mpicc/mpicxx/mpif90 would
// build with the same compiler and flags (tests/lit/wrapper-codegen.test and
// code-unchanged-fortran.test), so run-time overhead is the profiler's alone;
// the line tables are what maps sampled addresses back to PSG vertices.
#include "../self_path.h"

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

enum class Language { C = 0, Cxx = 1, Fortran = 2 };
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
};

const char *Env(const char *name) {
  for (const EnvVarSpec &v : kWrapperEnvironment)
    if (!std::strcmp(v.name, name))
      return std::getenv(name);
  return nullptr;
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

// MPI flags captured at configure time (tools/wrappers/CMakeLists.txt).
const char *MpiCompileFlags() {
  switch (kLanguage) {
  case Language::C:
    return SCALANA_MPI_C_COMPILE;
  case Language::Cxx:
    return SCALANA_MPI_CXX_COMPILE;
  case Language::Fortran:
    return SCALANA_MPI_FORTRAN_COMPILE;
  }
  return "";
}

const char *MpiLinkFlags() {
  switch (kLanguage) {
  case Language::C:
    return SCALANA_MPI_C_LINK;
  case Language::Cxx:
    return SCALANA_MPI_CXX_LINK;
  case Language::Fortran:
    return SCALANA_MPI_FORTRAN_LINK;
  }
  return "";
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

// Options whose value is the next argument (so that value is not an input).
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
  bool show = false, help = false, version = false;
  std::vector<std::string> args; // user arguments minus --scalana-*
};

Invocation Parse(int argc, char **argv) {
  Invocation inv;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--scalana-show") {
      inv.show = true;
      continue;
    }
    if (a == "--scalana-help") {
      inv.help = true;
      continue;
    }
    if (a == "--scalana-version") {
      inv.version = true;
      continue;
    }
    inv.args.push_back(a);
    if (TakesSeparateValue(a)) {
      if (i + 1 < argc)
        inv.args.push_back(argv[++i]);
      continue;
    }
    if (a == "-c" || a == "-S" || a == "-E" || a == "-M" || a == "-MM" || a == "-fsyntax-only")
      inv.compile_only = true;
    else if (a.size() > 2 && a[0] == '-' && a[1] == 'g' && a.compare(0, 3, "-gz") != 0)
      inv.user_debug = true;
    else if (a == "-g")
      inv.user_debug = true;
    else if (a == "-" || (!a.empty() && a[0] != '-')) {
      inv.has_inputs = true;
      if (a == "-" || !IsLinkerInput(a))
        inv.has_sources = true;
    }
  }
  return inv;
}

void PrintHelp() {
  std::printf(
      "usage: %s [compiler options] files...\n\n"
      "Compiles MPI programs with %s and the ScalAna pass plugin, like mpicc/mpicxx/mpif90.\n"
      "All options go to the compiler unchanged. Added when compiling: -fpass-plugin, \n"
      "-gline-tables-only (unless a -g option is given) and the MPI compile flags; when\n"
      "linking: the MPI link flags and -Wl,--build-id.\n\n"
      "  --scalana-show     print the compiler command instead of running it\n"
      "  --scalana-version  print the wrapper and compiler versions\n"
      "  --scalana-help     this text\n\nenvironment:\n",
      WrapperName(), Compiler());
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

int Run(int argc, char **argv) {
  Invocation inv = Parse(argc, argv);
  if (inv.help) {
    PrintHelp();
    return 0;
  }
  std::vector<std::string> cmd{Compiler()};
  if (inv.version) {
    std::printf("%s %s (ScalAna), driving %s\n", WrapperName(), SCALANA_VERSION, Compiler());
    std::fflush(stdout);
    cmd.push_back("--version");
    inv.args.clear();
  }
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
      // Our `mpi` module (flang cannot read gfortran's mpi.mod) comes before
      // the MPI include directories, which hold gfortran's.
      std::string dir =
          FindBesideBin({"include/scalana-fortran", SCALANA_REL_INCLUDEDIR "/scalana-fortran"});
      if (!dir.empty())
        cmd.push_back("-I" + dir);
    }
    for (const std::string &f : SplitFlags(MpiCompileFlags()))
      cmd.push_back(f);
  }
  for (const std::string &a : inv.args)
    cmd.push_back(a);
  if (linking) {
    if (kLanguage == Language::Fortran) {
      std::string lib =
          FindBesideBin({"include/scalana-fortran/libscalana_mpi_module.a",
                         SCALANA_REL_INCLUDEDIR "/scalana-fortran/libscalana_mpi_module.a"});
      if (!lib.empty())
        cmd.push_back(lib);
    }
    for (const std::string &f : SplitFlags(MpiLinkFlags()))
      cmd.push_back(f);
    cmd.push_back("-Wl,--build-id");
  }

  const char *verbose = Env("SCALANA_WRAPPER_VERBOSE");
  if (inv.show || (verbose && *verbose && std::strcmp(verbose, "0") != 0)) {
    std::string line;
    for (const std::string &c : cmd)
      line += (line.empty() ? "" : " ") + Quote(c);
    std::fprintf(inv.show ? stdout : stderr, "%s\n", line.c_str());
    if (inv.show)
      return 0;
  }
  std::vector<char *> cargv;
  for (std::string &c : cmd)
    cargv.push_back(c.data());
  cargv.push_back(nullptr);
  execv(cargv[0], cargv.data());
  std::fprintf(stderr, "%s: error: cannot run %s: %s (configure ScalAna with -D%s=<path>)\n",
               WrapperName(), cargv[0], std::strerror(errno),
               kLanguage == Language::C     ? "SCALANA_CLANG"
               : kLanguage == Language::Cxx ? "SCALANA_CLANGXX"
                                            : "SCALANA_FLANG");
  return 127;
}

} // namespace
} // namespace scalana

int main(int argc, char **argv) { return scalana::Run(argc, argv); }
