// The wrappers' GCC compatibility in isolation: option mapping, the legacy-C
// warning options, the filter of flang's diagnostics, the build key.
#include "compat.h"
#include "diagnostics.h"
#include "notices.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace scalana {
namespace {

using Args = std::vector<std::string>;

TEST(TranslateGccOptions, KeepsWhatClangTakes) {
  Args args = {"-O2",
               "-g",
               "-march=native",
               "-ftree-vectorize",
               "-fopenmp",
               "-Wall",
               "-Wextra",
               "-DX=1",
               "-I",
               "inc",
               "-c",
               "x.c",
               "-o",
               "x.o",
               "-Wl,--as-needed",
               "-std=gnu99",
               "-fno-tree-vectorize"};
  Translation t = TranslateGccOptions(Language::C, args);
  EXPECT_EQ(t.args, args);
  EXPECT_TRUE(t.notices.empty());
}

TEST(TranslateGccOptions, DropsAndMapsGccOnlyOptions) {
  Translation t = TranslateGccOptions(
      Language::C, {"-O5", "-ftree-vectorizer-verbose=2", "-finline-limit=600", "-fmax-errors=3",
                    "-Wno-maybe-uninitialized", "-Werror=maybe-uninitialized", "-flto=8", "--param",
                    "max-inline-insns-single=10", "-c", "x.c"});
  EXPECT_EQ(t.args, (Args{"-O3", "-ferror-limit=3", "-flto", "-c", "x.c"}));
  ASSERT_EQ(t.notices.size(), 8u);
  EXPECT_EQ(t.notices[0],
            "warning: optimization level '-O5' is not supported by clang; using '-O3'");
  EXPECT_EQ(t.notices[1],
            "note: dropped GCC option '-ftree-vectorizer-verbose=2' (clang rejects it)");
  EXPECT_EQ(t.notices[2], "note: dropped GCC option '-finline-limit=600' (clang ignores it)");
  EXPECT_EQ(t.notices[3], "note: GCC option '-fmax-errors=3' is '-ferror-limit=3' for clang");
}

TEST(TranslateGccOptions, ValuesOfSeparateOptionsAreNotOptions) {
  // -o's value looks like a GCC-only option but is a file name.
  Args args = {"-o", "-fipa-pta", "-Xlinker", "-fopt-info", "x.c"};
  EXPECT_EQ(TranslateGccOptions(Language::C, args).args, args);
}

TEST(TranslateGccOptions, Cxx) {
  Translation t =
      TranslateGccOptions(Language::Cxx, {"-fno-enforce-eh-specs", "-fpermissive", "-c", "x.cpp"});
  EXPECT_EQ(t.args, (Args{"-fpermissive", "-c", "x.cpp"}));
  EXPECT_EQ(t.notices.size(), 1u);
}

TEST(TranslateGccOptions, Fortran) {
  Translation t = TranslateGccOptions(
      Language::Fortran,
      {"-O3", "-fallow-argument-mismatch", "-ffree-line-length-none", "-Wall", "-Wno-unused",
       "-Werror", "-Wl,-z,now", "-Wp,-DN=4,-DM", "-std=legacy", "-std=f2018", "-ffixed-form",
       "-ffixed-line-length-132", "-fdefault-real-8", "-fopenmp", "-c", "x.f"});
  EXPECT_EQ(t.args,
            (Args{"-O3", "-Werror", "-Wl,-z,now", "-DN=4", "-DM", "-std=f2018", "-ffixed-form",
                  "-ffixed-line-length-132", "-fdefault-real-8", "-fopenmp", "-c", "x.f"}));
  EXPECT_EQ(t.notices.size(), 6u);
}

TEST(LegacyCWarnings, GccDefaultsUnlessErrorsAreAskedFor) {
  Args warnings = LegacyCWarnings({"-O2", "-c", "x.c"});
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "-Wno-error=implicit-function-declaration"),
            warnings.end());
  EXPECT_TRUE(LegacyCWarnings({"-Werror", "-c", "x.c"}).empty());
  EXPECT_TRUE(LegacyCWarnings({"-pedantic-errors", "-c", "x.c"}).empty());
}

