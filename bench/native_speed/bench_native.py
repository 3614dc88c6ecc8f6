#!/usr/bin/env python3
"""What a user pays for ScalAna: speed of programs built with the wrappers,
with and without the profiler, against the same programs built without them.

usage: bench_native.py --bin BUILD/bin [--work DIR] [--runs 5] [--ranks 1,2]
                       [--programs stencil,shapes,forall,heat] [--scale 1.0]
                       [--hz N] [--no-instructions]

Each program of programs/ is built twice, with the flags -O2 -g:
  plain    Open MPI's mpicc/mpicxx/mpif90 driving clang-19/clang++-19/
           flang-new-19 (OMPI_CC/OMPI_CXX/OMPI_FC): the baseline;
  scalana  build/bin/scalana-cc/-cxx/-fc;
and run three ways under `mpirun --oversubscribe -np R`:
  (a) the plain build, (b) the scalana build, (c) the scalana build under
  `scalana prof -o DIR --` (the default sampling rate unless --hz is given).
The runs alternate a, b, c, then b, c, a, then c, a, b, ... so drift in the
machine's load hits all three alike; the tables give medians and, for (b) and
(c), the median of the per-round ratios to (a) with their range.

Each program prints "native_speed wall=<s> cpu=<s> check=<x>" on rank 0: the
main phase's MPI_Wtime span (max over ranks), its process CPU time summed over
ranks, and a checksum that must be the same for every build.

Also printed: the .text bytes of each program's object and executable (plain
vs scalana), the loops the vectoriser reports (-Rpass=loop-vectorize; the
two builds must vectorise the same loops), and the instructions the compiler
executes on each program's source (valgrind callgrind, as
bench/compile_overhead does): the exact command mpicc/mpicxx/mpif90 runs
(--showme) against the exact command the wrapper runs (--scalana-show).
"""
import argparse
import collections
import glob
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = ["-O2", "-g"]

# language: (Open MPI driver, its compiler variable, the compiler, our wrapper)
LANGS = {
    "c": ("mpicc", "OMPI_CC", "clang-19", "scalana-cc"),
    "cxx": ("mpicxx", "OMPI_CXX", "clang++-19", "scalana-cxx"),
    "fortran": ("mpif90", "OMPI_FC", "flang-new-19", "scalana-fc"),
}

Program = collections.namedtuple("Program", "name source lang steps what simd_kernels",
                                 defaults=(0,))
# steps: the main loop's trip count, chosen for ~1-2 s per run at 1 and 2
# ranks on an idle 2-core machine (weak scaling: the work per rank is fixed).
PROGRAMS = [
    Program("stencil", "stencil.c", "c", 5000, "C: Jacobi stencil + CSR mat-vec, halo exchange"),
    Program("shapes", "shapes.cpp", "cxx", 900, "C++: virtual calls, noinline helpers, recursion"),
    # simd_kernels: the forall<simd_exec> kernels (daxpy, 3-point stencil,
    # triad, 5-point stencil rows, update) that must be vectorised.
    Program("forall", "forall.cpp", "cxx", 6000, "C++: forall<Policy>(range, lambda), 3-deep lambdas",
            simd_kernels=5),
    Program("heat", "heat.f90", "fortran", 6000, "Fortran (mpif.h): heat equation, subroutines"),
]

VARIANTS = ("plain", "scalana", "prof")
RESULT = re.compile(r"native_speed\s+wall=\s*(\S+)\s+cpu=\s*(\S+)\s+check=\s*(\S+)")
REMARK = re.compile(r"^(\S+?):(\d+):\d+: remark: (vectorized loop[^\[]*?)\s*\[-Rpass=loop-vectorize\]",
                    re.M)


class BenchError(Exception):
    pass


def plain_env():
    e = dict(os.environ)
    for _, var, compiler, _ in LANGS.values():
        e[var] = compiler
    return e


def run_env(tmpdir):
    # A stray SCALANA_* setting in the caller's environment would change what
    # is measured; the profiler's options come from its command line only.
    e = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    e.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
             # Open MPI's session directory lives under TMPDIR; concurrent
             # jobs sharing one race on it, so every launch gets its own.
             TMPDIR=tmpdir)
    return e


