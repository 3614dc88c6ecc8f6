#!/usr/bin/env python3
"""What each sampling source costs and delivers, per program and rank count.

usage: bench_sampling.py --bin BUILD/bin [--work DIR] [--runs 3] [--ranks 1,2,8]
                         [--programs stencil,shapes,forall,heat] [--hz 200,1000]
                         [--sources timer,perf,perf-record] [--scale 1.0]

The programs are bench/native_speed's (loop-heavy C, call-heavy C++, a
RAJA-style C++ forall, Fortran), built with plain mpicc/mpicxx/mpif90 on
clang-19/flang-new-19 and with the wrappers. Each round runs, in rotating
order: the plain build; the wrappers' build under `scalana prof --sampler
off` (the MPI wrappers' cost alone); and under `scalana prof --sampler S
--hz H` for every source S and rate H; the source `perf-record` is the plain
build under `perf record -F H -g` (one per rank, its data in the scratch
directory), the kernel's own sampler at the same rate, for comparison. The
figures are medians over rounds of the main phase's CPU time summed over
ranks (each program prints it), and of its elapsed time (rank 0's):
  overhead     CPU against the plain build
  elapsed      the main phase's elapsed time against the plain build's
  rate         samples per CPU second obtained (the profile's samples over
               its measured CPU time, all ranks), and its share of the asked
  us/sample    (CPU under S,H - CPU with sampling off) / samples: what one
               sample costs the program, handler and kernel work included
"""
import argparse
import collections
import gzip
import json
import os
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "native_speed"))
import bench_native as native  # noqa: E402  (the programs, their builds, one mpirun)


def profiled(args, prog, exe, np, steps, sampler, hz, label):
    out = os.path.join(args.work, "runs", "profile-%s-np%d" % (prog.name, np))
    shutil.rmtree(out, ignore_errors=True)
    # Format 2 (rank 0's gather): its JSON is read directly below.
    prof = [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--sampler", sampler,
            "--write-group", "0"]
    if hz:
        prof += ["--hz", str(hz)]
    try:
        r = native.launch(args, np, prof + ["--", exe, str(steps)], label)
        with gzip.open(os.path.join(out, "profile.json.gz"), "rt") as f:
            ranks = json.load(f)["ranks"]
        r["samples"] = sum(x.get("samples", 0) for x in ranks)
        r["cpu_measured"] = sum(x.get("cpu_time", 0) for x in ranks)
        return r
    finally:
        shutil.rmtree(out, ignore_errors=True)


def perf_recorded(args, prog, exe, np, steps, hz, label):
    """The plain build under `perf record -F HZ -g`, one per rank."""
    data = os.path.join(args.work, "runs", "perf-%s-np%d" % (prog.name, np))
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    script = ('exec perf record -q -F %d -g -o "%s/perf-$OMPI_COMM_WORLD_RANK.data" -- "$@"'
              % (hz, data))
    try:
        return native.launch(args, np, ["sh", "-c", script, "perf-record", exe, str(steps)],
                             label)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def variants(args):
    yield ("plain", None, None)
    yield ("off", "off", None)
    for s in args.sources:
        for hz in args.hz:
            yield ("%s@%d" % (s, hz), s, hz)


def measure(args, programs, exes):
    results = collections.defaultdict(lambda: collections.defaultdict(list))
    errors = []
    vs = list(variants(args))
    for np in args.ranks:
        for prog in programs:
            steps = max(1, round(prog.steps * args.scale))
            plain, wrapped = exes.get((prog.name, "plain")), exes.get((prog.name, "scalana"))
            if not plain or not wrapped:
                continue
            for i in range(args.runs):
                for name, sampler, hz in vs[i % len(vs):] + vs[:i % len(vs)]:
                    label = "%s np=%d %s run %d/%d" % (prog.name, np, name, i + 1, args.runs)
                    try:
                        if sampler is None:
                            r = native.launch(args, np, [plain, str(steps)], label)
                        elif sampler == "perf-record":
                            r = perf_recorded(args, prog, plain, np, steps, hz, label)
                        else:
                            r = profiled(args, prog, wrapped, np, steps, sampler, hz, label)
                        print("  %-36s cpu %.3f s%s" % (label, r["cpu"], "  %d samples" %
                              r["samples"] if "samples" in r else ""), file=sys.stderr)
                        results[(prog.name, np)][name].append(r)
                    except native.BenchError as e:
                        errors.append(str(e))
                        print("  %s: FAILED" % label, file=sys.stderr)
                sys.stderr.flush()
    return results, errors


