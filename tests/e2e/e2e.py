#!/usr/bin/env python3
"""End-to-end checks of the ScalAna pipeline on the programs in examples/.

Each ctest entry runs one stage for one example; the stages share a work
directory per example (BUILD/tests/e2e/work/EXAMPLE):

  build   compile the example with its Makefile and the scalana-cc/-cxx/-fc wrapper
  psg     `scalana psg` prints a summary, and the PSG has a loop at the ROOT CAUSE line
  prof    profile the example at each scale (--variant inject|clean)
  show    `scalana show` of a profiled run names the example's source and every rank
  detect  `scalana detect --format json` (scaling auto) over the runs of a variant:
            inject: the top-ranked root cause is the line marked ROOT CAUSE
            clean:  no computation root cause has a score >= HIGH_SCORE, and a
                    non-scalable MPI vertex is named with what grew
  sizes   print the PSG sizes of every built example as a Markdown table

The root-cause line is found by grepping the source for the marker comment
(`// ROOT CAUSE` in C/C++, `! ROOT CAUSE` in Fortran), never hard-coded.
"""
import argparse
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# A root cause scored at or above this is "high": with nothing injected no
# root cause may reach it. Injected causes score 0.06-0.11 on these examples,
# everything else below 0.01 (docs/examples.md quotes this threshold).
HIGH_SCORE = 0.05

# Example name -> (source file, arguments that inject its root cause).
EXAMPLES = {
    "fig3": ("fig3.c", ["--inject"]),
    "cg": ("cg.c", ["--inject"]),
    "busyidle": ("busyidle.f90", ["--inject"]),
    "events": ("events.cpp", ["--inject"]),
    "kernel": ("kernel.c", ["--inject"]),
}
# Single-source programs of the accuracy benchmark (bench/accuracy/programs)
# that test one defect each end to end, built with the wrapper directly:
# name -> (source under the repository, wrapper, variants).
#   master_worker  the cause is the extra calls of a function every rank also
#                  calls regularly: only its call site tells the two apart
#   tags           setup and solve phases reuse tag 99: the solve's waits must
#                  pair with the solve's sends, not the setup's
#   alltoall       nothing injected; the all-to-all's bytes per rank grow with
#                  the rank count: the loss must be named, with what grew
#   merged_mpi     nothing injected; clang merges four MPI_Allreduce calls into
#                  one call with no line: their time must stay communication
#   hybrid_omp     MPI + OpenMP, 2 threads per rank; the cause is a loop inside
#                  a parallel region on one thread of the last rank: its call
#                  path must go through the region at the directive's line
#   hybrid_threads the same in a parallel loop, profiled at 1, 2 and 4 ranks:
#                  the culprit is named `rank <last> thread 0`, with the
#                  barrier waits of its other thread and the ranks' MPI waits
#                  in "if fixed"; clean: balanced threads and ranks, quiet
#   hybrid_static  a schedule(static) loop over an imbalanced iteration
#                  space, alike on every rank: named with its culprit thread
#   hybrid_growing the same, but thread 1's share of the work grows with
#                  the rank count: named with its culprit thread and as
#                  non-scalable (the excess at both ends where only it grows)
#   hybrid_tasks   the work in OpenMP tasks the threads run at the region's
#                  barrier, one task slow on the last rank: named there, as
#                  computation, not as the barrier's wait
#   hybrid_serial  a serial loop outside the parallel regions whose work grows
#                  with the rank count: named as the serial fraction
PROGRAMS = {
    "master_worker": ("bench/accuracy/programs/master_worker.c", "scalana-cc", ["inject"]),
    "tags": ("bench/accuracy/programs/tags.c", "scalana-cc", ["inject"]),
    "alltoall": ("tests/e2e/programs/alltoall.c", "scalana-cc", ["clean"]),
    "merged_mpi": ("tests/e2e/programs/merged_mpi.c", "scalana-cc", ["clean"]),
    "hybrid_omp": ("tests/e2e/programs/hybrid_omp.c", "scalana-cc", ["inject"]),
    "hybrid_threads": ("tests/e2e/programs/hybrid_threads.c", "scalana-cc", ["inject", "clean"]),
    "hybrid_static": ("tests/e2e/programs/hybrid_static.c", "scalana-cc", ["inject"]),
    "hybrid_growing": ("tests/e2e/programs/hybrid_growing.c", "scalana-cc", ["inject"]),
    "hybrid_tasks": ("tests/e2e/programs/hybrid_tasks.c", "scalana-cc", ["inject"]),
    "hybrid_serial": ("tests/e2e/programs/hybrid_serial.c", "scalana-cc", ["inject"]),
    "poll_layer": ("tests/e2e/programs/poll_layer.c", "scalana-cc", ["inject"]),
}
# What a program's detect needs beyond the defaults: poll_layer's mailbox
# layer (functions mbox_*) is its communication, which no wrapper times.
DETECT_ARGS = {"poll_layer": ["--comm-layer", "mbox_*"]}
# What a program needs beyond -O2 to build, and in its runs' environment.
# libomp's idle threads sleep rather than spin: 8 ranks of 2 threads share
# 2 cores here.
OMP_PROGRAMS = ("hybrid_omp", "hybrid_threads", "hybrid_static", "hybrid_growing",
                "hybrid_tasks", "hybrid_serial")