// flang-new-19's output for a program calling MPI through mpif.h, with an
// MPI call in an include file and a warning about a procedure of the program.
const char *const kFlangOutput[] = {
    "./a.f:8:7: warning: Reference to the procedure 'mpi_bcast' has an implicit interface that "
    "is distinct from another reference: incompatible dummy argument #1: incompatible dummy data "
    "object types: REAL(8) vs INTEGER(4)",
    "        call mpi_bcast(ia, 3, MPI_INTEGER, 0, MPI_COMM_WORLD,",
    "        ^",
    "./a.f:6:7: previous reference to 'mpi_bcast'",
    "  100   call mpi_bcast(a, 3, MPI_DOUBLE_PRECISION, 0,",
    "        ^",
    "./sub.h:1:7: \033[0;1;35mwarning: \033[0mReference to the procedure 'pmpi_send' has an "
    "implicit interface that is distinct from another reference: incompatible dummy argument #1: "
    "incompatible dummy data object shapes",
    "        call pmpi_send(ia, 3, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)",
    "        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "./a.f:11:1: warning: included here",
    "        include 'sub.h'",
    "  ^^^^^^^^^^^^^^^^^^^^^",
    "./a.f:4:7: previous reference to 'pmpi_send'",
    "        call pmpi_send(a, 3, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, ierr)",
    "        ^",
    "./a.f:21:3: warning: Reference to the procedure 'helper' has an implicit interface that is "
    "distinct from another reference: incompatible dummy argument #1: incompatible dummy data "
    "object shapes",
    "    call helper(ibuf)",
    "    ^^^^^^^^^^^^^^^^^",
    "./a.f:20:3: previous reference to 'helper'",
    "    call helper(a)",
    "    ^^^^^^^^^^^^^^",
    "./a.f:30:3: error: No explicit type declared for 'y'",
};

TEST(DiagnosticFilter, DropsFlangMpiInterfaceWarningsOnly) {
  DiagnosticFilter filter(true);
  std::vector<std::string> kept;
  for (const char *line : kFlangOutput)
    if (filter.Keep(line))
      kept.push_back(line);
  ASSERT_EQ(kept.size(), 7u);
  EXPECT_EQ(kept[0].substr(0, 72), std::string(kFlangOutput[15]).substr(0, 72));
  EXPECT_EQ(kept[3], "./a.f:20:3: previous reference to 'helper'");
  EXPECT_EQ(kept[6], "./a.f:30:3: error: No explicit type declared for 'y'");
  EXPECT_EQ(filter.dropped(), 2u);
  EXPECT_TRUE(filter.code_error());
}

TEST(DiagnosticFilter, PassesEverythingWhenNotDropping) {
  DiagnosticFilter filter(false);
  for (const char *line : kFlangOutput)
    EXPECT_TRUE(filter.Keep(line));
  EXPECT_EQ(filter.dropped(), 0u);
}

TEST(DiagnosticFilter, NotesUnknownOptions) {
  DiagnosticFilter filter(false);
  EXPECT_TRUE(filter.Keep("clang: error: unknown argument: '-fgcc-only'"));
  EXPECT_TRUE(filter.Keep("flang-new: error: unknown argument '-fxyz'; did you mean '-fxy'?"));
  EXPECT_EQ(filter.unknown_options(), (Args{"-fgcc-only", "-fxyz"}));
  EXPECT_FALSE(filter.code_error());
}

TEST(StripColour, RemovesEscapeSequences) {
  EXPECT_EQ(StripColour("a.c:1:2: \033[0;1;31merror: \033[0mbad"), "a.c:1:2: error: bad");
}

TEST(BuildKey, NoBuildToolAboveATestDriver) {
  // ctest (or a shell run by hand) is not make or ninja: every notice prints.
  EXPECT_EQ(BuildKey(), "");
}

} // namespace
} // namespace scalana
