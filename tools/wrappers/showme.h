// The questions build systems ask an MPI compiler wrapper instead of giving
// it something to compile: Open MPI's --showme family and MPICH's -show,
// -compile-info and -link-info. CMake's FindMPI reads the MPI flags from the
// answers, configure scripts and Nekbone's makenek the compiler's name.
// scalana-cc/-cxx/-fc answer as the MPI wrapper underneath does, with the
// compiler they run in place of the MPI wrapper's and the Fortran `mpi`
// module they add. The answers hold no flag of ScalAna's (the pass plugin,
// line tables): FindMPI hands every -f option it reads to the project's own
// compiler, which may be GCC.
#pragma once

#include <string>
#include <vector>

namespace scalana {

struct MpiWrapperFacts {
  std::string name;     // argv[0]: Open MPI's wrappers print the name they were run by
  std::string compiler; // what the ScalAna wrapper runs
  // The MPI wrapper's --showme:compile, --showme:link, --showme:incdirs,
  // --showme:libdirs and --showme:libs (the last three, when empty, are read
  // from the flags).
  std::vector<std::string> compile, link, incdirs, libdirs, libs;
  std::string version; // its --showme:version without the name: "Open MPI 4.1.4 (Language: C)"
  // Fortran: the directory of the wrapper's `mpi` module, searched before
  // MPI's (which hold gfortran's), and the module's archive, linked before
  // MPI's libraries. Empty for C and C++.
  std::string module_dir, module_archive;
};

// Index of the first argument that is such a question, or -1.
int FindMpiQuestion(const std::vector<std::string> &args);

struct MpiAnswer {
  std::string out, err; // for standard output, standard error
  int status = 0;
};

// The answer to args[at]. The other arguments are the user's: the answers
// that are command lines show them where Open MPI's wrappers do, before the
// MPI flags.
MpiAnswer AnswerMpiQuestion(const MpiWrapperFacts &facts, const std::vector<std::string> &args,
                            size_t at);

} // namespace scalana