PROGRAM_FLAGS = {name: ["-fopenmp"] for name in OMP_PROGRAMS}
PROGRAM_ENV = {name: {"OMP_WAIT_POLICY": "passive", "OMP_NUM_THREADS": "2"}
               for name in OMP_PROGRAMS}
# The culprit thread each program's injection names (the last rank's
# thread 0; any rank's thread 1).
CULPRIT = {"hybrid_threads": re.compile(r"rank (\d+) thread 0$"),
           "hybrid_static": re.compile(r"rank (\d+) thread 1$"),
           "hybrid_growing": re.compile(r"rank (\d+) thread 1$")}
PARALLEL_DIRECTIVE = re.compile(r"^\s*#\s*pragma\s+omp\s+parallel\b")
DEFAULT_SCALES = [1, 2, 4, 8]
MARKER = re.compile(r"(//|!)\s*ROOT CAUSE")


class Failure(Exception):
    pass


def log(msg):
    print(f"e2e: {msg}", flush=True)


def run(cmd, cwd=None, timeout=300):
    """Runs CMD and returns its stdout; a non-zero exit is a test failure."""
    log("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise Failure(f"command failed with exit code {proc.returncode}: {' '.join(cmd)}\n"
                      f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}")
    if proc.stderr.strip():
        sys.stdout.write(proc.stderr[-2000:])
    return proc.stdout


def read_run(scalana, out):
    """The profile run directory OUT holds (profile.scalana, or the older
    profile.json.gz), as `scalana show --format json` prints it; a run
    without either is a test failure."""
    if not any(os.path.exists(os.path.join(out, f))
               for f in ("profile.scalana", "profile.json.gz")):
        raise Failure(f"no profile in {out} after the run")
    return json.loads(run([scalana, "show", out, "--format", "json"]))


def mpi_environment():
    env = os.environ
    # Waiting ranks must yield the CPU: 4 and 8 ranks share 2 cores here.
    env["OMPI_MCA_mpi_yield_when_idle"] = "1"
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"


def root_cause_line(source_path, case=None):
    """The line (1-based) that carries the ROOT CAUSE marker, or with CASE
    the `ROOT CAUSE (CASE)` one of a program with several injections;
    exactly one."""
    marker, what = MARKER, "ROOT CAUSE"
    if case is not None:
        marker = re.compile(r"(//|!)\s*ROOT CAUSE \(" + re.escape(case) + r"\)")
        what = f"ROOT CAUSE ({case})"
    hits = []
    with open(source_path) as f:
        for number, text in enumerate(f, 1):
            if marker.search(text):
                hits.append(number)
    if len(hits) != 1:
        raise Failure(f"{source_path}: expected exactly one {what} marker, found {hits}")
    return hits[0]


