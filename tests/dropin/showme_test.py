#!/usr/bin/env python3
"""What build systems ask the wrappers instead of compiling (tools/wrappers/showme.h).

  showme   every --showme question, and MPICH's -show, -compile-info and
           -link-info, gets what mpicc/mpicxx/mpifort answer, with the
           compiler the wrapper runs in place of theirs and, for Fortran, the
           wrapper's `mpi` module; MPI programs built with the printed
           commands run; version probes (--version, -v, -V, -qversion,
           -dumpversion, ...) get the compiler's own answers
  findmpi  a CMake project finds MPI with FindMPI given
           -DMPI_C_COMPILER=scalana-cc -DMPI_CXX_COMPILER=scalana-cxx while
           its own compilers are others, so FindMPI asks the wrappers; it
           must learn what it learns from mpicc and mpicxx, build through
           the wrappers (compiler launchers) and run under `scalana prof`
           with a profile that names the program's PSG
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dropin_test import environment, fail, fresh  # noqa: E402

# Our `mpi` module: its directory (-I) and its archive.
MODULE = re.compile(r"/scalana-fortran(/libscalana_mpi_module\.a)?$")

HELLO_C = r"""#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("sum %d\n", sum);
  MPI_Finalize();
  return 0;
}
"""
HELLO_F90 = """program hello
  use mpi
  implicit none
  integer :: rank, total, ierr
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'sum ', total
  call MPI_Finalize(ierr)