def check_run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise BenchError("%s failed (status %d):\n%s" % (" ".join(cmd), p.returncode,
                                                           (p.stdout + p.stderr)[-3000:]))
    return p


def driver(prog, variant, args):
    """The compiler command and environment that build `prog` for `variant`."""
    mpi, _, _, wrapper = LANGS[prog.lang]
    if variant == "plain":
        return [mpi], plain_env()
    return [os.path.join(args.bin, wrapper)], dict(os.environ)


def build(prog, variant, args):
    """Compiles and links in two steps, as a makefile would, so the object
    (the program's own code) can be measured apart from the executable."""
    d = os.path.join(args.work, "build", variant, prog.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cmd, env = driver(prog, variant, args)
    src = os.path.join(HERE, "programs", prog.source)
    obj, exe = os.path.join(d, prog.name + ".o"), os.path.join(d, prog.name)
    # cwd: flang writes the program's .mod files into the current directory.
    check_run(cmd + FLAGS + ["-c", src, "-o", obj], cwd=d, env=env)
    check_run(cmd + FLAGS + [obj, "-o", exe], cwd=d, env=env)
    return obj, exe


def text_bytes(size_tool, path):
    out = check_run([size_tool, "-A", path]).stdout
    total = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".text") and parts[1].isdigit():
            total += int(parts[1])
    return total


def vectorized_loops(prog, variant, args):
    """The loop-vectorize remarks of one compile, as file:line: message."""
    cmd, env = driver(prog, variant, args)
    d = os.path.join(args.work, "remarks", variant)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(HERE, "programs", prog.source)
    p = check_run(cmd + FLAGS + ["-Rpass=loop-vectorize", "-c", src, "-o",
                                 os.path.join(d, prog.name + ".o")], cwd=d, env=env)
    return sorted("%s:%s: %s" % (os.path.basename(f), line, msg)
                  for f, line, msg in REMARK.findall(p.stderr))


def simd_loop_line(prog):
    """Line of the loop under `#pragma clang loop vectorize(enable)`."""
    lines = open(os.path.join(HERE, "programs", prog.source)).read().splitlines()
    for i, text in enumerate(lines):
        if "#pragma clang loop vectorize(enable)" in text:
            return i + 2  # 1-based, the line after the pragma
    raise SystemExit("%s: no vectorize(enable) pragma" % prog.source)


def compiler_command(prog, variant, args, obj):
    """The command the driver would run to compile `prog` (not the driver
    itself: its own start-up is not the compiler's work)."""
    cmd, env = driver(prog, variant, args)
    show = "--showme" if variant == "plain" else "--scalana-show"
    src = os.path.join(HERE, "programs", prog.source)
    out = check_run(cmd + [show] + FLAGS + ["-c", src, "-o", obj], env=env).stdout
    return shlex.split(out)


def instructions(command, cwd):
    """Instructions executed by the compiler and every process it starts
    (flang's driver runs `flang-new -fc1` as a child), counted by callgrind:
    unlike CPU time they do not scatter with the machine's load."""
    with tempfile.TemporaryDirectory(dir=cwd) as d:
        check_run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                   "--callgrind-out-file=%s/cg.%%p" % d] + command, cwd=cwd)
        total = 0
        for f in glob.glob(os.path.join(d, "cg.*")):
            for line in open(f, errors="replace"):
                if line.startswith("totals:"):
                    total += int(line.split()[1])
        return total


def launch(args, np, argv, label):
    """One mpirun; returns {wall, cpu, check, process} (process: the whole
    mpirun's wall time, start-up and the profiler's final write included)."""
    tmp = tempfile.mkdtemp(prefix="tmp-", dir=os.path.join(args.work, "runs"))
    cmd = ["mpirun", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-np", str(np)] + argv
    try:
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, env=run_env(tmp),
                           cwd=os.path.join(args.work, "runs"), timeout=args.timeout)
        process = time.monotonic() - t0
    except subprocess.TimeoutExpired:
        raise BenchError("%s: timed out after %d s" % (label, args.timeout))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if p.returncode != 0:
        raise BenchError("%s: %s failed (status %d):\n%s" % (
            label, " ".join(cmd), p.returncode, (p.stdout + p.stderr)[-2000:]))
    m = RESULT.search(p.stdout)
    if not m:
        raise BenchError("%s: no native_speed line in:\n%s" % (label, p.stdout[-2000:]))
    return {"wall": float(m.group(1)), "cpu": float(m.group(2)), "check": m.group(3),
            "process": process}