class Example:
    def __init__(self, args):
        self.name = args.example
        self.wrapper = None
        if self.name in PROGRAMS:
            path, self.wrapper, _ = PROGRAMS[self.name]
            self.source = os.path.join(args.source_dir, path)
            self.source_name, self.inject_args = os.path.basename(path), ["--inject"]
            self.makefile = None
        else:
            self.source_name, self.inject_args = EXAMPLES[self.name]
            self.source = os.path.join(args.source_dir, "examples", self.name, self.source_name)
            self.makefile = os.path.join(args.source_dir, "examples", self.name, "Makefile")
        self.work = os.path.join(args.work_dir, self.name)
        self.binary = os.path.join(self.work, self.name)
        self.bin_dir = args.bin_dir
        self.scalana = os.path.join(args.bin_dir, "scalana")
        self.mpirun = args.mpirun
        self.scales = args.scales
        self.rc_line = root_cause_line(self.source) if self.name not in PROGRAMS or \
            "inject" in PROGRAMS[self.name][2] else None

    def run_dir(self, variant, np):
        return os.path.join(self.work, "runs", f"{variant}-np{np}")

    def require_binary(self):
        if not os.path.exists(self.binary):
            raise Failure(f"{self.binary} is missing: the build stage must pass first")


def stage_build(ex):
    os.makedirs(ex.work, exist_ok=True)
    if os.path.exists(ex.binary):
        os.remove(ex.binary)
    if ex.makefile:
        run(["make", "-f", ex.makefile, f"SCALANA_BIN={ex.bin_dir}/"], cwd=ex.work)
    else:
        run([os.path.join(ex.bin_dir, ex.wrapper), "-O2"] + PROGRAM_FLAGS.get(ex.name, []) +
            ["-I", os.path.dirname(ex.source), ex.source, "-o", ex.binary, "-lm"], cwd=ex.work)
    ex.require_binary()


def stage_psg(ex):
    ex.require_binary()
    text = run([ex.scalana, "psg", ex.binary])
    summary = [line for line in text.splitlines() if line.startswith("summary:")]
    if not summary:
        raise Failure(f"scalana psg printed no summary line:\n{text[-2000:]}")
    log(summary[0])
    graph = json.loads(run([ex.scalana, "psg", "--format", "json", ex.binary]))
    summary = graph["summary"]
    sizes = {"before": summary["vertices_before"], "after": summary["vertices_after"],
             "functions": summary["functions"]}
    # The marked line must be a loop vertex in the contracted graph: that is
    # what the detector can name.
    loops = [v for v in graph["vertices"]
             if v["kind"] == "loop" and os.path.basename(v["file"]) == ex.source_name
             and v["line"] == ex.rc_line]
    if not loops:
        lines = sorted({v["line"] for v in graph["vertices"] if v["kind"] == "loop"})
        raise Failure(f"no loop vertex at {ex.source_name}:{ex.rc_line} in the PSG; "
                      f"loops are at lines {lines}")
    mpis = sorted({v.get("label", "") for v in graph["vertices"] if v["kind"] == "mpi"})
    if not mpis:
        raise Failure("the PSG has no MPI vertex")
    log(f"PSG: {sizes['before']} vertices before contraction, {sizes['after']} after; "
        f"MPI operations {mpis}")
    with open(os.path.join(ex.work, "psg-sizes.json"), "w") as f:
        json.dump(sizes, f)


def stage_prof(ex, variant):
    ex.require_binary()
    mpi_environment()
    os.environ.update(PROGRAM_ENV.get(ex.name, {}))
    args = ex.inject_args if variant == "inject" else []
    for np in ex.scales:
        out = ex.run_dir(variant, np)
        shutil.rmtree(out, ignore_errors=True)
        stdout = run([ex.mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(np),
                      ex.scalana, "prof", "-o", out, "--", ex.binary] + args, cwd=ex.work)
        sys.stdout.write(stdout[-1000:])
        profile = out
        doc = read_run(ex.scalana, out)
        ranks = sorted(r["rank"] for r in doc["ranks"])
        if doc["meta"]["world_size"] != np or ranks != list(range(np)):
            raise Failure(f"{profile}: expected ranks 0..{np - 1}, got world_size "
                          f"{doc['meta']['world_size']} and ranks {ranks}")
        samples = sum(r["samples"] for r in doc["ranks"])
        if samples == 0:
            raise Failure(f"{profile}: no samples")
        log(f"np={np}: {samples} samples, {len(doc['contexts'])} contexts")


def stage_show(ex):
    np = max(s for s in ex.scales if s > 1) if any(s > 1 for s in ex.scales) else ex.scales[0]
    out = ex.run_dir("inject", np)
    text = run([ex.scalana, "show", out])
    if ex.source_name not in text:
        raise Failure(f"scalana show {out} does not mention {ex.source_name}:\n{text[-3000:]}")
    if text.count("\n== rank ") != np:
        raise Failure(f"scalana show {out}: expected a table per rank for {np} ranks:\n"
                      f"{text[-3000:]}")
    log(f"scalana show: {len(text.splitlines())} lines for {np} ranks")
    check_summary(ex, out, np)


