# Spack recipe for ScalAna, the way HPC centres install tools:
#
#   spack repo create <dir>; cp package.py <dir>/packages/scalana/
#   spack install scalana            # then: spack load scalana
#
# NOT TESTED: no Spack installation was available where it was written. It is
# the CMake build of this repository (CMakeLists.txt) expressed for Spack:
# dependency names and variants are Spack's builtin ones (llvm, openmpi, papi,
# libunwind, nlohmann-json, cli11, zlib-api, googletest, py-lit) as far as
# known without running Spack. Check it
# with `spack style` and `spack install --test=root scalana` before
# publishing it. `git` below must name the repository ScalAna is published
# in; until then, build a local checkout with
#   spack develop --path /path/to/scalana scalana@main && spack install scalana
from spack.package import *


class Scalana(CMakePackage):
    """Finds the root cause of scaling loss in MPI programs (C, C++, Fortran):
    compiler wrappers with an LLVM pass that embeds the Program Structure
    Graph, a sampling profiler, and graph-based detection and backtracking."""

    homepage = "https://example.org/scalana"  # the project's page, once published
    git = "https://example.org/scalana.git"  # the project's repository, once published

    version("main", branch="main")

    variant("fortran", default=True, description="scalana-fc and the Fortran mpi module (flang)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("ninja", type="build")
    generator("ninja")

    # The wrappers drive clang/flang 19 with the pass plugin; the plugin
    # links no LLVM library and takes LLVM's symbols from the compiler, so
    # clang, flang and opt must share one libLLVM.
    depends_on("llvm@19 +clang +llvm_dylib +link_llvm_dylib")
    depends_on("llvm@19 +flang", when="+fortran")
    # The wrappers take the MPI flags from Open MPI's mpicc/mpicxx/mpifort
    # --showme at configure time.
    depends_on("openmpi")
    depends_on("openmpi +fortran", when="+fortran")
    depends_on("papi")
    depends_on("libunwind")
    depends_on("nlohmann-json@3:")
    depends_on("cli11")
    depends_on("zlib-api")
    depends_on("pkgconfig", type="build")

    depends_on("googletest", type="test")
    depends_on("rapidcheck", type="test")
    depends_on("py-lit", type="test")
    depends_on("python@3:", type=("build", "test"))

    def cmake_args(self):
        llvm = self.spec["llvm"]
        args = [
            self.define("LLVM_DIR", llvm.prefix.lib.cmake.llvm),
            self.define("SCALANA_CLANG", llvm.prefix.bin.clang),
            self.define("SCALANA_CLANGXX", llvm.prefix.bin.join("clang++")),
            self.define("SCALANA_MPICC", self.spec["mpi"].mpicc),
            self.define("SCALANA_MPICXX", self.spec["mpi"].mpicxx),
            self.define("SCALANA_BUILD_TESTS", self.run_tests),
            self.define("SCALANA_BUILD_BENCH", False),
        ]
        if self.spec.satisfies("+fortran"):
            args += [
                self.define("SCALANA_FLANG", llvm.prefix.bin.join("flang-new")),
                self.define("SCALANA_MPIFORT", self.spec["mpi"].mpifc),
            ]
        else:
            # No Fortran compiler to drive: scalana-fc and the module are skipped.
            args.append(self.define("SCALANA_FLANG", "/nonexistent/flang-new"))
        return args

    def setup_run_environment(self, env):
        # `pkg-config --variable=cc scalana` and find_package(Scalana).
        env.prepend_path("PKG_CONFIG_PATH", self.prefix.lib.pkgconfig)
        env.prepend_path("CMAKE_PREFIX_PATH", self.prefix)

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_install(self):
        # Builds with make and CMake through the wrappers, and the
        # find_package/toolchain/pkg-config test of an installed tree.
        with working_dir(self.build_directory):
            ctest("--output-on-failure", "-R", "dropin")
