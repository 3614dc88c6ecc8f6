#!/usr/bin/env python3
"""How often `scalana detect` names the injected root cause, and how quiet it
stays when nothing is injected.

usage: bench_accuracy.py [--bin BUILD/bin] [--work DIR] [--programs a,b,...]
                         [--reps 3] [--ranks 2,4,8] [--scaling auto] [--keep]
                         [--mpirun mpirun] [--timeout 600]

Each program of programs/ takes --inject, which plants a known root cause at
the one line of its source marked `ROOT CAUSE` (found by scanning the
source; no line number is written down anywhere). For every program:

  1. build it with scalana-cc/-cxx/-fc at -O2 into WORK/build/PROGRAM;
  2. --reps times, for each variant (inject, clean): profile it with
     `mpirun -np N scalana prof` at each rank count of --ranks, then run
     `scalana detect --format json --scaling auto` (or --scaling) over them;
  3. injected runs: top-1 hit when the first root cause is the marked
     file:line, top-3 hit when one of the first three is;
     clean runs: the highest score of a computation root cause (kind other
     than mpi), and whether the report names the communication loss (a
     non-scalable MPI vertex, or a root cause of kind mpi).

Prints a table per program, every miss with what was ranked first and the
path that led there, and the totals against the targets:
  - top-1 on at least 95% of the injected runs;
  - no clean run with a computation root cause scoring 0.05 or more;
  - every clean run names its communication loss.
WORK/summary.json keeps the figures and WORK/reports/ every detect report.
"""
import argparse
import collections
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROGRAM_DIR = os.path.join(HERE, "programs")
MARKER = re.compile(r"(//|!)\s*ROOT CAUSE")
EFFECTIVE_HZ = re.compile(r"effective (\d+) Hz")
SUMMARY = re.compile(r"^accuracy (\S+) np=\s*(\d+) inject=\s*(\d) culprit=\s*(\d+) "
                     r"work_cpu_min=\s*(\S+) work_cpu_max=\s*(\S+) extra_cpu_max=\s*(\S+)", re.M)

# A computation root cause scoring at or above this in a clean run is a
# false alarm (the threshold of tests/e2e/e2e.py and docs/examples.md).
HIGH_SCORE = 0.05
TOP1_TARGET = 0.95

# compiler wrapper and flags per language
LANGS = {
    "C": ("scalana-cc", ["-O2"], ["-lm"]),
    "C++": ("scalana-cxx", ["-O2", "-std=c++17"], []),
    "Fortran": ("scalana-fc", ["-O2"], []),
}

Program = collections.namedtuple("Program", "name source lang pattern injected")
PROGRAMS = [
    Program("halo1d", "halo1d.c", "C", "1-D halo, Isend/Irecv/Waitall; Allreduce",
            "last rank: extra loop"),
    Program("halo2d", "halo2d.c", "C", "2-D halo on a process grid, Sendrecv; Allreduce",
            "rank np/2: longer Newton loop"),
    Program("master_worker", "master_worker.c", "C",
            "master/worker, Irecv(ANY_SOURCE) + Waitany; Bcast",
            "last worker: extra task() calls"),
    Program("subcomm", "subcomm.c", "C", "Allreduce/Bcast on Comm_split sub-communicators",
            "rank 1: extra loop"),
    Program("pipeline", "pipeline.c", "C", "pipeline, Recv from i-1 / Send to i+1; Allreduce",
            "stage np/2: extra loop per item"),
    Program("tags", "tags.c", "C", "tag 99 in setup (Send/Recv) and solve (Isend/Irecv)",
            "rank 0: extra loop in the solve phase"),
    Program("rma_fence", "rma_fence.c", "C", "one-sided, Win_fence epochs, Put/Get",
            "last rank: extra loop"),
    Program("rma_lock", "rma_lock.c", "C", "one-sided, Win_lock/unlock, Put/Get; Barrier",
            "rank 1: extra loop"),
    Program("cxx_virtual", "cxx_virtual.cpp", "C++",
            "virtual calls, templates, lambdas; Sendrecv, Allreduce",
            "rank np/2: one more virtual-call target"),
    Program("cxx_forall", "cxx_forall.cpp", "C++",
            "RAJA-style forall<Policy>(lambda); Isend/Irecv, Allreduce",
            "last rank: longer loop in a lambda"),
    Program("fortran_mpif", "fortran_mpif.f90", "Fortran",
            "include 'mpif.h'; Sendrecv, Allreduce", "rank 0: extra loop"),
    Program("fortran_usempi", "fortran_usempi.f90", "Fortran",
            "use mpi; Isend/Irecv/Waitall, Allgather, Allreduce",
            "last rank: longer inner loop"),
    Program("fptr", "fptr.c", "C", "function-pointer dispatch (hypre-style V-cycle); Sendrecv",
            "rank 1: costlier smoother"),
    Program("cg_reduce", "cg_reduce.c", "C", "CG, 4 Allreduce + Sendrecv per iteration",
            "last rank: extra loop"),
]


