#!/usr/bin/env python3
"""What the OMPT tool costs: ompt_cost.c built with mpicc driving clang-19
(-O2 -g -fopenmp), run at --np ranks (default 1) of 2 threads
(OMP_NUM_THREADS=2) in alternating order: plain; under `scalana prof` with libomp told not to
start a tool (OMP_TOOL=disabled: the sampler and wrappers alone); under
`scalana prof` with the tool; the same with --omp-worksharing (the work
callback too); the plain build with empty_tool.c preloaded, an OMPT tool
whose callbacks (the three the tool registers by default) do nothing:
libomp's own cost for them, the floor under the tool. Prints the median
in-program seconds of each, the tool's overhead (tool against tool
disabled, medians over the pairs of runs next to each other) and the whole profiler's (against plain),
the regions per second of the plain build, then the profile size per rank
(profile.scalana) with 2 and 8 threads per rank (5000 regions, threads
sleeping at barriers: OMP_WAIT_POLICY=passive).

usage: bench_ompt.py --bin BUILD/bin [--runs N] [--regions N] [--work N] [--np N]
                     [--sampler auto|timer|perf] [--hz H]

--sampler and --hz go to every `scalana prof` run: `--sampler perf --hz
1000` is the perf source's cost on tiny regions, against the plain build.

Figures on a shared machine are noisy: compare the figures of one
invocation, whose runs alternate. libomp's threads spin at barriers: with
more threads than free cores (other jobs, or ranks times threads over the
cores) regions slow down by orders of magnitude, so keep ranks times 2
within the idle cores.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from figures import run_figures  # noqa: E402


def env(threads, **extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    e.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS=str(threads),
             OMPI_MCA_rmaps_base_oversubscribe="1")
    e.update(extra)
    return e


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--regions", type=int, default=200000)
    ap.add_argument("--work", type=int, default=256)
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--sampler", default="auto", choices=("auto", "timer", "perf"))
    ap.add_argument("--hz", type=int, default=1000)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="scalana-bench-ompt-")
    exe = os.path.join(work, "ompt_cost")
    subprocess.run(["mpicc", "-O2", "-g", "-fopenmp",
                    os.path.join(HERE, "ompt_cost.c"), "-o", exe], check=True,
                   env=dict(os.environ, OMPI_CC="clang-19"))
    mpirun = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(args.np)]
    prog = [exe, str(args.regions), str(args.work)]
    prof = [os.path.join(args.bin, "scalana"), "prof", "-f", "-o", os.path.join(work, "run"),
            "--sampler", args.sampler, "--hz", str(args.hz)]
    empty = os.path.join(work, "libempty_tool.so")
    subprocess.run(["clang-19", "-O2", "-shared", "-fPIC", os.path.join(HERE, "empty_tool.c"),
                    "-o", empty], check=True)
    times = {"plain": [], "no_tool": [], "tool": [], "tool_ws": [], "empty": []}
    best = {k: [] for k in times}  # µs a region in the fastest batch of 1000
    pairs = []
    for _ in range(args.runs):
        got = {"plain": run_figures(mpirun + prog, env(2)),
               "no_tool": run_figures(mpirun + prof + ["--"] + prog,
                                      env(2, OMP_TOOL="disabled")),
               "tool": run_figures(mpirun + prof + ["--"] + prog, env(2)),
               "tool_ws": run_figures(mpirun + prof + ["--omp-worksharing", "--"] + prog,
                                      env(2)),
               "empty": run_figures(mpirun + ["-x", "LD_PRELOAD=" + empty] + prog, env(2))}
        for k, fig in got.items():
            times[k].append(fig["seconds"])
            best[k].append(fig["best_batch_us_per_region"])
        on, off, plain = (got[k]["seconds"] for k in ("tool", "no_tool", "plain"))
        pairs.append((on / off - 1, on / plain - 1, got["tool_ws"]["seconds"] / off - 1))
    for k, v in times.items():
        print("%-8s median %.3f s over %d runs" % (k, statistics.median(v), len(v)))
    print("regions per second (plain): %.0f" % (args.regions / statistics.median(times["plain"])))
    print("OMPT tool overhead (tool vs tool disabled, median of pairs): %+.1f%%"
          % (100 * statistics.median(p[0] for p in pairs)))
    print("profiler overhead (tool vs plain, median of pairs): %+.1f%%"
          % (100 * statistics.median(p[1] for p in pairs)))
    print("OMPT tool with --omp-worksharing (vs tool disabled, median of pairs): %+.1f%%"
          % (100 * statistics.median(p[2] for p in pairs)))
    # The fastest batch of each variant over all runs: the regions' own cost
    # when no other thread took a core (the whole loop's time is mostly that).
    low = {k: min(v) for k, v in best.items()}
    print("fastest 1000-region batch, us a region: plain %.3f, tool disabled %.3f, tool %.3f, "
          "tool with --omp-worksharing %.3f, plain with an empty tool %.3f"
          % (low["plain"], low["no_tool"], low["tool"], low["tool_ws"], low["empty"]))
    print("libomp's floor (plain with an empty tool of the same callbacks, against plain): "
          "%+.3f us a region (%+.1f%%)"
          % (low["empty"] - low["plain"], 100 * (low["empty"] / low["plain"] - 1)))
    for k, name in (("tool", "OMPT tool"), ("tool_ws", "OMPT tool with --omp-worksharing")):
        print("%s cost in the fastest batches: %+.3f us a region (%+.1f%%)"
              % (name, low[k] - low["no_tool"], 100 * (low[k] / low["no_tool"] - 1)))
    for threads in (2, 8):
        out = os.path.join(work, "size%d" % threads)
        run_figures(mpirun + [os.path.join(args.bin, "scalana"), "prof", "-f", "-o", out, "--"] +
            [exe, "5000", str(args.work)], env(threads, OMP_WAIT_POLICY="passive"))
        path = os.path.join(out, "profile.scalana")
        print("profile per rank, %d threads: %.1f KB (profile.scalana)"
              % (threads, os.path.getsize(path) / args.np / 1024))
    shutil.rmtree(work, True)


if __name__ == "__main__":
    main()