def run_variant(args, prog, variant, exe, np, steps, label):
    argv = [exe, str(steps)]
    if variant != "prof":
        return launch(args, np, argv, label)
    out = os.path.join(args.work, "runs", "profile-%s-np%d" % (prog.name, np))
    shutil.rmtree(out, ignore_errors=True)
    prof = [os.path.join(args.bin, "scalana"), "prof", "-o", out]
    if args.hz:
        prof += ["--hz", str(args.hz)]
    try:
        r = launch(args, np, prof + ["--"] + argv, label)
        if not any(os.path.exists(os.path.join(out, f))
                   for f in ("profile.scalana", "profile.json.gz")):
            raise BenchError("%s: the run wrote no profile in %s" % (label, out))
        return r
    finally:
        shutil.rmtree(out, ignore_errors=True)


def measure(args, programs, exes):
    """results[(name, np)][variant] = one entry per round (None: failed)."""
    results = collections.defaultdict(lambda: {v: [] for v in VARIANTS})
    errors = []
    for np in args.ranks:
        for prog in programs:
            steps = max(1, round(prog.steps * args.scale))
            runnable = [v for v in VARIANTS if exes.get((prog.name, "plain" if v == "plain"
                                                         else "scalana"))]
            if np == args.ranks[0]:
                # Untimed: brings binaries and libraries into the page cache
                # so the first timed variant does not pay for it.
                for v in runnable:
                    try:
                        run_variant(args, prog, v, exes[(prog.name, "plain" if v == "plain"
                                                         else "scalana")], np,
                                    max(1, steps // 20), "warm-up")
                    except BenchError:
                        pass
            for i in range(args.runs):
                # Rotate which variant goes first, so load that changes within
                # a round does not always fall on the same one.
                for v in VARIANTS[i % len(VARIANTS):] + VARIANTS[:i % len(VARIANTS)]:
                    label = "%s np=%d %s run %d/%d" % (prog.name, np, v, i + 1, args.runs)
                    exe = exes.get((prog.name, "plain" if v == "plain" else "scalana"))
                    r = None
                    if exe:
                        try:
                            r = run_variant(args, prog, v, exe, np, steps, label)
                            print("  %-32s wall %.3f s  cpu %.3f s" % (label, r["wall"], r["cpu"]),
                                  file=sys.stderr)
                        except BenchError as e:
                            errors.append(str(e))
                            print("  %s: FAILED" % label, file=sys.stderr)
                    results[(prog.name, np)][v].append(r)
                sys.stderr.flush()
    return results, errors


def ratio_cell(rounds, base_rounds, key):
    vals = [r[key] for r in rounds if r]
    pairs = [(r[key], b[key]) for r, b in zip(rounds, base_rounds) if r and b and b[key] > 0]
    if not vals:
        return "n/a"
    cell = "%.3f" % statistics.median(vals)
    if pairs:
        ratios = [a / b for a, b in pairs]
        cell += ", x%.3f" % statistics.median(ratios)
        if len(ratios) > 1:
            cell += " [%.2f-%.2f]" % (min(ratios), max(ratios))
    return cell


def print_tables(args, programs, results):
    titles = {
        "wall": "In-program wall time of the main phase (s, max over ranks)",
        "cpu": "In-program CPU time of the main phase (s, summed over ranks)",
        "process": "Whole mpirun (s: start-up, main phase, finalize and profile write)",
    }
    for key in ("wall", "cpu", "process"):
        print()
        print("%s; median of %d alternating runs; ratio: median of the per-round ratios to "
              "plain [min-max]" % (titles[key], args.runs))
        print()
        print("| program | ranks | plain (s) | scalana build (s, ratio) | under prof (s, ratio) |")
        print("| --- | --- | --- | --- | --- |")
        for np in args.ranks:
            for prog in programs:
                res = results[(prog.name, np)]
                base = [r[key] for r in res["plain"] if r]
                print("| %s | %d | %s | %s | %s |" % (
                    prog.name, np, "%.3f" % statistics.median(base) if base else "n/a",
                    ratio_cell(res["scalana"], res["plain"], key),
                    ratio_cell(res["prof"], res["plain"], key)))
    # A build that changes the results is a miscompile, not a slowdown.
    for np in args.ranks:
        for prog in programs:
            checks = {v: sorted({r["check"] for r in results[(prog.name, np)][v] if r})
                      for v in VARIANTS}
            distinct = {c for cs in checks.values() for c in cs}
            if len(distinct) > 1:
                print("WARNING: %s np=%d: checksums differ between runs/builds: %s" %
                      (prog.name, np, checks))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="build/bin: scalana, scalana-cc/-cxx/-fc")
    ap.add_argument("--work", help="scratch directory for builds and runs "
                    "(default: BIN/../bench-native); emptied first")
    ap.add_argument("--runs", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--ranks", default="1,2", help="comma-separated rank counts (default 1,2)")
    ap.add_argument("--programs", default=",".join(p.name for p in PROGRAMS),
                    help="comma-separated subset of " + ",".join(p.name for p in PROGRAMS))
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every program's step count (default 1.0: ~1-2 s per run)")
    ap.add_argument("--hz", type=int, help="sampling rate for `scalana prof` (default: its own)")
    ap.add_argument("--size", default=shutil.which("llvm-size-19") or "size",
                    help="size tool understanding -A (default llvm-size-19, else size)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per mpirun")
    ap.add_argument("--no-instructions", action="store_true",
                    help="skip the callgrind compiler instruction counts (minutes)")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.work = os.path.abspath(args.work or os.path.join(args.bin, "..", "bench-native"))
    args.ranks = [int(x) for x in args.ranks.split(",") if x]
    wanted = args.programs.split(",")
    unknown = set(wanted) - {p.name for p in PROGRAMS}
    if unknown:
        ap.error("unknown program(s): " + ", ".join(sorted(unknown)))
    programs = [p for p in PROGRAMS if p.name in wanted]
    # The scratch directory is emptied: refuse one this script did not make.
    marker = os.path.join(args.work, ".bench-native")
    if os.path.isdir(args.work) and os.listdir(args.work) and not os.path.exists(marker):
        ap.error("%s is not empty and was not made by this script; pick another --work" %
                 args.work)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, "runs"))
    open(marker, "w").close()

    version = subprocess.run(["clang-19", "--version"], capture_output=True, text=True).stdout
    print("native speed: plain = Open MPI drivers with clang-19/clang++-19/flang-new-19, "
          "scalana = %s/scalana-cc|cxx|fc; flags %s" % (args.bin, " ".join(FLAGS)))
    print("compiler: %s; %d CPUs; load average at start %.2f" % (
        version.splitlines()[0] if version else "?", os.cpu_count() or 0, os.getloadavg()[0]))
    for p in programs:
        print("  %-8s %-12s %s (%d steps)" % (p.name, p.source, p.what,
                                              max(1, round(p.steps * args.scale))))
    sys.stdout.flush()

    exes, objs, build_errors = {}, {}, []
    for prog in programs:
        for variant in ("plain", "scalana"):
            try:
                objs[(prog.name, variant)], exes[(prog.name, variant)] = build(prog, variant, args)
            except BenchError as e:
                build_errors.append("build %s (%s): %s" % (prog.name, variant, e))
    for e in build_errors:
        print("ERROR: " + e)

    results, errors = measure(args, programs, exes)
    print_tables(args, programs, results)
    for e in errors:
        print("ERROR: " + e)
    print("load average at the end of the runs %.2f" % os.getloadavg()[0])

    # Static figures: deterministic, so one build or compile each.
    print()
    print(".text bytes (%s -A): the program's object, and the linked executable" %
          os.path.basename(args.size))
    print()
    print("| program | object plain | object scalana (ratio) | executable plain "
          "| executable scalana (ratio) |")
    print("| --- | --- | --- | --- | --- |")
    for prog in programs:
        cells = []
        for paths in (objs, exes):
            p, s = paths.get((prog.name, "plain")), paths.get((prog.name, "scalana"))
            tp = text_bytes(args.size, p) if p else None
            ts = text_bytes(args.size, s) if s else None
            cells.append("%d" % tp if tp is not None else "n/a")
            cells.append("%d (x%.3f)" % (ts, ts / tp) if ts is not None and tp else
                         ("%d" % ts if ts is not None else "n/a"))
        print("| %s | %s |" % (prog.name, " | ".join(cells)))
    sys.stdout.flush()

    print()
    print("Vectorised loops (-Rpass=loop-vectorize remarks; both builds must vectorise the "
          "same loops)")
    print()
    print("| program | plain | scalana | same |")
    print("| --- | --- | --- | --- |")
    details, remarks = [], {}
    for prog in programs:
        got = {}
        for variant in ("plain", "scalana"):
            try:
                got[variant] = remarks[(prog.name, variant)] = vectorized_loops(prog, variant, args)
            except BenchError as e:
                details.append("%s (%s): %s" % (prog.name, variant, e))
        same = ("yes" if got.get("plain") == got.get("scalana") else "NO") if len(got) == 2 else "n/a"
        print("| %s | %s | %s | %s |" % (
            prog.name, *(len(got[v]) if v in got else "n/a" for v in ("plain", "scalana")), same))
        if same == "NO":
            for variant in ("plain", "scalana"):
                details.append("%s, %s build:\n    %s" % (
                    prog.name, variant, "\n    ".join(got[variant]) or "(no loop vectorised)"))
    for d in details:
        print("  " + d)
    for prog in programs:
        if prog.simd_kernels:
            # Every kernel is inlined into one loop, the simd_exec executor's,
            # so the remarks all carry that loop's line; count them there.
            line = simd_loop_line(prog)
            counts = {v: sum(1 for r in remarks[(prog.name, v)]
                             if r.startswith("%s:%d:" % (prog.source, line)))
                      if (prog.name, v) in remarks else None for v in ("plain", "scalana")}
            verdict = ("all vectorised in both builds" if counts["plain"] == counts["scalana"] ==
                       prog.simd_kernels else "NOT all vectorised in both builds")
            print("%s: %d simd_exec kernel loops (%s:%d): vectorised in the plain build %s, in the "
                  "scalana build %s: %s" % (prog.name, prog.simd_kernels, prog.source, line,
                                             counts["plain"], counts["scalana"], verdict))
    sys.stdout.flush()

    if not args.no_instructions:
        if not shutil.which("valgrind"):
            print("\nvalgrind not found: no compiler instruction counts")
            return
        print()
        print("Compiler instructions on each program's source (callgrind, -c %s; plain: the "
              "command mpicc/mpicxx/mpif90 runs; scalana: the command the wrapper runs)" %
              " ".join(FLAGS))
        print()
        print("| program | plain | scalana (ratio) |")
        print("| --- | --- | --- |")
        d = os.path.join(args.work, "instructions")
        os.makedirs(d, exist_ok=True)
        for prog in programs:
            counts = {}
            for variant in ("plain", "scalana"):
                vd = os.path.join(d, variant)
                os.makedirs(vd, exist_ok=True)
                try:
                    cmd = compiler_command(prog, variant, args, os.path.join(vd, prog.name + ".o"))
                    counts[variant] = instructions(cmd, vd)
                except BenchError as e:
                    print("ERROR: instructions %s (%s): %s" % (prog.name, variant, e))
            p, s = counts.get("plain"), counts.get("scalana")
            print("| %s | %s | %s |" % (
                prog.name, "{:,}".format(p) if p else "n/a",
                ("{:,} (x{:.3f})".format(s, s / p) if p else "{:,}".format(s)) if s else "n/a"))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
