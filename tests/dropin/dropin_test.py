#!/usr/bin/env python3
"""The wrappers as drop-in mpicc/mpicxx/mpif90 on real build systems.

  make     builds tests/dropin/project with its Makefile, CC/CXX/FC = the
           wrappers, GCC-only options in CFLAGS/CXXFLAGS/FFLAGS (make -j2)
  cmake    builds the same project with CMake, the wrappers as its compilers
  install  `cmake --install`s the build tree into a temporary prefix; a CMake
           project uses it through find_package(Scalana) and through the
           toolchain file, a compile through pkg-config

Each build must succeed with at most one notice per option (make and ninja
run the wrapper once per file) and no flang warning about an MPI routine's
implicit interface, while other flang warnings still show.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# GCC-based build flags of the kind HPCCG, CoMD and the NAS benchmarks use:
# options clang/flang reject or ignore, an -O level clang lacks, a mapped one.
CFLAGS = ("-O5 -ftree-vectorizer-verbose=2 -fopt-info-vec-missed -finline-limit=600 "
          "-fno-tree-pre -Wno-maybe-uninitialized -fmax-errors=20")
CXXFLAGS = "-O3 -ftree-vectorizer-verbose=2 -fno-enforce-eh-specs -fipa-pta -Wno-class-memaccess"
FFLAGS = ("-O2 -fallow-argument-mismatch -ffree-line-length-none -funroll-loops "
          "-fno-range-check -Wall")
# (wrapper, option) pairs that must get exactly one notice.
EXPECTED_NOTICES = ([("scalana-cc", o) for o in CFLAGS.split() if o != "-O5"] +
                    [("scalana-cc", "-O5")] +
                    [("scalana-cxx", o) for o in CXXFLAGS.split() if o != "-O3"] +
                    [("scalana-fc", o) for o in FFLAGS.split() if o != "-O2"])


def fail(msg, output=""):
    if output:
        sys.stderr.write(output + "\n")
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def run(cmd, cwd, env, expect_ok=True):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if expect_ok and p.returncode != 0:
        fail("%s exited with %d" % (" ".join(cmd), p.returncode), p.stdout)
    return p


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def environment(work):
    """Marker files of once-per-build notices in a directory of this test."""
    env = dict(os.environ)
    env.pop("SCALANA_STRICT", None)
    tmp = fresh(os.path.join(work, "tmp"))
    env["TMPDIR"] = tmp
    env["XDG_RUNTIME_DIR"] = tmp
    return env


def check_build_output(out, what):
    notices = [l for l in out.splitlines() if re.match(r"^scalana-(cc|cxx|fc): (note|warning): ", l)]
    for wrapper, option in EXPECTED_NOTICES:
        n = sum(1 for l in notices if l.startswith(wrapper + ":") and "'" + option + "'" in l)
        if n != 1:
            fail("%s: %d notices of %s about %s, expected 1" % (what, n, wrapper, option), out)
    if len(notices) != len(EXPECTED_NOTICES):
        fail("%s: %d notices, expected %d" % (what, len(notices), len(EXPECTED_NOTICES)), out)
    # clang's own warning for -O5 would come once per file.
    if "optimization level '-O5' is not supported; using" in out:
        fail(what + ": clang warned about -O5", out)
    mpi = re.findall(r"Reference to the procedure '(p?mpi_\w+)'", out)
    if mpi:
        fail("%s: flang warnings about MPI routines remain: %s" % (what, sorted(set(mpi))), out)
    if "call accumulate(ibuf, 4)" not in out:
        fail(what + ": flang's warning about accumulate() (not MPI) is gone", out)
    for name in ["solve", "report"]:
        if "call to undeclared function '%s'" % name not in out:
            fail(what + ": no implicit-declaration warning for " + name, out)
    print("%s: built; %d notices, one per option; no flang MPI interface warning" %
          (what, len(notices)))


def check_psg(scalana, binary, expect):
    p = run([scalana, "psg", binary], os.path.dirname(binary), None)
    for e in expect:
        if e not in p.stdout:
            fail("scalana psg %s lacks '%s'" % (binary, e), p.stdout)


def has_psg_section(readelf, binary):
    p = run([readelf, "-S", binary], None, None)
    return "scalana_psg" in p.stdout


def test_make(args):
    work = fresh(args.work)
    env = environment(work)
    build = fresh(os.path.join(work, "make"))
    wrappers = ["CC=" + os.path.join(args.bin, "scalana-cc"),
                "CXX=" + os.path.join(args.bin, "scalana-cxx"),
                "FC=" + os.path.join(args.bin, "scalana-fc")]

    def make(jobs):
        return [args.make, "-j%d" % jobs, "-f", os.path.join(args.source, "Makefile"),
                "SRC=" + args.source]

    cmd = make(2)
    p = run(cmd + wrappers + ["CFLAGS=" + CFLAGS, "CXXFLAGS=" + CXXFLAGS, "FFLAGS=" + FFLAGS],
            build, env)
    check_build_output(p.stdout, "make")
    scalana = os.path.join(args.bin, "scalana")
    check_psg(scalana, os.path.join(build, "legacy"), ["MPI MPI_Barrier", "(in exchange)"])
    check_psg(scalana, os.path.join(build, "nas_like"), ["MPI MPI_Bcast", "MPI MPI_Recv"])
    # Another make is another build: its notices come again, once each.
    p = run(cmd + wrappers + ["-B", "CFLAGS=" + CFLAGS, "CXXFLAGS=" + CXXFLAGS,
                              "FFLAGS=" + FFLAGS], build, env)
    check_build_output(p.stdout, "make again")
    # --scalana-strict (here SCALANA_STRICT=1) is the compiler as it is:
    # clang rejects the implicit declarations of legacy C.
    # One job: two compilers failing at once interleave their messages and
    # split the one looked for.
    strict = fresh(os.path.join(work, "strict"))
    env["SCALANA_STRICT"] = "1"
    p = run(make(1) + wrappers + ["CFLAGS=-O2", "legacy"], strict, env, expect_ok=False)
    if p.returncode == 0 or "error: call to undeclared function 'solve'" not in p.stdout:
        fail("SCALANA_STRICT=1: clang did not reject the implicit declaration", p.stdout)
    if "scalana-cc:" in p.stdout:
        fail("SCALANA_STRICT=1: the wrapper added a notice", p.stdout)
    print("strict: clang rejects the implicit declaration")


def test_cmake(args):
    work = fresh(args.work)
    env = environment(work)
    build = os.path.join(work, "build")
    configure = [args.cmake, "-S", args.source, "-B", build, "-G", args.generator,
                 "-DCMAKE_MAKE_PROGRAM=" + args.make,
                 "-DCMAKE_C_COMPILER=" + os.path.join(args.bin, "scalana-cc"),
                 "-DCMAKE_CXX_COMPILER=" + os.path.join(args.bin, "scalana-cxx"),
                 "-DCMAKE_Fortran_COMPILER=" + os.path.join(args.bin, "scalana-fc"),
                 "-DCMAKE_C_FLAGS=" + CFLAGS, "-DCMAKE_CXX_FLAGS=" + CXXFLAGS,
                 "-DCMAKE_Fortran_FLAGS=" + FFLAGS]
    run(configure, work, env)
    p = run([args.cmake, "--build", build, "--parallel", "2"], work, env)
    check_build_output(p.stdout, "cmake")
    check_psg(os.path.join(args.bin, "scalana"), os.path.join(build, "legacy"),
              ["MPI MPI_Barrier", "(in exchange)"])


def test_install(args):
    work = fresh(args.work)
    env = environment(work)
    prefix = os.path.join(work, "prefix")
    run([args.cmake, "--install", args.build, "--prefix", prefix], work, env)
    scalana = os.path.join(prefix, "bin", "scalana")

    # find_package(Scalana) + scalana_use_wrappers(app): app through the
    # wrappers, plain with the project's compiler.
    build = os.path.join(work, "package")
    run([args.cmake, "-S", args.source, "-B", build, "-G", args.generator,
         "-DCMAKE_MAKE_PROGRAM=" + args.make, "-DCMAKE_PREFIX_PATH=" + prefix], work, env)
    p = run([args.cmake, "--build", build, "--parallel", "2", "--verbose"], work, env)
    if "scalana-cxx --scalana-launcher" not in p.stdout:
        fail("app was not built through the wrappers", p.stdout)
    if not has_psg_section(args.readelf, os.path.join(build, "app")):
        fail("app has no scalana_psg section")
    if has_psg_section(args.readelf, os.path.join(build, "plain")):
        fail("plain has a scalana_psg section: its compiler was changed too")
    check_psg(scalana, os.path.join(build, "app"), ["Root main", "MPI MPI_Allreduce"])
    print("find_package(Scalana): app built through the wrappers, plain not")

    # The toolchain file: every target of the project through the wrappers.
    build = os.path.join(work, "toolchain")
    toolchain = os.path.join(prefix, args.libdir, "cmake", "Scalana", "ScalanaToolchain.cmake")
    run([args.cmake, "-S", args.source, "-B", build, "-G", args.generator,
         "-DCMAKE_MAKE_PROGRAM=" + args.make, "-DCMAKE_TOOLCHAIN_FILE=" + toolchain,
         "-DCMAKE_PREFIX_PATH=" + prefix], work, env)
    run([args.cmake, "--build", build, "--parallel", "2"], work, env)
    if not has_psg_section(args.readelf, os.path.join(build, "plain")):
        fail("with the toolchain file, plain has no scalana_psg section")
    print("ScalanaToolchain.cmake: every target built through the wrappers")

    # pkg-config
    env["PKG_CONFIG_PATH"] = os.path.join(prefix, args.libdir, "pkgconfig")
    p = run(["pkg-config", "--variable=cc", "scalana"], work, env)
    cc = p.stdout.strip()
    if cc != os.path.join(prefix, "bin", "scalana-cc"):
        fail("pkg-config --variable=cc scalana gives '%s'" % cc)
    p = run(["pkg-config", "--modversion", "scalana"], work, env)
    obj = os.path.join(work, "helper.o")
    run([cc, "-O2", "-c", os.path.join(args.source, "helper.c"), "-o", obj], work, env)
    if not has_psg_section(args.readelf, obj):
        fail("the pkg-config compiler built no scalana_psg section")
    print("pkg-config: scalana %s, cc %s" % (p.stdout.strip(), cc))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["make", "cmake", "install"])
    ap.add_argument("--bin", required=True, help="directory of the wrappers and scalana")
    ap.add_argument("--source", required=True, help="the project to build")
    ap.add_argument("--work", required=True, help="scratch directory (emptied)")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--make", default="make", help="make for `make`, the generator's tool else")
    ap.add_argument("--generator", default="Ninja")
    ap.add_argument("--build", help="install: the ScalAna build tree")
    ap.add_argument("--libdir", default="lib", help="install: CMAKE_INSTALL_LIBDIR")
    ap.add_argument("--readelf", default="llvm-readelf")
    args = ap.parse_args()
    {"make": test_make, "cmake": test_cmake, "install": test_install}[args.what](args)


if __name__ == "__main__":
    main()
