#!/usr/bin/env python3
"""Profiler overhead and profile size: runs programs with and without
`scalana prof` in alternating order and prints the median overhead ratio and
the compressed profile size per rank.

usage: bench_runtime.py --bin BUILD/bin [--runs N] [--np 2,4] [--hz 200]

Programs: bench/runtime_overhead/overhead_app.c (in-program timer: many MPI
calls per second) built with scalana-cc when it works, else mpicc; and the
examples under examples/ built with scalana-cc when available (whole-process
wall time, which includes MPI start-up, so their ratios are noisier).
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    e.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return e


def build(compiler, src, out, extra=()):
    p = subprocess.run([compiler, "-O2", src, "-o", out] + list(extra), capture_output=True,
                       text=True)
    return p.returncode == 0


def timed_run(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=600)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    found = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("time", "cpu"):
            found[parts[0]] = float(parts[1])
    return found.get("time", wall), found.get("cpu")


def measure(args, name, exe, prog_args, np):
    mpirun = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np)]
    base, prof, sizes, cpu_base, cpu_prof = [], [], [], [], []
    for i in range(args.runs):
        out = tempfile.mkdtemp(prefix="scalana-bench-")
        shutil.rmtree(out)
        pair = [("base", mpirun + [exe] + prog_args),
                ("prof", mpirun + [os.path.join(args.bin, "scalana"), "prof", "-o", out,
                                   "--hz", str(args.hz), "--", exe] + prog_args)]
        if i % 2:
            pair.reverse()  # alternate the order: drift hits both sides alike
        for kind, cmd in pair:
            t, c = timed_run(cmd)
            (base if kind == "base" else prof).append(t)
            if c is not None:
                (cpu_base if kind == "base" else cpu_prof).append(c)
        for name in ("profile.scalana", "profile.json.gz"):
            f = os.path.join(out, name)
            if os.path.exists(f):
                sizes.append(os.path.getsize(f) / np)
                break
        shutil.rmtree(out, ignore_errors=True)
    ratios = [p / b for p, b in zip(prof, base)]
    print("%-28s np=%d  base %.3f s  profiled %.3f s  overhead %+.2f%% (median of %d, "
          "spread %+.2f..%+.2f%%)  profile %.0f B/rank" %
          (name, np, statistics.median(base), statistics.median(prof),
           (statistics.median(ratios) - 1) * 100, len(ratios), (min(ratios) - 1) * 100,
           (max(ratios) - 1) * 100, statistics.median(sizes) if sizes else float("nan")))
    if cpu_base and len(cpu_base) == len(cpu_prof):
        cr = [p / b for p, b in zip(cpu_prof, cpu_base)]
        print("%-28s np=%d  in-program CPU time: base %.3f s  profiled %.3f s  overhead %+.2f%% "
              "(spread %+.2f..%+.2f%%)" %
              ("", np, statistics.median(cpu_base), statistics.median(cpu_prof),
               (statistics.median(cr) - 1) * 100, (min(cr) - 1) * 100, (max(cr) - 1) * 100))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--np", default="2,4")
    ap.add_argument("--hz", type=int, default=200)
    ap.add_argument("--steps", default="4000")
    ap.add_argument("--no-examples", action="store_true")
    args = ap.parse_args()
    nps = [int(x) for x in args.np.split(",")]
    work = tempfile.mkdtemp(prefix="scalana-bench-build-")
    cc = os.path.join(args.bin, "scalana-cc")
    programs = []
    app = os.path.join(work, "overhead_app")
    src = os.path.join(HERE, "overhead_app.c")
    if os.path.exists(cc) and build(cc, src, app):
        programs.append(("overhead_app (scalana-cc)", app, [args.steps]))
    else:
        print("note: scalana-cc unavailable or failing; overhead_app built with mpicc "
              "(sampling + MPI wrappers only, no instrumentation stores)")
    plain = os.path.join(work, "overhead_app_mpicc")
    if build("mpicc", src, plain):
        programs.append(("overhead_app (mpicc)", plain, [args.steps]))
    if not args.no_examples and os.path.exists(cc):
        for d in sorted(glob.glob(os.path.join(ROOT, "examples", "*", ""))):
            name = os.path.basename(os.path.dirname(d))
            srcs = glob.glob(d + "*.c") + glob.glob(d + "*.cpp")
            if len(srcs) != 1:
                continue  # Fortran/multi-file examples: skipped here
            comp = cc if srcs[0].endswith(".c") else os.path.join(args.bin, "scalana-cxx")
            exe = os.path.join(work, name)
            if build(comp, srcs[0], exe):
                programs.append(("example " + name, exe, []))
            else:
                print("note: example %s did not build with %s; skipped" % (name, comp))
    for np in nps:
        for name, exe, pargs in programs:
            try:
                measure(args, name, exe, pargs, np)
            except Exception as e:  # keep going: one broken program must not hide the rest
                print("%s np=%d: %s" % (name, np, e))
    shutil.rmtree(work, ignore_errors=True)


main()