def check_summary(ex, out, np):
    """`scalana show --tables summary` (the default past 64 ranks) folds the
    per-rank tables over the ranks: one row per vertex, whatever the rank
    count, and the ranks that stand out named under it. With --inject the
    ROOT CAUSE line runs on the culprit ranks alone: its row must name them
    (fig3 and cg inject on the last rank, kernel and busyidle on several;
    events' scan grows on every rank alike, so none stands out there)."""
    text = run([ex.scalana, "show", out, "--tables", "summary"])
    if "\n== rank " in text or f"== {np} ranks summarised" not in text:
        raise Failure(f"scalana show --tables summary {out} printed per-rank tables:\n{text[-3000:]}")
    where = f"{ex.source_name}:{ex.rc_line} "
    lines = text.splitlines()
    rows = [i for i, l in enumerate(lines) if where in l and not l.lstrip().startswith("dep")]
    if not rows:
        raise Failure(f"the summary has no row for {where.strip()}:\n{text[-3000:]}")
    if ex.name == "events":
        log(f"summary: {len(lines)} lines; {where.strip()} has its row")
        return
    below = lines[rows[0] + 1] if rows[0] + 1 < len(lines) else ""
    m = re.search(r"over 1\.3x the median: ranks (\S+) \((\d+) ranks?\)", below)
    if not m or int(m.group(2)) >= np:
        raise Failure(f"the summary's row for {where.strip()} names no ranks standing out:\n"
                      f"{lines[rows[0]]}\n{below}")
    log(f"summary: {len(lines)} lines; {where.strip()} stands out on ranks {m.group(1)}")


def check_phase_pairing(causes, report_path):
    """tags: both phases use tag 99 between the same ranks. A crossing taken
    from a Waitall (the solve's exchange) must land on a send of the same
    phase, in the same function, never on the setup's blocking sends."""
    crossings = 0
    for c in causes:
        path = c.get("path", [])
        for before, step in zip(path, path[1:]):
            if step.get("via") != "p2p" or before.get("name") != "MPI_Waitall":
                continue
            crossings += 1
            if step.get("function") != before.get("function"):
                raise Failure(f"the Waitall in {before.get('function')} (line {before.get('line')})"
                              f" is paired with {step.get('name')} in {step.get('function')} "
                              f"(line {step.get('line')}), a send of another phase "
                              f"(report in {report_path})")
    if not crossings:
        raise Failure(f"no path crosses from the solve's Waitall (report in {report_path})")
    log(f"{crossings} crossing(s) from a Waitall land on a send of its own phase")


def check_parallel_region_path(ex, runs, top, report_path):
    """hybrid_omp: the injected loop is the body of a parallel region, which
    clang outlines into `main.omp_outlined`. The reports must name the region
    where the source has it, `main > parallel region (hybrid_omp.c:N)` at the
    directive's line, in the JSON and in the text, and no compiler name."""
    with open(ex.source) as f:
        lines = [no for no, text in enumerate(f, 1) if PARALLEL_DIRECTIVE.match(text)]
    if len(lines) != 1:
        raise Failure(f"{ex.source}: expected one parallel directive, found lines {lines}")
    directive = lines[0]
    sites = [(s.get("function"), os.path.basename(s.get("file", "")), s.get("line"))
             for s in top.get("call_sites") or []]
    if top.get("call_path") != ["main", "parallel region"] or \
            sites != [("parallel region", ex.source_name, directive)]:
        raise Failure(f"the JSON report's call path of the top root cause is "
                      f"{top.get('call_path')} through {sites}, expected main > parallel region "
                      f"at {ex.source_name}:{directive} (report in {report_path})")
    text = run([ex.scalana, "detect"] + runs)
    want = f"call path: main > parallel region ({ex.source_name}:{directive})"
    first = text.split("#2 ")[0]
    if want not in first or f"{ex.source_name}:{ex.rc_line}" not in first:
        raise Failure(f"the text report's first root cause is not {ex.source_name}:{ex.rc_line} "
                      f"with '{want}':\n{first[-3000:]}")
    if "omp_outlined" in text:
        raise Failure("the text report names the compiler's outlined function:\n" + text[-3000:])
    log(f"reached through the parallel region at {ex.source_name}:{directive}: {want}")