# Programs whose injection --share sizes (programs/common.h, SharedExtra).
SHARE_PROGRAMS = ("halo1d", "pipeline", "tags", "cg_reduce")


class BenchError(Exception):
    pass


def log(msg):
    print(msg, flush=True)


def retrying(what, fn, *a):
    """Runs FN once more after a minute if it fails: the shared build the
    tools come from may be relinking one of them at that moment."""
    try:
        return fn(*a)
    except BenchError as e:
        log("  %s failed, retrying in 60 s: %s" % (what, str(e).splitlines()[0]))
        time.sleep(60)
        return fn(*a)


def marker_line(path):
    """The 1-based line carrying the ROOT CAUSE marker; exactly one."""
    with open(path) as f:
        hits = [n for n, text in enumerate(f, 1) if MARKER.search(text)]
    if len(hits) != 1:
        raise BenchError("%s: expected exactly one ROOT CAUSE marker, found lines %s" %
                         (path, hits))
    return hits[0]


def run_env(tmpdir):
    # A stray SCALANA_* setting in the caller's environment would change what
    # is measured; the profiler's options come from its command line only.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    env.update(
        # Waiting ranks must yield the CPU: 4 and 8 ranks share 2 cores here.
        OMPI_MCA_mpi_yield_when_idle="1",
        OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        # Open MPI's session directory lives under TMPDIR, and launches that
        # share one race on it: every launch gets its own.
        TMPDIR=tmpdir)
    return env


