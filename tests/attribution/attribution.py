#!/usr/bin/env python3
"""Whole pipeline on code shaped like real programs, where what the runtime
sees must still reach the right PSG vertex (tests/attribution/programs).

Programs whose hot loop and MPI calls live in a shared object built with the
wrappers:
  linked   main_linked.c linked with libsolver.so (C)
  dlopen   main_dl.c loading libsolver.so with dlopen by its bare name, found
           through the program's RUNPATH ($ORIGIN)
  fortran  main_f.f90 linked with libfsolver.so (Fortran, mpif.h)
and
  macro    macro_calls.c: a macro expanding to MPI_Comm_rank and MPI_Iprobe
           on one line and column; rank 0 polls with it
  contexts contexts12.c: a loop whose work grows with the rank count, reached
           from twelve call sites, each context under the share threshold
  line0    line0.c (and line0_len.c): a loop calling a small function of
           another file every iteration, whose spill and reload the line
           tables give line 0

Stages, one ctest entry each:
  build   the library with `-fPIC -shared`, then the program
  psg     `scalana psg PROGRAM LIBRARY` has a loop at the library's ROOT CAUSE
          line and says which shared object it is in
  prof    profile at 2, 4 and 8 ranks with the cause injected on the last rank;
          the profile lists the library among meta.modules (macro: 2 ranks)
  detect  the top root cause is the library's ROOT CAUSE line (or is reached
          through the call on it), on the last rank, and no sample or MPI
          call was left unplaced (macro: `scalana show` labels the polling
          calls at the MACRO line MPI_Iprobe, the operation the wrapper saw;
          contexts: the ROOT CAUSE line is non-scalable with its contexts
          summed, and no context of it alone; line0: the top root cause is
          the ROOT CAUSE line and, on the last rank, the call of its
          function holds under a tenth of the loop's samples)
"""
import argparse
import re
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from e2e import (Failure, log, mpi_environment, private_tmpdir, read_run,  # noqa: E402
                 root_cause_line, run)

# variant -> (wrapper, library source, library, program source, program)
VARIANTS = {
    "linked": ("scalana-cc", "solver.c", "libsolver.so", "main_linked.c", "main_linked"),
    "dlopen": ("scalana-cc", "solver.c", "libsolver.so", "main_dl.c", "main_dl"),
    "fortran": ("scalana-fc", "solver.f90", "libfsolver.so", "main_f.f90", "main_f"),
    "macro": ("scalana-cc", None, None, "macro_calls.c", "macro_calls"),
    "contexts": ("scalana-cc", None, None, "contexts12.c", "contexts12"),
    "line0": ("scalana-cc", None, None, "line0.c", "line0"),
}
# more sources and flags of a variant without a library (line0: full debug
# information is what puts the spill, not only the reload, on line 0)
EXTRA_SOURCES = {"line0": ["line0_len.c"]}
EXTRA_FLAGS = {"line0": ["-g"]}
MACRO = re.compile(r"//\s*MACRO")
SCALES = [2, 4, 8]


class Case:
    def __init__(self, args):
        self.variant = args.variant
        self.wrapper, self.lib_src, self.lib, self.main_src, self.main = VARIANTS[args.variant]
        self.programs = os.path.join(args.source_dir, "tests", "attribution", "programs")
        self.work = os.path.join(args.work_dir, args.variant)
        self.bin_dir = args.bin_dir
        self.scalana = os.path.join(args.bin_dir, "scalana")
        self.mpirun = args.mpirun
        source = os.path.join(self.programs, self.lib_src or self.main_src)
        self.rc_line = marked_line(source, MACRO) if self.variant == "macro" else \
            root_cause_line(source)

    def path(self, name):
        return os.path.join(self.work, name)

    def run_dir(self, np):
        return self.path(f"run-np{np}")


def marked_line(path, marker):
    lines = [n for n, text in enumerate(open(path), 1) if marker.search(text)]
    if len(lines) != 1:
        raise Failure(f"{path}: expected one marked line, found {lines}")
    return lines[0]