def check_culprit_thread(ex, top, report_path):
    """hybrid_threads, hybrid_static: the top root cause names its culprit
    thread (`rank 3 thread 0`), the barrier waits of the rank's other thread
    traced to it, and a fix that gives time back."""
    culprit = top.get("culprit", "")
    m = CULPRIT[ex.name].match(culprit)
    last = max(ex.scales) - 1
    if not m or (ex.name == "hybrid_threads" and int(m.group(1)) != last):
        raise Failure(f"the top root cause's culprit is '{culprit}', expected "
                      f"{CULPRIT[ex.name].pattern} (rank {last} for hybrid_threads; "
                      f"report in {report_path})")
    if top.get("thread_waits_caused", 0) <= 0 or top.get("waiting_threads", 0) < 1:
        raise Failure(f"no barrier wait of another thread is traced to {culprit} "
                      f"(report in {report_path})")
    if top.get("saved_seconds", 0) <= 0:
        raise Failure(f"'if fixed' gives nothing back for {culprit} (report in {report_path})")
    if ex.name == "hybrid_threads" and top.get("waits_caused", 0) <= 0:
        raise Failure(f"no rank's MPI wait is traced to {culprit} (report in {report_path})")
    if "parallel region" not in (top.get("call_path") or []):
        raise Failure(f"the call path {top.get('call_path')} does not go through the parallel "
                      f"region (report in {report_path})")
    log(f"culprit {culprit}: {top['thread_waits_caused']:.3f} s of barrier waits on "
        f"{top['waiting_threads']} thread(s), {top.get('waits_caused', 0):.3f} s of MPI waits "
        f"on {top.get('waiting_ranks', 0)} rank(s); if fixed {top['saved_seconds']:.3f} s")


def check_growing_imbalance(ex, top, report_path):
    """hybrid_growing: the thread imbalance is non-scalable. Where the
    loop's time per rank grows past the threshold it is non-scalable as a
    vertex; where only the imbalance does, its excess is given at the
    smallest and largest scale, larger at the largest."""
    growth = (top.get("growth") or {}).get("thread excess")
    if not top.get("non_scalable"):
        raise Failure(f"the growing thread imbalance is not named non-scalable "
                      f"(report in {report_path})")
    if growth and not growth[1] > growth[0]:
        raise Failure(f"its thread excess does not grow: {growth} (report in {report_path})")
    ranks = (top.get("growth") or {}).get("ranks")
    if growth and ranks != [min(ex.scales), max(ex.scales)]:
        raise Failure(f"its growth is given for ranks {ranks}, expected "
                      f"{[min(ex.scales), max(ex.scales)]} (report in {report_path})")
    log(f"non-scalable thread imbalance, excess {growth} at ranks {ranks}")


def check_comm_layer(doc, report_path):
    """The declared layer holds vertices, and what of it is reported is
    communication named by its pattern, never a computation cause."""
    layers = doc.get("comm_layers", [])
    if not layers or layers[0].get("pattern") != "mbox_*" or not layers[0].get("vertices"):
        raise Failure(f"the report's comm_layers do not name mbox_* with its vertices: {layers} "
                      f"(report in {report_path})")
    for c in doc.get("root_causes", []):
        if c.get("function", "").startswith("mbox_") and c.get("kind") != "mpi" and \
                (not c.get("communication") or c.get("comm_layer") != "mbox_*"):
            raise Failure(f"{c.get('file')}:{c.get('line')} in {c.get('function')} is in the "
                          f"declared layer but reported as computation (report in {report_path})")
    log(f"communication layer mbox_*: {layers[0]['vertices']} vertices")