def build(prog, args):
    wrapper, flags, libs = LANGS[prog.lang]
    d = os.path.join(args.work, "build", prog.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    exe = os.path.join(d, prog.name)
    cmd = [os.path.join(args.bin, wrapper)] + flags + [
        os.path.join(PROGRAM_DIR, prog.source), "-o", exe] + libs
    # cwd: flang writes the modules of a Fortran source into the current directory.
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
    if p.returncode != 0:
        raise BenchError("building %s failed (status %d): %s\n%s" %
                         (prog.name, p.returncode, " ".join(cmd), (p.stdout + p.stderr)[-3000:]))
    return exe


def effective_hz(out):
    """The sampling rate rank 0 achieved (samples per second of its CPU time),
    from the profile's sampling note: on a loaded, oversubscribed machine it
    falls far below the nominal rate, and the detector sees less computation."""
    try:
        with gzip.open(os.path.join(out, "profile.json.gz"), "rt") as f:
            note = json.load(f)["meta"]["sampling"].get("note", "")
    except (OSError, ValueError, KeyError):
        return None
    m = EFFECTIVE_HZ.search(note)
    return int(m.group(1)) if m else None


def profile(args, exe, np, out, inject):
    """One `mpirun -np NP scalana prof`; returns (wall seconds, the program's
    summary line fields or None, rank 0's effective sampling rate)."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tmp-", dir=os.path.join(args.work, "tmp"))
    cmd = [args.mpirun, "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    # Format 2 (rank 0's gather): effective_hz reads its JSON directly.
    cmd += ["-np", str(np), os.path.join(args.bin, "scalana"), "prof", "-o", out,
            "--write-group", "0"]
    cmd += shlex.split(args.prof_args) + ["--", exe]
    if inject:
        cmd.append("--inject")
        if args.share:
            cmd += ["--share", str(args.share)]
    if args.scale != 1:
        cmd += ["--scale", str(args.scale)]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=run_env(tmp),
                           cwd=os.path.dirname(exe), timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise BenchError("timed out after %d s: %s" % (args.timeout, " ".join(cmd)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise BenchError("%s failed (status %d):\n%s" % (" ".join(cmd), p.returncode,
                                                         (p.stdout + p.stderr)[-2000:]))
    if not os.path.exists(os.path.join(out, "profile.json.gz")):
        raise BenchError("no %s/profile.json.gz after: %s" % (out, " ".join(cmd)))
    m = SUMMARY.search(p.stdout)
    fields = None
    if m:
        fields = {"culprit": int(m.group(4)), "work_cpu_min": float(m.group(5)),
                  "work_cpu_max": float(m.group(6)), "extra_cpu_max": float(m.group(7))}
    return wall, fields, effective_hz(out)


def detect(args, run_dirs, report_path):
    cmd = [os.path.join(args.bin, "scalana"), "detect", "--format", "json",
           "--scaling", args.scaling] + run_dirs
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if p.returncode != 0:
        raise BenchError("%s failed (status %d):\n%s" % (" ".join(cmd), p.returncode,
                                                         p.stderr[-2000:]))
    doc = json.loads(p.stdout)
    with open(report_path, "w") as f:
        json.dump(doc, f, indent=1)
    return doc


def where(v):
    return "%s:%s" % (os.path.basename(v.get("file") or "?"), v.get("line"))


def describe_cause(c):
    return "%s %s %s score %.3f ranks %s" % (
        where(c), c.get("kind"), c.get("name", ""), c.get("score", 0.0),
        ",".join(str(r) for r in c.get("ranks", [])) or "-")


def describe_path(c, limit=14):
    """The backtracking path in one line: the start, the crossings, the
    problematic steps and the root cause (`*`)."""
    steps, root = [], (c.get("file"), c.get("line"), c.get("culprit_rank"))
    for s in c.get("path", []):
        via = s.get("via")
        is_root = (s.get("file"), s.get("line"), s.get("rank")) == root
        if via in ("start", "p2p", "collective", "rma") or s.get("problematic") or is_root:
            text = "%s%s %s %s r%s" % ("*" if is_root else "", s.get("kind"), s.get("name", ""),
                                       where(s), s.get("rank"))
            if via in ("p2p", "collective", "rma"):
                text = "[%s %.3fs] %s" % (via, s.get("wait", 0.0), text)
            if s.get("problematic"):
                text += "!"
            steps.append(text)
    if len(steps) > limit:
        steps = steps[:limit // 2] + ["..."] + steps[-limit // 2:]
    return " > ".join(steps)


def names_line(c, source, line):
    """The cause is at the marked line, or reached through the marked call
    (code every rank runs, made costly through one call site)."""
    if os.path.basename(c.get("file") or "") == source and c.get("line") == line:
        return True
    sites = c.get("call_sites") or []
    return bool(sites) and os.path.basename(sites[-1].get("file") or "") == source and \
        sites[-1].get("line") == line


def evaluate_inject(doc, source, line):
    causes = doc.get("root_causes", [])
    hit = [names_line(c, source, line) for c in causes[:3]]
    return {"top1": bool(hit and hit[0]), "top3": any(hit),
            "rank_of_expected": next((i + 1 for i, c in enumerate(causes)
                                      if names_line(c, source, line)), None),
            "first": describe_cause(causes[0]) if causes else "no root cause",
            "first_path": describe_path(causes[0]) if causes else "",
            "top3_list": [describe_cause(c) for c in causes[:3]],
            "scaling": doc.get("options", {}).get("scaling_used"),
            "warnings": doc.get("warnings", []),
            "n_causes": len(causes)}


def evaluate_clean(doc):
    causes = doc.get("root_causes", [])
    comp = [c for c in causes if c.get("kind") != "mpi"]
    best = max(comp, key=lambda c: c.get("score", 0.0)) if comp else None
    comm_ns = [v for v in doc.get("non_scalable", []) if v.get("kind") == "mpi"]
    comm_rc = [c for c in causes if c.get("kind") == "mpi"]
    named = None
    if comm_ns:
        v = max(comm_ns, key=lambda v: v.get("score", 0.0))
        named = "non-scalable %s %s (score %.2f, slope %.2f)" % (
            v.get("name"), where(v), v.get("score", 0.0), v.get("slope", 0.0))
    elif comm_rc:
        named = "root cause %s %s" % (comm_rc[0].get("name"), where(comm_rc[0]))
    return {"max_comp_score": best.get("score", 0.0) if best else 0.0,
            "max_comp": describe_cause(best) if best else "none",
            "max_comp_path": describe_path(best) if best else "",
            "comm_named": named is not None, "comm": named,
            "comm_non_scalable": len(comm_ns), "comm_root_causes": len(comm_rc),
            "scaling": doc.get("options", {}).get("scaling_used")}


def run_program(prog, args):
    """Builds, profiles and detects PROGRAM; returns its records."""
    source = os.path.join(PROGRAM_DIR, prog.source)
    line = marker_line(source)
    exe = retrying("build", build, prog, args)
    records = []
    for rep in range(1, args.reps + 1):
        for variant in ("inject", "clean"):
            rec = {"program": prog.name, "variant": variant, "rep": rep,
                   "expected": "%s:%d" % (prog.source, line), "walls": {}, "hz": {}}
            dirs = []
            try:
                for np in args.ranks:
                    out = os.path.join(args.work, "runs", prog.name,
                                       "%s-rep%d-np%d" % (variant, rep, np))
                    wall, fields, hz = retrying("profile", profile, args, exe, np, out,
                                                variant == "inject")
                    rec["walls"][np] = wall
                    rec["hz"][np] = hz
                    if np == max(args.ranks):
                        rec["program_summary"] = fields
                    dirs.append(out)
                report = os.path.join(args.work, "reports",
                                      "%s-%s-rep%d.json" % (prog.name, variant, rep))
                doc = retrying("detect", detect, args, dirs, report)
                rec["report"] = report
                rec.update(evaluate_inject(doc, prog.source, line) if variant == "inject"
                           else evaluate_clean(doc))
            except (BenchError, subprocess.TimeoutExpired, ValueError) as e:
                rec["error"] = str(e)
            if not args.keep:
                for d in dirs:
                    shutil.rmtree(d, ignore_errors=True)
            records.append(rec)
            log("  %-15s %-6s rep %d  %s" % (prog.name, variant, rep, one_line(rec)))
    return records


def rates(rec):
    hz = rec.get("hz", {})
    return "/".join("?" if hz.get(np) is None else str(hz[np]) for np in sorted(rec["walls"]))


def one_line(rec):
    walls = " ".join("np%d %.1fs" % (np, w) for np, w in sorted(rec["walls"].items()))
    walls += ", rank 0 sampled at %s Hz" % rates(rec)
    if "error" in rec:
        return "ERROR: %s" % rec["error"].splitlines()[0]
    if rec["variant"] == "inject":
        state = "top-1" if rec["top1"] else ("top-3" if rec["top3"] else "MISS")
        return "%s: first %s  [%s]" % (state, rec["first"], walls)
    return "max computation score %.3f (%s); communication: %s  [%s]" % (
        rec["max_comp_score"], rec["max_comp"], rec["comm"] or "NOT NAMED", walls)


def table(programs, records, args):
    by = collections.defaultdict(list)
    for r in records:
        by[(r["program"], r["variant"])].append(r)
    head = ("| program | language | pattern | injected root cause | extra / work | top-1 | top-3 "
            "| clean: max computation score | clean: communication named | sampling at %d ranks |"
            % max(args.ranks))
    lines = [head, "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for prog in programs:
        inj, cln = by[(prog.name, "inject")], by[(prog.name, "clean")]
        ok = [r for r in inj if "error" not in r]
        ratios = [r["program_summary"]["extra_cpu_max"] / r["program_summary"]["work_cpu_max"]
                  for r in ok if r.get("program_summary")
                  and r["program_summary"]["work_cpu_max"] > 0]
        ratio = "%.0f%%" % (100 * sorted(ratios)[len(ratios) // 2]) if ratios else "?"
        cok = [r for r in cln if "error" not in r]
        top1 = sum(r["top1"] for r in ok)
        top3 = sum(r["top3"] for r in ok)
        maxc = max((r["max_comp_score"] for r in cok), default=float("nan"))
        named = sum(r["comm_named"] for r in cok)
        hz = sorted(r["hz"][max(args.ranks)] for r in inj + cln
                    if r.get("hz", {}).get(max(args.ranks)) is not None)
        hz = "%d Hz" % hz[len(hz) // 2] if hz else "?"
        lines.append("| %s | %s | %s | %s | %s | %d/%d | %d/%d | %.3f | %d/%d | %s |" % (
            prog.name, prog.lang, prog.pattern, prog.injected, ratio, top1, len(inj), top3,
            len(inj), maxc, named, len(cln), hz))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                        help="directory with scalana and the compiler wrappers")
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(),
                                                       "scalana-bench-accuracy"),
                        help="scratch directory for builds, runs and reports")
    parser.add_argument("--programs", help="comma-separated subset of: " +
                        ",".join(p.name for p in PROGRAMS))
    parser.add_argument("--reps", type=int, default=3, help="repetitions per variant")
    parser.add_argument("--ranks", default="2,4,8",
                        type=lambda s: sorted({int(x) for x in s.split(",")}),
                        help="rank counts to profile, comma-separated")
    parser.add_argument("--scaling", default="auto", choices=["auto", "weak", "strong"],
                        help="passed to scalana detect")
    parser.add_argument("--keep", action="store_true", help="keep the run directories")
    parser.add_argument("--share", type=int,
                        help="size every injection to PCT %% of the culprit's regular work "
                        "(only the programs of SHARE_PROGRAMS take it; the others are left out)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each C program's main-loop trip count (with --share; "
                        "the default work is about 0.2 s of CPU per rank)")
    parser.add_argument("--prof-args", default="",
                        help="options for `scalana prof`, e.g. '--sampler perf --hz 1000'")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per launch")
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.work = os.path.abspath(args.work)
    if args.reps < 1 or len(args.ranks) < 2:
        parser.error("need --reps >= 1 and at least two rank counts")
    programs = PROGRAMS
    if args.programs:
        wanted = args.programs.split(",")
        unknown = sorted(set(wanted) - {p.name for p in PROGRAMS})
        if unknown:
            parser.error("unknown programs: %s" % ", ".join(unknown))
        programs = [p for p in PROGRAMS if p.name in wanted]
    if args.share:
        if args.share < 1:
            parser.error("--share takes a percentage of at least 1")
        programs = [p for p in programs if p.name in SHARE_PROGRAMS]
        if not programs:
            parser.error("--share: none of the programs takes it (%s do)" % ", ".join(SHARE_PROGRAMS))
    if args.scale != 1 and any(p.lang == "Fortran" for p in programs):
        parser.error("--scale: the Fortran programs do not take it; name C/C++ ones (--programs)")
    tools = ["scalana", "scalana-prof", "scalana-detect"] + sorted(
        {LANGS[p.lang][0] for p in programs})
    for attempt in range(4):
        missing = [t for t in tools if not os.access(os.path.join(args.bin, t), os.X_OK)]
        if not missing:
            break
        if attempt == 3:
            sys.exit("bench_accuracy: %s missing from %s (--bin)" % (", ".join(missing), args.bin))
        # A shared build may be relinking them; give it a minute.
        log("waiting a minute for %s in %s" % (", ".join(missing), args.bin))
        time.sleep(60)
    # Only the subdirectories this script writes are emptied: --work may be
    # a directory that holds other things.
    for sub in ("build", "runs", "reports", "tmp"):
        shutil.rmtree(os.path.join(args.work, sub), ignore_errors=True)
        os.makedirs(os.path.join(args.work, sub))

    t_start = time.monotonic()
    log("accuracy benchmark: %d programs x (inject, clean) x %d reps at %s ranks; "
        "scalana detect --scaling %s; work in %s" % (
            len(programs), args.reps, ",".join(map(str, args.ranks)), args.scaling, args.work))
    records = []
    for prog in programs:
        log("%s (%s): %s" % (prog.name, prog.source, prog.injected))
        try:
            records += run_program(prog, args)
        except BenchError as e:
            log("  %s: ERROR %s" % (prog.name, e))
            for rep in range(1, args.reps + 1):
                for variant in ("inject", "clean"):
                    records.append({"program": prog.name, "variant": variant, "rep": rep,
                                    "walls": {}, "error": str(e)})
    elapsed = time.monotonic() - t_start

    inj = [r for r in records if r["variant"] == "inject"]
    cln = [r for r in records if r["variant"] == "clean"]
    top1 = sum(r.get("top1", False) for r in inj)
    top3 = sum(r.get("top3", False) for r in inj)
    high = [r for r in cln if "error" in r or r["max_comp_score"] >= HIGH_SCORE]
    unnamed = [r for r in cln if "error" in r or not r["comm_named"]]
    max_clean = max((r["max_comp_score"] for r in cln if "error" not in r), default=0.0)
    errors = [r for r in records if "error" in r]

    log("")
    log("Ranks %s, %d repetitions, scalana detect --scaling %s. `extra / work`: the culprit's "
        "injected CPU time over its regular work at %d ranks (the program's own measurement, "
        "median of the reps). `sampling`: samples per CPU second rank 0 achieved at %d ranks "
        "(median over the runs; the profiler's default rate is 200 Hz)." % (
            ",".join(map(str, args.ranks)), args.reps, args.scaling, max(args.ranks),
            max(args.ranks)))
    log("")
    log(table(programs, records, args))
    log("")
    pct = 100.0 * top1 / len(inj) if inj else 0.0
    log("totals vs targets:")
    log("  injected runs, top-1: %d/%d (%.1f%%), target >= %.0f%%: %s" % (
        top1, len(inj), pct, 100 * TOP1_TARGET, "met" if inj and top1 >= TOP1_TARGET * len(inj)
        else "MISSED"))
    log("  injected runs, top-3: %d/%d (%.1f%%)" % (top3, len(inj),
                                                    100.0 * top3 / len(inj) if inj else 0.0))
    log("  clean runs, highest computation root-cause score: %.3f; runs at or above %.2f: "
        "%d/%d, target 0: %s" % (max_clean, HIGH_SCORE, len(high), len(cln),
                                 "met" if not high else "MISSED"))
    log("  clean runs naming their communication loss: %d/%d, target all: %s" % (
        len(cln) - len(unnamed), len(cln), "met" if not unnamed else "MISSED"))
    if errors:
        log("  runs that failed: %d (counted as misses)" % len(errors))
    log("  wall time: %.0f s (%.1f min)" % (elapsed, elapsed / 60))

    misses = [r for r in inj if not r.get("top1", False)]
    if misses or high or unnamed:
        log("")
        log("misses:")
    for r in misses:
        if "error" in r:
            log("- %s inject rep %d: ERROR %s" % (r["program"], r["rep"], r["error"]))
            continue
        log("- %s inject rep %d: expected %s (ranked %s of %d); first: %s; scaling %s; "
            "rank 0 sampled at %s Hz" % (
                r["program"], r["rep"], r["expected"], r["rank_of_expected"] or "nowhere",
                r["n_causes"], r["first"], r["scaling"], rates(r)))
        log("    path: %s" % r["first_path"])
        log("    top 3: %s" % " | ".join(r["top3_list"]))
        for w in r["warnings"][:3]:
            log("    warning: %s" % (w if len(w) < 240 else w[:240] + "..."))
    for r in cln:
        if "error" in r:
            log("- %s clean rep %d: ERROR %s" % (r["program"], r["rep"], r["error"]))
            continue
        if r["max_comp_score"] >= HIGH_SCORE:
            log("- %s clean rep %d: computation root cause %s" % (r["program"], r["rep"],
                                                                  r["max_comp"]))
            log("    path: %s" % r["max_comp_path"])
        if not r["comm_named"]:
            log("- %s clean rep %d: no non-scalable MPI vertex and no MPI root cause" % (
                r["program"], r["rep"]))

    with open(os.path.join(args.work, "summary.json"), "w") as f:
        json.dump({"ranks": args.ranks, "reps": args.reps, "scaling": args.scaling,
                   "wall_seconds": elapsed, "records": records}, f, indent=1)
    log("")
    log("reports: %s/reports, figures: %s/summary.json" % (args.work, args.work))
    return 0


if __name__ == "__main__":
    sys.exit(main())
