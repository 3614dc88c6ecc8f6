#!/usr/bin/env python3
"""Writing the profile at MPI_Finalize: rank 0's gather of profile.json.gz
against the collective write of profile.scalana, by group size.

usage: bench_finalize.py --bin BUILD/bin [--np 2,8,32] [--runs 3] [--depth 100]

For each rank count and writer, RUNS runs of finalize_app.c (built with
scalana-cc): the median over runs of rank 0's time in MPI_Finalize and of
the slowest rank's, and of rank 0's and the largest peak memory any rank
took during MPI_Finalize (above what it held before), with the profile's
size. On this machine (2 cores) runs beyond 2 ranks are oversubscribed:
times then include waiting for the cores, alike for every writer.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WRITERS = [("gather (profile.json.gz)", "0"), ("collective, groups of 128", "128"),
           ("collective, groups of 4", "4")]
LINE = re.compile(r"rank (\d+) finalize_s ([\d.]+) peak_kb (-?\d+)")


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    e.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return e


def one_run(args, exe, np, group):
    out = tempfile.mkdtemp(prefix="scalana-bench-finalize-")
    shutil.rmtree(out)
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np),
           os.path.join(args.bin, "scalana"), "prof", "-o", out, "--write-group", group, "--",
           exe, str(args.depth)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=600)
    if p.returncode != 0 or "could not write" in p.stderr:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    ranks = {int(m.group(1)): (float(m.group(2)), int(m.group(3)))
             for m in LINE.finditer(p.stdout)}
    if sorted(ranks) != list(range(np)):
        sys.exit("%s: not every rank reported:\n%s" % (" ".join(cmd), p.stdout))
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)
               if f.startswith("profile."))
    shutil.rmtree(out)
    return (ranks[0][0], max(t for t, _ in ranks.values()), ranks[0][1],
            max(k for _, k in ranks.values()), size)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--np", default="2,8,32")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    build = tempfile.mkdtemp(prefix="scalana-bench-build-")
    exe = os.path.join(build, "finalize_app")
    subprocess.run([os.path.join(args.bin, "scalana-cc"), "-O1", os.path.join(HERE, "finalize_app.c"),
                    "-o", exe], check=True)
    print("finalize_app %d contexts per rank, %d runs each, medians" % (args.depth, args.runs))
    print("%-5s %-28s %12s %12s %12s %12s %12s" % ("ranks", "writer", "rank0 s", "slowest s",
                                                   "rank0 KB", "max KB", "file KB"))
    for np in [int(x) for x in args.np.split(",")]:
        for name, group in WRITERS:
            runs = [one_run(args, exe, np, group) for _ in range(args.runs)]
            med = [statistics.median(x) for x in zip(*runs)]
            print("%-5d %-28s %12.3f %12.3f %12d %12d %12.1f" % (np, name, med[0], med[1], med[2],
                                                                 med[3], med[4] / 1024))
            sys.stdout.flush()
    shutil.rmtree(build)


main()
