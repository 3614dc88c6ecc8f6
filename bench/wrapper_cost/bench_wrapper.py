#!/usr/bin/env python3
"""What a wrapped MPI call costs: wrapper_cost.c built with plain mpicc
driving clang-19 (-O2 -g, as bench-native's baseline), run
at 2 ranks as is and under `scalana prof` (the runtime preloaded), in
alternating order; prints the median ns per call of each operation, wrapped
minus plain, and the overhead of two message-rate loops: with a fixed
computation between calls that makes them about a million small calls per
second per rank when plain (--work), and without it (as fast as they go).

The loops run --iters iterations (about 1 s of Accumulates and 3.5 s of
Isend/Irecv/Test at a million calls per second), so that most calls come
after the first SCALANA_DEP_SAMPLE (100,000) of their call site, as in any
program that runs for more than a fraction of a second: from then on the
parameters of 1 call in 16 are recorded. The same loops are also run for
--first iterations, which the first, dearer calls dominate (every call's
parameters recorded).

usage: bench_wrapper.py --bin BUILD/bin [--runs N] [--calls N] [--iters N]
                        [--first N] [--work W] [--sampler off|auto]

--sampler off measures the wrappers alone (the default); auto adds 200 Hz
sampling. Figures on a shared machine are noisy: take the medians of several
runs, and compare builds with the same --runs. They also move with the
machine's state (on a 2-core VM, plain MPI_Isend took 90 ns instead of 36
for minutes at a time): compare figures of one invocation, which
alternates plain and profiled runs, rather than figures of two. Costs and
overheads are medians over the pairs of a plain run and the profiled run
next to it, so that a change of state during an invocation shifts a pair
or two rather than the whole comparison; the medians of each side are
printed too.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from figures import run_figures  # noqa: E402
OPS = ["MPI_Isend", "MPI_Irecv", "MPI_Test", "MPI_Test_2callers", "MPI_Accumulate", "MPI_Get",
       "MPI_Win_flush"]


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    # Ranks poll without yielding, as a program at a high message rate does.
    e.update(OMPI_MCA_mpi_yield_when_idle="0", OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return e


def run(cmd):
    return run_figures(cmd, env())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--iters", type=int, default=1000000)
    ap.add_argument("--first", type=int, default=100000)
    ap.add_argument("--work", type=int, default=900)
    ap.add_argument("--sampler", default="off", choices=["off", "auto"])
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="scalana-bench-wrapper-")
    exe = os.path.join(work, "wrapper_cost")
    # The baseline the user compares with: Open MPI's driver on clang-19.
    subprocess.run(["mpicc", "-O2", "-g", os.path.join(HERE, "wrapper_cost.c"), "-o", exe],
                   check=True, env=dict(os.environ, OMPI_CC="clang-19"))
    mpirun = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2"]
    scalana = os.path.join(args.bin, "scalana")
    results = {"plain": [], "wrapped": []}
    modes = {"percall": ["percall", str(args.calls)],
             "1M": ["rate", str(args.iters), str(args.work)],
             "1M-first": ["rate", str(args.first), str(args.work)],
             "max": ["rate", str(args.iters), "0"]}
    for i in range(args.runs):
        for label, mode in modes.items():
            out = os.path.join(work, "run")
            shutil.rmtree(out, ignore_errors=True)
            pair = [("plain", mpirun + [exe] + mode),
                    ("wrapped", mpirun + [scalana, "prof", "-o", out, "--sampler", args.sampler,
                                          "--"] + [exe] + mode)]
            if i % 2:
                pair.reverse()  # alternate the order: drift hits both sides alike
            for kind, cmd in pair:
                results[kind].append({(label, k): v for k, v in run(cmd).items()})
    shutil.rmtree(work, ignore_errors=True)

    def med(kind, key):
        vals = [r[key] for r in results[kind] if key in r]
        if not vals:
            return float("nan"), []
        return statistics.median(vals), vals

    def paired(key, f):
        # Run i of each kind ran next to the other (the list orders match).
        vals = [f(p[key], w[key]) for p, w in zip(results["plain"], results["wrapped"])
                if key in p and key in w]
        return statistics.median(vals) if vals else float("nan")

    print("wrapper cost, 2 ranks, sampler %s, %d runs of each (plain build, runtime "
          "preloaded or not); thread CPU time; times: medians of each side; cost and "
          "overhead: medians over adjacent pairs" % (args.sampler, args.runs))
    print("%-16s %10s %10s %10s" % ("operation", "plain ns", "wrapped ns", "cost ns"))
    for op in OPS:
        p, _ = med("plain", ("percall", op))
        w, _ = med("wrapped", ("percall", op))
        print("%-16s %10.1f %10.1f %+10.1f" % (op, p, w,
                                               paired(("percall", op), lambda a, b: b - a)))
    for label, how in (("1M", "work %d between calls, %d iterations" % (args.work, args.iters)),
                       ("1M-first", "work %d between calls, %d iterations" % (args.work, args.first)),
                       ("max", "no work, %d iterations" % args.iters)):
        for key, what in (("rate_p2p", "Isend/Irecv/Test loop"), ("rate_acc", "Accumulate loop")):
            pc, pcv = med("plain", (label, key + "_cpu"))
            wc, wcv = med("wrapped", (label, key + "_cpu"))
            rate, _ = med("plain", (label, key + "_calls_per_s"))
            over = paired((label, key + "_cpu"), lambda a, b: (b / a - 1) * 100)
            over_wall = paired((label, key), lambda a, b: (b / a - 1) * 100)
            print("%-22s %-38s plain %.3f s CPU (%.2f M calls per CPU s)  wrapped %.3f s  "
                  "overhead CPU %+.1f%% (wall %+.1f%%)  CPU runs (sorted) %s | %s"
                  % (what, how, pc, rate / 1e6, wc, over, over_wall,
                     " ".join("%.3f" % x for x in sorted(pcv)),
                     " ".join("%.3f" % x for x in sorted(wcv))))

main()