def stage_detect(ex, variant):
    runs = [ex.run_dir(variant, np) for np in ex.scales]
    report_path = os.path.join(ex.work, f"detect-{variant}.json")
    # The examples are weak-scaling experiments; the default `--scaling auto`
    # must find that out from their computation time per rank.
    doc = json.loads(run([ex.scalana, "detect", "--format", "json"] +
                         DETECT_ARGS.get(ex.name, []) + runs))
    with open(report_path, "w") as f:
        json.dump(doc, f, indent=1)
    log(doc["options"].get("scaling_reason", ""))
    causes = doc.get("root_causes", [])
    for c in causes[:5]:
        log(f"root cause {os.path.basename(c.get('file', '?'))}:{c.get('line')} "
            f"kind {c.get('kind')} score {c.get('score')} ranks {c.get('ranks')}")
    if variant == "inject":
        if not causes:
            raise Failure(f"no root cause reported; expected {ex.source_name}:{ex.rc_line} "
                          f"(report in {report_path})")
        top = causes[0]
        got = (os.path.basename(top.get("file", "")), top.get("line"))
        # Code every rank runs, made costly through one call site, is named
        # by the call site its context goes through.
        sites = top.get("call_sites") or []
        if sites and got != (ex.source_name, ex.rc_line):
            last = sites[-1]
            if (os.path.basename(last.get("file", "")), last.get("line")) == \
                    (ex.source_name, ex.rc_line):
                log(f"top root cause {got[0]}:{got[1]} is reached through the marked call at "
                    f"line {ex.rc_line}")
                got = (ex.source_name, ex.rc_line)
        if ex.name == "tags":
            check_phase_pairing(causes, report_path)
        if ex.name == "hybrid_omp":
            check_parallel_region_path(ex, runs, top, report_path)
        if ex.name == "poll_layer":
            check_comm_layer(doc, report_path)
        if ex.name in CULPRIT and got == (ex.source_name, ex.rc_line):
            check_culprit_thread(ex, top, report_path)
        if ex.name == "hybrid_growing" and got == (ex.source_name, ex.rc_line):
            check_growing_imbalance(ex, top, report_path)
        if ex.name == "hybrid_tasks" and got == (ex.source_name, ex.rc_line):
            last = max(ex.scales) - 1
            if top.get("culprit_rank") != last or top.get("communication") or \
                    top.get("kind") != "loop":
                raise Failure(f"the slow task is not named as computation on rank {last}: "
                              f"culprit {top.get('culprit')}, kind {top.get('kind')}, "
                              f"communication {top.get('communication')} "
                              f"(report in {report_path})")
            log(f"slow task named on {top.get('culprit')}, cost {top.get('cost_seconds'):.3f} s")
        if ex.name == "hybrid_serial" and got == (ex.source_name, ex.rc_line):
            if not top.get("serial_fraction") or "parallel region" in (top.get("call_path") or []):
                raise Failure(f"the top root cause is not named the serial fraction, outside the "
                              f"parallel region: serial_fraction {top.get('serial_fraction')}, "
                              f"call path {top.get('call_path')} (report in {report_path})")
            log("named as the serial fraction")
        if got != (ex.source_name, ex.rc_line):
            raise Failure(f"top root cause is {got[0]}:{got[1]}, expected "
                          f"{ex.source_name}:{ex.rc_line} (report in {report_path})")
    else:
        # Communication that no computation explains is named, not blamed on
        # code: it must say what grew, and it may score high (waiting grows
        # when 8 ranks share 2 cores).
        comm = [c for c in causes if c.get("communication")]
        for c in comm:
            said = "per rank" in c.get("explanation", "") or \
                "communication layer" in c.get("explanation", "")
            if (c.get("kind") != "mpi" and not c.get("comm_layer")) or not said:
                raise Failure(f"communication root cause {c.get('file')}:{c.get('line')} "
                              f"does not say what grew (report in {report_path})")
        comm_ns = [v for v in doc.get("non_scalable", []) if v.get("kind") == "mpi"]
        # The hybrid programs' clean runs put 4 ranks of 2 threads on 2 cores:
        # their MPI waits grow with the oversubscription, which a noise-level
        # computation cause may be said to explain; what they must show is
        # that no computation stands out (below).
        # Growth that the ranks' wait for a core explains is listed as the
        # machine's contention; it must say so.
        contention = doc.get("contention", [])
        for c in contention:
            if c.get("kind") == "mpi" and "waiting for a core" not in c.get("contention", ""):
                raise Failure(f"contention entry {c.get('file')}:{c.get('line')} does not say "
                              f"the ranks waited for a core (report in {report_path})")
        # Named as communication, as contention, or traced by backtracking
        # to the computation its waits wait for (the waits of a cause): on
        # loaded cores a clean run's noise can take the waits that way.
        named_mpi = [c for c in causes + doc.get("minor_causes", []) + contention
                     if c.get("kind") == "mpi" or c.get("waits_caused", 0) > 0]
        if comm_ns and ex.name not in OMP_PROGRAMS and not named_mpi:
            raise Failure(f"{len(comm_ns)} non-scalable MPI vertices, but no root cause or "
                          f"contention entry names the communication loss "
                          f"(report in {report_path})")
        log(f"contention entries: {len(contention)}")
        log(f"communication losses named: {len(comm)}")
        if ex.name == "merged_mpi":
            merged = [w for w in doc.get("warnings", []) if "have no line" in w]
            if not merged:
                raise Failure("the merged MPI_Allreduce call site is not reported: did clang "
                              f"keep the four calls apart? (report in {report_path})")
            log(merged[0])
        if ex.name == "alltoall":
            # On 8 ranks sharing 2 cores its time grows far faster than its
            # bytes: contention, which must still say the bytes grew.
            named = [c for c in comm + contention
                     if "bytes per rank grow" in c.get("explanation", "")]
            if not named:
                raise Failure("the all-to-all's loss is not named as communication whose bytes "
                              f"per rank grow (report in {report_path})")
            log(f"named: {named[0]['file']}:{named[0]['line']}: {named[0]['explanation']}")
        high = [c for c in causes
                if not c.get("communication") and c.get("score", 0) >= HIGH_SCORE]
        if high:
            raise Failure(f"nothing injected, yet {len(high)} root cause(s) score >= {HIGH_SCORE}: "
                          + ", ".join(f"{os.path.basename(c.get('file', '?'))}:{c.get('line')} "
                                      f"({c.get('score')})" for c in high)
                          + f" (report in {report_path})")