def median(xs):
    return statistics.median(xs) if xs else None


def print_tables(args, programs, results):
    print()
    print("| program | ranks | source@Hz | overhead | elapsed | rate obtained (of asked) "
          "| us/sample |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for np in args.ranks:
        for prog in programs:
            res = results.get((prog.name, np))
            if not res:
                continue
            plain = median([r["cpu"] for r in res["plain"]])
            plain_wall = median([r["wall"] for r in res["plain"]])
            off = median([r["cpu"] for r in res["off"]])
            for name, sampler, hz in variants(args):
                if sampler is None or not res[name]:
                    continue
                cpu = median([r["cpu"] for r in res[name]])
                over = "%+.1f%%" % (100 * (cpu / plain - 1)) if plain else "n/a"
                wall = median([r["wall"] for r in res[name]])
                elapsed = "%+.1f%%" % (100 * (wall / plain_wall - 1)) if plain_wall else "n/a"
                if sampler == "perf-record":
                    rate_s, per_s = "-", "-"  # perf's samples are not counted here
                elif hz:
                    rate = median([r["samples"] / r["cpu_measured"] for r in res[name]
                                   if r["cpu_measured"] > 0])
                    per = median([(r["cpu"] - off) / r["samples"] * 1e6 for r in res[name]
                                  if r["samples"] and off is not None])
                    rate_s = "%.0f Hz (%.0f%%)" % (rate, 100 * rate / hz) if rate else "n/a"
                    per_s = "%.1f" % per if per is not None else "n/a"
                else:
                    rate_s, per_s = "-", "-"
                print("| %s | %d | %s | %s | %s | %s | %s |" % (prog.name, np, name, over,
                                                               elapsed, rate_s, per_s))
            if off and plain:
                print("| %s | %d | off (wrappers only) | %+.1f%% | - | - | - |" %
                      (prog.name, np, 100 * (off / plain - 1)))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", help="scratch directory (default BIN/../bench-sampling); emptied")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ranks", default="1,2,8")
    ap.add_argument("--programs", default=",".join(p.name for p in native.PROGRAMS))
    ap.add_argument("--hz", default="200,1000")
    ap.add_argument("--sources", default="timer,perf,perf-record")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.work = os.path.abspath(args.work or os.path.join(args.bin, "..", "bench-sampling"))
    args.ranks = [int(x) for x in args.ranks.split(",") if x]
    args.hz = [int(x) for x in args.hz.split(",") if x]
    args.sources = [x for x in args.sources.split(",") if x]
    wanted = args.programs.split(",")
    programs = [p for p in native.PROGRAMS if p.name in wanted]
    if len(programs) != len(wanted):
        ap.error("unknown program in " + args.programs)
    marker = os.path.join(args.work, ".bench-sampling")
    if os.path.isdir(args.work) and os.listdir(args.work) and not os.path.exists(marker):
        ap.error("%s is not empty and was not made by this script; pick another --work" % args.work)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, "runs"))
    open(marker, "w").close()
    print("sampling sources: %s at %s Hz; ranks %s on %d CPUs; load average at start %.2f" % (
        ",".join(args.sources), ",".join(map(str, args.hz)), ",".join(map(str, args.ranks)),
        os.cpu_count() or 0, os.getloadavg()[0]))
    exes = {}
    for prog in programs:
        for variant in ("plain", "scalana"):
            try:
                exes[(prog.name, variant)] = native.build(prog, variant, args)[1]
            except native.BenchError as e:
                print("ERROR: build %s (%s): %s" % (prog.name, variant, e))
    results, errors = measure(args, programs, exes)
    print_tables(args, programs, results)
    for e in errors:
        print("ERROR: " + e)
    print("load average at the end %.2f" % os.getloadavg()[0])


if __name__ == "__main__":
    main()