end program hello
"""


def ask(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def run(cmd, cwd=None, env=None):
    rc, out, err = ask(cmd, cwd, env)
    if rc != 0:
        fail("%s exited with %d" % (" ".join(cmd), rc), out + err)
    return out


def mpi_environment(work):
    env = environment(work)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_mpi_yield_when_idle": "1"})
    return env


class Pair:
    """A wrapper, the MPI wrapper whose answers it gives, the compiler it runs."""

    def __init__(self, wrapper, mpi, compiler):
        self.wrapper, self.mpi, self.compiler = wrapper, mpi, compiler
        self.fortran = wrapper.endswith("scalana-fc")
        self.name = os.path.basename(wrapper)
        # Open MPI's mpifort: the directory of gfortran's mpi.mod.
        self.mpi_incdir = (ask([mpi, "--showme:incdirs"])[1].split() or [""])[0]

    def both(self, question, cwd):
        return ask([self.wrapper] + question, cwd), ask([self.mpi] + question, cwd)

    def check_module(self, ours, theirs, what):
        """Ours minus the `mpi` module must be theirs. flang cannot read
        gfortran's mpi.mod: before MPI's module directory comes ours, before
        MPI's libraries the module's archive."""
        if [w for w in ours if not MODULE.search(w)] != theirs:
            fail("%s %s: '%s', %s gives '%s'" % (self.name, what, " ".join(ours),
                                                  os.path.basename(self.mpi), " ".join(theirs)))
        if not self.fortran:
            return
        for label, mine, mpis in [
                ("module directory", lambda w: MODULE.search(w) and not w.endswith(".a"),
                 lambda w: w in (self.mpi_incdir, "-I" + self.mpi_incdir)),
                ("module archive", lambda w: MODULE.search(w) and w.endswith(".a"),
                 lambda w: w.startswith("-L") or w.startswith("-l"))]:
            at = [i for i, w in enumerate(ours) if mine(w)]
            mpi_at = [i for i, w in enumerate(ours) if mpis(w)]
            if mpi_at and (len(at) != 1 or at[0] > mpi_at[0]) or at and not mpi_at:
                fail("%s %s: the %s is not once before MPI's: '%s'" % (self.name, what, label,
                                                                     " ".join(ours)))


def check_same(pair, question, work, command):
    """One question asked of both wrappers: the same answer but the command."""
    (rc, out, err), (mrc, mout, merr) = pair.both(question, work)
    what = " ".join(question)
    if rc != 0 or mrc != 0:
        fail("%s %s: exit %d (%s gives %d)" % (pair.name, what, rc, pair.mpi, mrc), out + err)
    if err:
        fail("%s %s wrote to standard error (FindMPI reads it with the answer)" % (pair.name, what),
             err)
    ours, theirs = out.split(), mout.split()
    if command:
        if not ours or ours[0] != pair.compiler:
            fail("%s %s names '%s', not the compiler it runs (%s)" % (
                pair.name, what, ours[0] if ours else "", pair.compiler), out)
        ours, theirs = ours[1:], theirs[1:]
    pair.check_module(ours, theirs, what)


def test_showme(args):
    work = fresh(args.work)
    env = mpi_environment(work)
    pairs = [Pair(os.path.join(args.bin, "scalana-cc"), args.mpicc, args.clang),
             Pair(os.path.join(args.bin, "scalana-cxx"), args.mpicxx, args.clangxx),
             Pair(os.path.join(args.bin, "scalana-fc"), args.mpifort, args.flang)]
    for pair in pairs:
        src = "hello.f90" if pair.fortran else "hello.c"
        # Command lines: the user's arguments, then the flags the step needs.
        for q in (["--showme"], ["-showme"], ["-show"], ["--showme", "-c", src],
                  ["--showme", "-E", src], ["--showme", "a.o", "-o", "app"], ["--showme", "-O2"],
                  ["--showme:command"], ["-showme:command", "-O2"]):
            check_same(pair, q, work, command=True)
        for q in (["--showme:compile"], ["-showme:compile"], ["--showme:link"], ["-showme:link"],
                  ["-O2", "-showme:compile"], ["--showme:incdirs"], ["--showme:libdirs"],
                  ["--showme:libs"]):
            check_same(pair, q, work, command=False)
        # MPICH's spellings: its -compile-info and -link-info print what -show
        # prints; Open MPI's wrappers have none of them.
        _, (_, show, _) = pair.both(["-show"], work)
        for q in ["-compile-info", "-compile_info", "-link-info", "-link_info"]:
            rc, out, err = ask([pair.wrapper, q])
            if rc != 0 or err or out.split()[:1] != [pair.compiler]:
                fail("%s %s: exit %d, '%s'" % (pair.name, q, rc, out + err))
            pair.check_module(out.split()[1:], show.split()[1:], q)
        (rc, out, _), (_, mout, _) = pair.both(["--showme:version"], work)
        if rc != 0 or out.split(": ", 1) != [pair.wrapper, mout.split(": ", 1)[1]]:
            fail("%s --showme:version: '%s', %s gives '%s'" % (pair.name, out, pair.mpi, mout))
        (rc, out, _), (_, mout, _) = pair.both(["--showme:help"], work)
        head = mout.replace(pair.mpi, pair.wrapper).splitlines()[:2]
        keys = re.findall(r"^\s+(-showme:\w+)", mout, re.M)
        if rc != 0 or out.splitlines()[:2] != head or not all(k in out for k in keys):
            fail("%s --showme:help lacks %s's usage or one of %s" % (pair.name, pair.mpi, keys),
                 out)
        (rc, _, err), (mrc, _, merr) = pair.both(["--showme:nonsense"], work)
        if rc != 1 or mrc != 1 or "unrecognized option: --showme:nonsense" not in err:
            fail("%s --showme:nonsense: exit %d, '%s' (%s: %d)" % (pair.name, rc, err, pair.mpi,
                                                                   mrc))
        print("%s: %s's answers, naming %s" % (pair.name, os.path.basename(pair.mpi),
                                               os.path.basename(pair.compiler)))

    # A build system compiling with the printed command gets a working MPI
    # program (flang with our `mpi` module).
    for pair, name, text in [(pairs[0], "hello.c", HELLO_C), (pairs[2], "hello.f90", HELLO_F90)]:
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
        exe = os.path.join(work, name.replace(".", "_"))
        command = run([pair.wrapper, "--showme", name, "-o", exe], work).split()
        run(command, work, env)
        out = run([args.mpirun, "-np", "2", exe], work, env)
        if "sum 1" not in out:
            fail("%s built from `%s --showme` printed '%s'" % (name, pair.name, out))
        print("%s: built with `%s --showme %s -o ...` and run at 2 ranks" % (name, pair.name, name))

    # Version probes (autoconf's, CMake's, makenek's): the compiler's answers.
    for pair in pairs:
        for probe in ["--version", "-v", "-V", "-qversion", "-version", "-dumpversion",
                      "-dumpfullversion", "-dumpmachine"]:
            ours, theirs = ask([pair.wrapper, probe], work), ask([pair.compiler, probe], work)
            if ours != theirs:
                fail("%s %s: %s, %s gives %s" % (pair.name, probe, ours, pair.compiler, theirs))
        version = ask([pair.wrapper, "--version"])[1]
        expect = r"flang(-new)? version \d+" if pair.fortran else r"clang version \d+"
        if not re.search(expect, version.splitlines()[0]):
            fail("%s --version does not name the compiler: %s" % (pair.name, version))
        print("%s: version probes answered by %s" % (pair.name, version.splitlines()[0]))


def cache(build):
    values = {}
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(r"^(MPI_\w+):\w+=(.*)$", line)
            if m:
                values[m.group(1)] = m.group(2)
    return values


def test_findmpi(args):
    work = fresh(args.work)
    env = mpi_environment(work)
    cc, cxx = os.path.join(args.bin, "scalana-cc"), os.path.join(args.bin, "scalana-cxx")
    configure = [args.cmake, "-S", args.source, "-G", args.generator,
                 "-DCMAKE_MAKE_PROGRAM=" + args.make]
    # What FindMPI learns from Open MPI's wrappers.
    reference = os.path.join(work, "mpicc")
    run(configure + ["-B", reference, "-DMPI_C_COMPILER=" + args.mpicc,
                     "-DMPI_CXX_COMPILER=" + args.mpicxx], work, env)
    # The project's compilers stay CMake's default, so FindMPI asks the
    # wrappers (were they the compilers, it would see that they build MPI
    # programs and ask nothing); the launchers put the wrappers in front of
    # every compile and link.
    build = os.path.join(work, "build")
    run(configure + ["-B", build, "-DMPI_C_COMPILER=" + cc, "-DMPI_CXX_COMPILER=" + cxx,
                     "-DCMAKE_C_COMPILER_LAUNCHER=%s;--scalana-launcher" % cc,
                     "-DCMAKE_CXX_COMPILER_LAUNCHER=%s;--scalana-launcher" % cxx,
                     "-DCMAKE_CXX_LINKER_LAUNCHER=%s;--scalana-launcher" % cxx], work, env)
    ref, got = cache(reference), cache(build)
    if got.get("MPI_C_COMPILER") != cc or got.get("MPI_CXX_COMPILER") != cxx:
        fail("FindMPI did not keep the wrappers: %s, %s" % (got.get("MPI_C_COMPILER"),
                                                          got.get("MPI_CXX_COMPILER")))
    if not got.get("MPI_C_LIB_NAMES") or not got.get("MPI_CXX_LIB_NAMES"):
        fail("FindMPI learnt no MPI library from the wrappers: %s" % got)
    for lang in ["C", "CXX"]:
        keys = ["MPI_%s_%s" % (lang, k) for k in ["COMPILE_OPTIONS", "COMPILE_DEFINITIONS",
                                                   "COMPILER_INCLUDE_DIRS", "LINK_FLAGS",
                                                   "LIB_NAMES"]]
        keys += ["MPI_%s_LIBRARY" % lib for lib in got["MPI_%s_LIB_NAMES" % lang].split(";")]
        for k in keys:
            if got.get(k) != ref.get(k):
                fail("FindMPI's %s: '%s' from the wrapper, '%s' from the MPI wrapper" %
                     (k, got.get(k), ref.get(k)))
    print("FindMPI: the wrappers' answers give it mpicc's and mpicxx's settings (libraries %s, %s)"
          % (got["MPI_C_LIB_NAMES"], got["MPI_CXX_LIB_NAMES"]))

    out = run([args.cmake, "--build", build, "--verbose"], work, env)
    for launcher in [cc, cxx]:
        if launcher + " --scalana-launcher" not in out:
            fail("no step of the build ran %s" % launcher, out)
    binary = os.path.join(build, "relax")
    psg = run([os.path.join(args.bin, "scalana"), "psg", binary], work)
    m = re.search(r"\bpsg (0x[0-9a-f]+)", psg)
    if not m:
        fail("scalana psg names no PSG of relax", psg)

    profile = os.path.join(work, "run")
    run([args.mpirun, "-np", "2", os.path.join(args.bin, "scalana"), "prof", "-o", profile, "--",
         binary, "1000"], work, env)
    doc = json.loads(run([os.path.join(args.bin, "scalana"), "show", profile, "--format", "json"],
                         work, env))
    if doc["meta"].get("psg_id") != m.group(1) or doc["meta"].get("world_size") != 2:
        fail("the profile names PSG %s at %s ranks, relax has %s" % (
            doc["meta"].get("psg_id"), doc["meta"].get("world_size"), m.group(1)))
    seen = {(r["function"], r.get("label", ""), os.path.basename(r["location"]).split(":")[0])
            for r in doc["resolved"] if r}
    for want in [("exchange_halo", "MPI_Sendrecv", "exchange.cpp"),
                 ("main", "MPI_Allreduce", "relax.c")]:
        if want not in seen:
            fail("the profile has no %s in %s (%s): %s" % (want[1], want[0], want[2], sorted(seen)))
    print("relax: built through the wrappers, profiled at 2 ranks, PSG %s" % m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["showme", "findmpi"])
    ap.add_argument("--bin", required=True, help="directory of the wrappers and scalana")
    ap.add_argument("--work", required=True, help="scratch directory (emptied)")
    ap.add_argument("--mpicc", required=True)
    ap.add_argument("--mpicxx", required=True)
    ap.add_argument("--mpifort", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--clang", help="showme: the compiler scalana-cc runs")
    ap.add_argument("--clangxx", help="showme: the compiler scalana-cxx runs")
    ap.add_argument("--flang", help="showme: the compiler scalana-fc runs")
    ap.add_argument("--source", help="findmpi: the project")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--make", default="ninja", help="the generator's build tool")
    ap.add_argument("--generator", default="Ninja")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    {"showme": test_showme, "findmpi": test_findmpi}[args.what](args)


if __name__ == "__main__":
    main()
