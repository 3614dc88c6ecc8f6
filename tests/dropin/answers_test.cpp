// The answers to MPI wrapper questions in isolation (showme.h): how the
// Fortran module and the user's arguments enter them, and the lists read
// from FindMPI's flags when no Open MPI wrapper gave them.
#include "showme.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace scalana {
namespace {

using Args = std::vector<std::string>;

// mpifort's shape: its compiler flags (-I<lib>) end --showme:compile and
// begin --showme:link.
MpiWrapperFacts Fortran() {
  MpiWrapperFacts f;
  f.name = "scalana-fc";
  f.compiler = "/llvm/bin/flang-new";
  f.compile = {"-I/mpi/mod", "-I/mpi/lib"};
  f.link = {"-I/mpi/lib", "-L/mpi/lib/gf", "-lmpi_mpifh", "-lmpi"};
  f.incdirs = {"/mpi/mod"};
  f.libdirs = {"/mpi/lib/gf"};
  f.libs = {"mpi_mpifh", "mpi"};
  f.version = "Open MPI 4.1.4 (Language: Fortran)";
  f.module_dir = "/scalana/include/scalana-fortran";
  f.module_archive = "/scalana/include/scalana-fortran/libscalana_mpi_module.a";
  return f;
}

std::string Answer(const MpiWrapperFacts &f, const Args &args) {
  int at = FindMpiQuestion(args);
  EXPECT_GE(at, 0);
  MpiAnswer a = AnswerMpiQuestion(f, args, size_t(at));
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.err, "");
  return a.out;
}

TEST(MpiQuestions, FortranCommandHasTheModuleAndTheCompilerFlagsOnce) {
  EXPECT_EQ(Answer(Fortran(), {"--showme"}),
            "/llvm/bin/flang-new -I/scalana/include/scalana-fortran -I/mpi/mod -I/mpi/lib "
            "/scalana/include/scalana-fortran/libscalana_mpi_module.a -L/mpi/lib/gf "
            "-lmpi_mpifh -lmpi\n");
  EXPECT_EQ(Answer(Fortran(), {"-showme:compile"}),
            "-I/scalana/include/scalana-fortran -I/mpi/mod -I/mpi/lib\n");
  EXPECT_EQ(Answer(Fortran(), {"--showme:link"}),
            "-I/mpi/lib /scalana/include/scalana-fortran/libscalana_mpi_module.a -L/mpi/lib/gf "
            "-lmpi_mpifh -lmpi\n");
  EXPECT_EQ(Answer(Fortran(), {"--showme:incdirs"}), "/scalana/include/scalana-fortran /mpi/mod\n");
  EXPECT_EQ(Answer(Fortran(), {"--showme:libs"}), "mpi_mpifh mpi\n");
  EXPECT_EQ(Answer(Fortran(), {"--showme:version"}),
            "scalana-fc: Open MPI 4.1.4 (Language: Fortran)\n");
}

TEST(MpiQuestions, UserArgumentsComeFirstAndChooseTheStep) {
  MpiWrapperFacts f = Fortran();
  f.module_dir = f.module_archive = "";
  EXPECT_EQ(Answer(f, {"--showme", "-c", "x.f90"}),
            "/llvm/bin/flang-new -c x.f90 -I/mpi/mod -I/mpi/lib\n");
  EXPECT_EQ(Answer(f, {"-show", "-E", "x.f90"}), "/llvm/bin/flang-new -E x.f90 -I/mpi/mod\n");
  // Options without an input get no MPI flag, as `mpicc --showme --version`.
  EXPECT_EQ(Answer(f, {"--version", "-showme"}), "/llvm/bin/flang-new --version\n");
  EXPECT_EQ(Answer(f, {"-O2", "-showme:command"}), "/llvm/bin/flang-new -O2\n");
  // MPICH's spellings are -show's; Open MPI compares --showme: keys by prefix.
  EXPECT_EQ(Answer(f, {"-compile-info"}), Answer(f, {"-link_info"}));
  EXPECT_EQ(Answer(f, {"--showme:compile:link"}), "-I/mpi/mod -I/mpi/lib\n");
}

TEST(MpiQuestions, ListsFromFindMpiFlags) {
  MpiWrapperFacts f;
  f.name = "scalana-cc";
  f.compiler = "clang";
  f.compile = {"-I/opt/mpich/include"};
  f.link = {"/opt/mpich/lib/libmpi.so.12", "-L/opt/x", "-lm"};
  EXPECT_EQ(Answer(f, {"--showme:incdirs"}), "/opt/mpich/include\n");
  EXPECT_EQ(Answer(f, {"--showme:libdirs"}), "/opt/mpich/lib /opt/x\n");
  EXPECT_EQ(Answer(f, {"--showme:libs"}), "mpi m\n");
  EXPECT_EQ(Answer(f, {"--showme:version"}), "scalana-cc: unknown MPI\n");
}

TEST(MpiQuestions, OnlyTheQuestionsAreQuestions) {
  EXPECT_EQ(FindMpiQuestion({"-shared", "-showfoo", "-v", "--version", "x.c"}), -1);
  EXPECT_EQ(FindMpiQuestion({"-c", "x.c", "-show"}), 2);
  MpiAnswer a = AnswerMpiQuestion(Fortran(), {"--showme:nonsense"}, 0);
  EXPECT_EQ(a.status, 1);
  EXPECT_EQ(a.out, "");
  EXPECT_NE(a.err.find("scalana-fc: unrecognized option: --showme:nonsense"), std::string::npos);
}

} // namespace
} // namespace scalana
