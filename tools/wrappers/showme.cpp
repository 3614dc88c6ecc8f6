// Answers to MPI wrapper questions, in the form of Open MPI 4.1's
// opal_wrapper (the MPI wrappers the flags come from).
#include "showme.h"

#include <algorithm>
#include <cstring>

namespace scalana {
namespace {

enum class Question {
  None,
  Full,
  Command,
  Compile,
  Link,
  Incdirs,
  Libdirs,
  Libs,
  Version,
  Help,
  Unknown
};

bool StartsWith(const std::string &s, const char *prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

Question Classify(const std::string &a) {
  // MPICH's -compile-info and -link-info print what its -show prints (for
  // its own wrappers of the last decade: FindMPI's comment says the same).
  for (const char *q : {"-showme", "--showme", "-show", "--show", "-compile-info", "-compile_info",
                        "-link-info", "-link_info"})
    if (a == q)
      return Question::Full;
  struct Key {
    const char *text;
    Question question;
  };
  static const Key kKeys[] = {{"command", Question::Command}, {"compile", Question::Compile},
                              {"link", Question::Link},       {"incdirs", Question::Incdirs},
                              {"libdirs", Question::Libdirs}, {"libs", Question::Libs},
                              {"version", Question::Version}, {"help", Question::Help}};
  for (const char *prefix : {"-showme:", "--showme:"}) {
    if (!StartsWith(a, prefix))
      continue;
    // Open MPI compares prefixes: --showme:compile:link is --showme:compile.
    std::string key = a.substr(std::strlen(prefix));
    for (const Key &k : kKeys)
      if (StartsWith(key, k.text))
        return k.question;
    return Question::Unknown;
  }
  return Question::None;
}

using Args = std::vector<std::string>;

void Append(Args &to, const Args &from) { to.insert(to.end(), from.begin(), from.end()); }

std::string Line(const Args &words) {
  std::string line;
  for (const std::string &w : words)
    line += (line.empty() ? "" : " ") + w;
  return line + "\n";
}

// Open MPI's --showme:compile is its preprocessor flags then its compiler
// flags, --showme:link its compiler flags then its linker flags and
// libraries (mpifort's compiler flags: -I<libdir>). A whole command line has
// the compiler flags once: they are the longest end of the one that also
// begins the other.
struct Parts {
  Args preproc, comp, link;
};

Parts Split(const MpiWrapperFacts &f) {
  size_t shared = std::min(f.compile.size(), f.link.size());
  for (; shared > 0; --shared)
    if (std::equal(f.compile.end() - shared, f.compile.end(), f.link.begin()))
      break;
  Parts p;
  if (!f.module_dir.empty())
    p.preproc.push_back("-I" + f.module_dir);
  p.preproc.insert(p.preproc.end(), f.compile.begin(), f.compile.end() - shared);
  p.comp.assign(f.compile.end() - shared, f.compile.end());
  if (!f.module_archive.empty())
    p.link.push_back(f.module_archive);
  p.link.insert(p.link.end(), f.link.begin() + shared, f.link.end());
  return p;
}

// Without Open MPI's lists (FindMPI's flags: -I, -L, -l and library paths).
Args IncludeDirs(const MpiWrapperFacts &f) {
  Args dirs;
  if (!f.module_dir.empty())
    dirs.push_back(f.module_dir);
  if (!f.incdirs.empty()) {
    Append(dirs, f.incdirs);
    return dirs;
  }
  for (const std::string &flag : f.compile)
    if (StartsWith(flag, "-I") && flag.size() > 2)
      dirs.push_back(flag.substr(2));
  return dirs;
}

bool IsLibraryPath(const std::string &flag) {
  if (flag.empty() || flag[0] != '/')
    return false;
  return flag.find(".so") != std::string::npos ||
         (flag.size() > 2 && flag.compare(flag.size() - 2, 2, ".a") == 0);
}

Args LibraryDirs(const MpiWrapperFacts &f) {
  if (!f.libdirs.empty())
    return f.libdirs;
  Args dirs;
  for (const std::string &flag : f.link) {
    std::string dir;
    if (StartsWith(flag, "-L") && flag.size() > 2)
      dir = flag.substr(2);
    else if (IsLibraryPath(flag))
      dir = flag.substr(0, flag.rfind('/'));
    if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
      dirs.push_back(dir);
  }
  return dirs;
}

Args Libraries(const MpiWrapperFacts &f) {
  if (!f.libs.empty())
    return f.libs;
  Args libs;
  for (const std::string &flag : f.link) {
    if (StartsWith(flag, "-l") && flag.size() > 2) {
      libs.push_back(flag.substr(2));
    } else if (IsLibraryPath(flag)) {
      std::string name = flag.substr(flag.rfind('/') + 1);
      if (StartsWith(name, "lib"))
        name = name.substr(3);
      libs.push_back(name.substr(0, name.find('.')));
    }
  }
  return libs;
}

// A command line as Open MPI's wrappers show it: the user's arguments, then
// the MPI flags the compile needs. -c and -S compile without linking, -E
// and -M only preprocess, and options without an input (`--version`) get
// no MPI flag.
Args CommandLine(const MpiWrapperFacts &f, const Args &user) {
  Parts p = Split(f);
  bool compile = true, link = true, input = user.empty();
  for (const std::string &a : user) {
    if (a == "-c" || a == "-S") {
      link = false;
    } else if (a == "-E" || a == "-M") {
      compile = false;
      link = false;
    } else if (!StartsWith(a, "-")) {
      input = true;
    }
  }
  Args words{f.compiler};
  Append(words, user);
  if (!input)
    return words;
  Append(words, p.preproc);
  if (compile)
    Append(words, p.comp);
  if (link)
    Append(words, p.link);
  return words;
}

std::string Help(const std::string &name) {
  return name + " [-showme[:<command,compile,link,incdirs,\n"
                "              libdirs,libs,version,help>]] args\n\n"
                "  -showme:command    Show command used to invoke real compiler\n"
                "  -showme:compile    Show flags added when compiling\n"
                "  -showme:link       Show flags added when linking\n"
                "  -showme:incdirs    Show list of include dirs added when compiling\n"
                "  -showme:libdirs    Show list of library dirs added when linking\n"
                "  -showme:libs       Show list of libraries added when linking\n"
                "  -showme:version    Show version of the MPI library\n"
                "  -showme:help       This help message\n"
                "  -show, -compile-info, -link-info   as -showme (MPICH's spellings)\n\n"
                "The command is the compiler this wrapper runs, the flags are those of the MPI\n"
                "wrapper; a compile through this wrapper also loads the ScalAna pass plugin\n"
                "(--scalana-show prints that command, --scalana-help lists the options).\n";
}

} // namespace

int FindMpiQuestion(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i)
    if (Classify(args[i]) != Question::None)
      return static_cast<int>(i);
  return -1;
}

MpiAnswer AnswerMpiQuestion(const MpiWrapperFacts &facts, const std::vector<std::string> &args,
                            size_t at) {
  Args user(args.begin(), args.begin() + at);
  user.insert(user.end(), args.begin() + at + 1, args.end());
  MpiAnswer answer;
  Parts p = Split(facts);
  Args words = user;
  switch (Classify(args[at])) {
  case Question::None:
  case Question::Full:
    answer.out = Line(CommandLine(facts, user));
    break;
  case Question::Command:
    words.insert(words.begin(), facts.compiler);
    answer.out = Line(words);
    break;
  case Question::Compile:
    Append(words, p.preproc);
    Append(words, p.comp);
    answer.out = Line(words);
    break;
  case Question::Link:
    Append(words, p.comp);
    Append(words, p.link);
    answer.out = Line(words);
    break;
  case Question::Incdirs:
    answer.out = Line(IncludeDirs(facts));
    break;
  case Question::Libdirs:
    answer.out = Line(LibraryDirs(facts));
    break;
  case Question::Libs:
    answer.out = Line(Libraries(facts));
    break;
  case Question::Version:
    answer.out = facts.name + ": " + (facts.version.empty() ? "unknown MPI" : facts.version) + "\n";
    break;
  case Question::Help:
    answer.out = Help(facts.name);
    break;
  case Question::Unknown:
    answer.err = facts.name + ": unrecognized option: " + args[at] + "\nType '" + facts.name +
                 " --showme:help' for usage.\n";
    answer.status = 1;
    break;
  }
  return answer;
}

} // namespace scalana