def stage_build(c):
    shutil.rmtree(c.work, ignore_errors=True)
    os.makedirs(c.work)
    cc = os.path.join(c.bin_dir, c.wrapper)
    src = lambda name: os.path.join(c.programs, name)  # noqa: E731
    if not c.lib:
        extra = [src(name) for name in EXTRA_SOURCES.get(c.variant, [])]
        flags = ["-O2"] + EXTRA_FLAGS.get(c.variant, [])
        run([cc] + flags + [src(c.main_src)] + extra + ["-o", c.path(c.main)], cwd=c.work)
        return
    run([cc, "-O2", "-fPIC", "-shared", src(c.lib_src), "-o", c.path(c.lib)], cwd=c.work)
    link = ["-L", c.work, "-l" + c.lib[3:-3]] if c.variant != "dlopen" else ["-ldl"]
    run([cc, "-O2", "-I", c.programs, src(c.main_src), "-o", c.path(c.main)] + link +
        ["-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"], cwd=c.work)


def stage_psg(c):
    if c.variant == "contexts":
        return  # nothing of its own: the PSG is the one e2e checks for every example
    if c.variant == "line0":
        graph = json.loads(run([c.scalana, "psg", "--format", "json", c.path(c.main)]))
        if not [v for v in graph["vertices"] if v["kind"] == "loop" and v["line"] == c.rc_line]:
            raise Failure(f"no loop at {c.main_src}:{c.rc_line} in the PSG of {c.main}")
        return
    if not c.lib:
        graph = json.loads(run([c.scalana, "psg", "--format", "json", c.path(c.main)]))
        ops = sorted(v["label"] for v in graph["vertices"]
                     if v["kind"] == "mpi" and v["line"] == c.rc_line)
        if ops != ["MPI_Comm_rank", "MPI_Iprobe"]:
            raise Failure(f"line {c.rc_line} holds MPI vertices {ops}, expected both calls")
        return
    graph = json.loads(run([c.scalana, "psg", "--format", "json", c.path(c.main), c.path(c.lib)]))
    loops = [v for v in graph["vertices"] if v["kind"] == "loop"
             and os.path.basename(v["file"]) == c.lib_src and v["line"] == c.rc_line]
    if not loops:
        raise Failure(f"no loop at {c.lib_src}:{c.rc_line} in the PSG of {c.main} with {c.lib}")
    objects = {f["name"]: os.path.basename(f["object"]) for f in graph["functions"]}
    if c.lib not in objects.values():
        raise Failure(f"no function of the PSG comes from {c.lib}: {objects}")
    text = run([c.scalana, "psg", c.path(c.main), c.path(c.lib)])
    if f"[{c.lib}]" not in text:
        raise Failure(f"`scalana psg` does not say which vertices are in {c.lib}:\n{text}")
    log(f"PSG functions by object: {objects}")


def stage_prof(c):
    mpi_environment()
    for np in ([2] if c.variant == "macro" else SCALES):
        out = c.run_dir(np)
        shutil.rmtree(out, ignore_errors=True)
        run([c.mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(np), c.scalana, "prof",
             "-o", out, "--", c.path(c.main), "--inject"], cwd=c.work)
        meta = read_run(c.scalana, out)["meta"]
        libs = [os.path.basename(m["path"]) for m in meta.get("modules", [])]
        if c.lib and c.lib not in libs:
            raise Failure(f"{out}: meta.modules {libs} does not list {c.lib}")


def check_macro_labels(c):
    """The polling row at the macro's line must carry the operation it ran."""
    text = run([c.scalana, "show", "--rank", "0", c.run_dir(2)])
    row = re.compile(r"^\s+(\d+)\s+[\d.]+\s+[\d.]+\s+mpi (\S+) \S*" + re.escape(c.main_src) +
                     f":{c.rc_line} ")
    calls = {}
    for line in text.splitlines():
        m = row.match(line)
        if m:
            calls[m.group(2)] = calls.get(m.group(2), 0) + int(m.group(1))
    log(f"MPI rows at {c.main_src}:{c.rc_line}: {calls}")
    if not calls or max(calls, key=calls.get) != "MPI_Iprobe":
        raise Failure(f"the polling calls at line {c.rc_line} are labelled {calls}, expected "
                      f"MPI_Iprobe:\n{text}")


