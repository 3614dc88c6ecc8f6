#!/usr/bin/env python3
"""End-to-end checks of ScalAna on the fine-grained asynchronous examples
(examples/histogram, examples/igather: MPI one-sided, aggregated actor
messaging and OpenSHMEM).

Each ctest entry runs one stage; the stages share a work directory per
example (BUILD/tests/async/work/EXAMPLE):

  build   compile both MPI variants with the example's Makefile and scalana-cc
          (--variant shmem: the OpenSHMEM one, with oshcc's flags)
  prof    profile one program (--program histogram_rma, ...) with one
          injection (--case hotspot|slowhandler|producer|clean) at each scale;
          the OpenSHMEM programs under `oshrun --mca osc ^rdma` (docs/async.md)
  detect  `scalana detect --format json --scaling weak` over those runs:
            producer, slowhandler: the top root cause is the line marked
              `ROOT CAUSE (CASE)`, and no hot spot
            hotspot: the first hot spot is the injected target rank, issued
              from the loop marked `ROOT CAUSE (hotspot)`
            clean: no root cause scores >= HIGH_SCORE, and no hot spot

The marked lines are found by grepping the source, never hard-coded. The
driver reuses tests/e2e/e2e.py's helpers.
"""
import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e  # noqa: E402

HIGH_SCORE = e2e.HIGH_SCORE
# Small problems: each run takes about a second, and every case runs at 3 scales.
PROGRAM_ARGS = {
    "histogram_rma": ["--updates", "3000", "--rounds", "10000"],
    "igather_rma": ["--reads", "3000", "--rounds", "10000"],
    "histogram_actor": ["--updates", "20000", "--rounds", "1500"],
    "igather_actor": ["--reads", "20000", "--rounds", "1500"],
    "histogram_shmem": ["--updates", "3000", "--rounds", "20000"],
    "igather_shmem": ["--reads", "3000", "--rounds", "20000"],
}
CASES = {
    "histogram_rma": ["hotspot", "producer", "clean"],
    "igather_rma": ["hotspot", "producer", "clean"],
    "histogram_actor": ["hotspot", "slowhandler", "producer", "clean"],
    "igather_actor": ["hotspot", "slowhandler", "producer", "clean"],
    "histogram_shmem": ["hotspot", "producer", "clean"],
    "igather_shmem": ["hotspot", "producer", "clean"],
}
# Open MPI's oshmem crashes every PE in shmem_finalize with its osc rdma
# component (docs/async.md, "OpenSHMEM").
OSHRUN_OPTIONS = ["--mca", "osc", "^rdma"]
SCALES = [2, 4, 8]
Failure = e2e.Failure
log = e2e.log


class Program:
    def __init__(self, args):
        self.name = args.program
        self.example = self.name.split("_")[0]
        self.source_name = self.name + ".c"
        self.source = os.path.join(args.source_dir, "examples", self.example, self.source_name)
        self.makefile = os.path.join(args.source_dir, "examples", self.example, "Makefile")
        self.work = os.path.join(args.work_dir, self.example)
        self.binary = os.path.join(self.work, self.name)
        self.bin_dir = args.bin_dir
        self.scalana = os.path.join(args.bin_dir, "scalana")
        self.mpirun = args.mpirun
        self.launcher = ([args.oshrun] + OSHRUN_OPTIONS if self.name.endswith("_shmem")
                         else [args.mpirun])

    def run_dir(self, case, np):
        return os.path.join(self.work, "runs", f"{self.name}-{case}-np{np}")


def stage_build(args):
    work = os.path.join(args.work_dir, args.example)
    os.makedirs(work, exist_ok=True)
    targets = ([f"{args.example}_shmem"] if args.variant == "shmem"
               else [f"{args.example}_rma", f"{args.example}_actor"])
    for f in targets:
        if os.path.exists(os.path.join(work, f)):
            os.remove(os.path.join(work, f))
    e2e.run(["make", "-f", os.path.join(args.source_dir, "examples", args.example, "Makefile"),
             f"SCALANA_BIN={args.bin_dir}/", f"OSHCC={args.oshcc}"] + targets, cwd=work)


def stage_prof(p, case):
    if not os.path.exists(p.binary):
        raise Failure(f"{p.binary} is missing: the build stage must pass first")
    e2e.mpi_environment()
    extra = [] if case == "clean" else [f"--inject={case}"]
    for np in SCALES:
        out = p.run_dir(case, np)
        shutil.rmtree(out, ignore_errors=True)
        stdout = e2e.run(p.launcher + ["--oversubscribe", "--allow-run-as-root", "-np", str(np),
                                      p.scalana, "prof", "-o", out, "--", p.binary]
                         + PROGRAM_ARGS[p.name] + extra, cwd=p.work)
        sys.stdout.write(stdout[-500:])
        profile = out
        doc = e2e.read_run(p.scalana, out)
        if sorted(r["rank"] for r in doc["ranks"]) != list(range(np)):
            raise Failure(f"{profile}: ranks missing")