def stage_sizes(args):
    print("| example | language | functions | PSG vertices before contraction | after |")
    print("| --- | --- | --- | --- | --- |")
    for name, (source, _) in EXAMPLES.items():
        path = os.path.join(args.work_dir, name, "psg-sizes.json")
        if not os.path.exists(path):
            print(f"| {name} | | | (not built) | |")
            continue
        with open(path) as f:
            sizes = json.load(f)
        language = {"c": "C", "cpp": "C++", "f90": "Fortran"}[source.rsplit(".", 1)[1]]
        print(f"| {name} | {language} | {sizes['functions']} | {sizes['before']} | {sizes['after']} |")


def private_tmpdir():
    """Open MPI 4.1 races when concurrent launches create the shared session
    directory under one TMPDIR ("mkdir ... File exists"); tests run in
    parallel, so this one's launches get a TMPDIR of their own."""
    session_tmp = tempfile.mkdtemp(prefix="scalana-test-")
    atexit.register(shutil.rmtree, session_tmp, True)
    os.environ["TMPDIR"] = session_tmp


def main():
    private_tmpdir()
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["build", "psg", "prof", "show", "detect", "sizes"])
    parser.add_argument("example", nargs="?", choices=sorted(list(EXAMPLES) + list(PROGRAMS)))
    parser.add_argument("--variant", choices=["inject", "clean"], default="inject")
    parser.add_argument("--bin-dir", required=True, help="BUILD/bin with scalana and the wrappers")
    parser.add_argument("--source-dir", required=True, help="the repository root")
    parser.add_argument("--work-dir", required=True, help="where builds and runs go")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--scales", default=",".join(map(str, DEFAULT_SCALES)),
                        type=lambda s: [int(x) for x in s.split(",")],
                        help="rank counts to profile, comma-separated")
    args = parser.parse_args()
    args.bin_dir = os.path.abspath(args.bin_dir)
    args.work_dir = os.path.abspath(args.work_dir)
    try:
        if args.stage == "sizes":
            stage_sizes(args)
            return 0
        if not args.example:
            parser.error(f"stage {args.stage} needs an example")
        ex = Example(args)
        if args.stage == "build":
            stage_build(ex)
        elif args.stage == "psg":
            stage_psg(ex)
        elif args.stage == "prof":
            stage_prof(ex, args.variant)
        elif args.stage == "show":
            stage_show(ex)
        else:
            stage_detect(ex, args.variant)
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"e2e: FAILED: {e}", file=sys.stderr)
        return 1
    log("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