def check_line_summed(c):
    """The line is non-scalable as a whole; few of its contexts are alone."""
    runs = [c.run_dir(np) for np in SCALES]
    doc = json.loads(run([c.scalana, "detect", "--format", "json"] + runs))
    at_line = [n for n in doc.get("non_scalable", [])
               if os.path.basename(n["file"]) == c.main_src and n["line"] == c.rc_line]
    log(f"non-scalable at {c.main_src}:{c.rc_line}: "
        + ", ".join(f"{n.get('contexts', 1)} contexts, share {n['share']:.3f}" for n in at_line))
    if not [n for n in at_line if n.get("contexts", 1) >= 2]:
        raise Failure(f"{c.main_src}:{c.rc_line} is not non-scalable with its contexts summed: "
                      f"{doc.get('non_scalable')}")
    # Sampling a periodic step at the tick can let a context or two pass
    # alone (they are then left out of the sum); most must not, or the
    # program no longer tests the sum.
    alone = len([n for n in at_line if n.get("contexts", 1) == 1])
    summed = max(n.get("contexts", 1) for n in at_line)
    if alone * 2 >= summed:
        raise Failure(f"{alone} contexts of the line are non-scalable alone against {summed} "
                      "summed: the program no longer tests the sum over contexts")


def check_line_zero(c):
    """The samples of the loop's line-0 instructions stay in the loop."""
    last = max(SCALES) - 1
    text = run([c.scalana, "show", "--rank", str(last), c.run_dir(max(SCALES))])
    row = re.compile(r"^\s+(\d+)\s+[\d.]+\s+(\w+) (.*)$")
    in_loop = in_call = 0
    for line in text.splitlines():
        m = row.match(line)
        if not m:
            continue
        if m.group(2) == "loop" and f"{c.main_src}:{c.rc_line} " in m.group(3) + " ":
            in_loop += int(m.group(1))
        elif m.group(2) == "call" and re.match(r"Relax \S*" + re.escape(c.main_src) + ":",
                                               m.group(3)):
            in_call += int(m.group(1))
    log(f"rank {last}: {in_loop} samples in the loop at line {c.rc_line}, {in_call} on the "
        "call of Relax in main")
    if in_loop == 0 or in_call * 10 > in_loop:
        raise Failure(f"rank {last}: the call of Relax holds {in_call} samples against the "
                      f"loop's {in_loop}: the loop's line-0 instructions went to its caller\n"
                      f"{text}")
    runs = [c.run_dir(np) for np in SCALES]
    doc = json.loads(run([c.scalana, "detect", "--format", "json"] + runs))
    top = (doc.get("root_causes") or [{}])[0]
    got = (os.path.basename(top.get("file", "")), top.get("line"), top.get("ranks"))
    if got != (c.main_src, c.rc_line, [last]):
        raise Failure(f"top root cause {got}, expected {c.main_src}:{c.rc_line} on [{last}]")


def stage_detect(c):
    if c.variant == "contexts":
        check_line_summed(c)
        return
    if c.variant == "line0":
        check_line_zero(c)
        return
    if not c.lib:
        check_macro_labels(c)
        return
    runs = [c.run_dir(np) for np in SCALES]
    doc = json.loads(run([c.scalana, "detect", "--format", "json"] + runs))
    with open(c.path("detect.json"), "w") as f:
        json.dump(doc, f, indent=1)
    causes = doc.get("root_causes", [])
    if not causes:
        raise Failure(f"no root cause; expected {c.lib_src}:{c.rc_line}")
    top = causes[0]
    got = (os.path.basename(top.get("file", "")), top.get("line"))
    sites = [(os.path.basename(s.get("file", "")), s.get("line"))
             for s in top.get("call_sites") or []]
    want = (c.lib_src, c.rc_line)
    log(f"top root cause {got[0]}:{got[1]} ranks {top.get('ranks')} via {sites}")
    if got != want and (not sites or sites[-1] != want):
        raise Failure(f"top root cause is {got[0]}:{got[1]}, expected {want[0]}:{want[1]} "
                      f"(report in {c.path('detect.json')})")
    last = max(SCALES) - 1
    if top.get("ranks") != [last]:
        raise Failure(f"top root cause is on ranks {top.get('ranks')}, expected [{last}]")
    unplaced = [w for w in doc.get("warnings", []) if "do not fit" in w or "no PSG record" in w]
    if unplaced:
        raise Failure(f"frames left unplaced: {unplaced}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["build", "psg", "prof", "detect"])
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    args = parser.parse_args()
    private_tmpdir()
    args.bin_dir, args.work_dir = os.path.abspath(args.bin_dir), os.path.abspath(args.work_dir)
    try:
        c = Case(args)
        {"build": stage_build, "psg": stage_psg, "prof": stage_prof, "detect": stage_detect}[
            args.stage](c)
    except Failure as e:
        print(f"attribution: FAILED: {e}", file=sys.stderr)
        return 1
    log("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