def stage_detect(p, case):
    runs = [p.run_dir(case, np) for np in SCALES]
    report_path = os.path.join(p.work, f"detect-{p.name}-{case}.json")
    doc = json.loads(e2e.run([p.scalana, "detect", "--format", "json", "--scaling", "weak"]
                             + runs))
    with open(report_path, "w") as f:
        json.dump(doc, f, indent=1)
    causes = doc.get("root_causes", [])
    spots = doc.get("hot_spots")
    for c in causes[:5]:
        log(f"root cause {os.path.basename(c.get('file', '?'))}:{c.get('line')} "
            f"kind {c.get('kind')} score {c.get('score')} ranks {c.get('ranks')}")
    for h in (spots or [])[:3]:
        log(f"hot spot rank {h['target_rank']} share {h['share']:.2f} of {h['name']} "
            f"{os.path.basename(h['file'])}:{h['line']} loop {h.get('loop')}")
    culprit = max(SCALES) - 1  # every injection's default culprit: the last rank
    if case in ("producer", "slowhandler"):
        line = e2e.root_cause_line(p.source, case)
        if not causes:
            raise Failure(f"no root cause reported; expected {p.source_name}:{line} "
                          f"(report in {report_path})")
        top = causes[0]
        got = (os.path.basename(top.get("file", "")), top.get("line"))
        if got != (p.source_name, line):
            raise Failure(f"top root cause is {got[0]}:{got[1]}, expected {p.source_name}:{line} "
                          f"(report in {report_path})")
        if culprit not in top.get("ranks", []):
            raise Failure(f"top root cause names ranks {top.get('ranks')}, not {culprit}")
        # Nothing skews the targets: a slow rank or a long producer loop
        # changes when operations are sent, not to whom.
        if spots:
            raise Failure(f"a {case} injection, yet rank {spots[0]['target_rank']} is reported "
                          f"as a hot spot of {spots[0]['name']} (report in {report_path})")
    elif case == "hotspot":
        line = e2e.root_cause_line(p.source, case)
        if spots is None:
            raise Failure("the JSON report has no 'hot_spots' (the report does not call "
                          f"WriteHotSpotsJson); report in {report_path}")
        if not spots:
            raise Failure(f"no hot spot reported; expected rank {culprit} "
                          f"(report in {report_path})")
        top = spots[0]
        loop = top.get("loop") or {}
        got = (top["target_rank"], os.path.basename(loop.get("file", "")), loop.get("line"))
        want = (culprit, p.source_name, line)
        if got != want:
            raise Failure(f"first hot spot is rank {got[0]} from the loop at {got[1]}:{got[2]}, "
                          f"expected rank {want[0]} from {want[1]}:{want[2]} "
                          f"(report in {report_path})")
    else:
        high = [c for c in causes if c.get("score", 0) >= HIGH_SCORE and c.get("kind") != "mpi"]
        if high:
            raise Failure(f"nothing injected, yet {len(high)} root cause(s) score >= {HIGH_SCORE}: "
                          + ", ".join(f"{os.path.basename(c.get('file', '?'))}:{c.get('line')} "
                                      f"({c.get('score')})" for c in high)
                          + f" (report in {report_path})")
        if spots:
            raise Failure(f"nothing injected, yet rank {spots[0]['target_rank']} is reported as "
                          f"a hot spot (report in {report_path})")


def main():
    session_tmp = tempfile.mkdtemp(prefix="scalana-test-")
    atexit.register(shutil.rmtree, session_tmp, True)
    os.environ["TMPDIR"] = session_tmp  # Open MPI session directories (see e2e.py)
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=["build", "prof", "detect"])
    parser.add_argument("--example", choices=["histogram", "igather"])
    parser.add_argument("--program", choices=sorted(CASES))
    parser.add_argument("--case", choices=["hotspot", "slowhandler", "producer", "clean"])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--variant", choices=["mpi", "shmem"], default="mpi")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--oshcc", default="oshcc")
    parser.add_argument("--oshrun", default="oshrun")
    args = parser.parse_args()
    args.bin_dir = os.path.abspath(args.bin_dir)
    args.work_dir = os.path.abspath(args.work_dir)
    args.source_dir = os.path.abspath(args.source_dir)
    try:
        if args.stage == "build":
            stage_build(args)
        else:
            p = Program(args)
            (stage_prof if args.stage == "prof" else stage_detect)(p, args.case)
    except (Failure, e2e.subprocess.TimeoutExpired) as e:
        print(f"async: FAILED: {e}", file=sys.stderr)
        return 1
    log("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
