#!/usr/bin/env python3
"""Checks of `scalana export` on the runs of the report tests' small program
(profiled by `report_test.py hostile` at several rank counts; its last rank's
loop, the ROOT CAUSE line, grows with the rank count).

  check FORMAT   our own reader (Python stdlib only) of extrap | hatchet |
                 cube | ppg-dot: structure, and the values against the
                 profiles themselves (per-rank CPU seconds of the root-cause
                 loop, as `scalana show --format json` prints the rows)
  official FORMAT   the same through the official readers (Extra-P, Hatchet,
                 Thicket, pycubexr; FORMAT thicket reads the hatchet export as
                 one ensemble) in the venv the set-up installed from
                 tests/requirements.txt (--venv): every value they read equals
                 the profiles'; fails when the venv is missing
"""
import argparse
import gzip
import json
import os
import re
import struct
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e  # noqa: E402

Failure = e2e.Failure


def run(cmd, **kw):
    print("export: $ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode != 0:
        raise Failure(f"exit code {p.returncode}: {' '.join(cmd)}\n{p.stdout[-2000:]}\n"
                      f"{p.stderr[-2000:]}")
    return p.stdout


class Runs:
    def __init__(self, work):
        self.work = work
        self.dirs = sorted((d for d in os.listdir(work) if re.fullmatch(r"np\d+", d)),
                           key=lambda d: int(d[2:]))
        if len(self.dirs) < 2:
            raise Failure(f"{work}: fewer than two profiled runs; run the hostile stage first")
        self.paths = [os.path.join(work, d) for d in self.dirs]
        self.scales = [int(d[2:]) for d in self.dirs]
        src = [f for f in os.listdir(work) if f.endswith(".c")][0]
        self.source = src
        self.rc_line = e2e.root_cause_line(os.path.join(work, src))

    def export(self, bin_dir, fmt, out):
        run([os.path.join(bin_dir, "scalana"), "export", "--format", fmt, "-o", out] + self.paths)
        return out


def growing(values, what):
    """values: [(p, t)] ascending p; the injected vertex must grow with p."""
    ts = [t for _, t in values]
    if not all(b > a for a, b in zip(ts, ts[1:])):
        raise Failure(f"{what} does not grow with the rank count: {values}")


def check_extrap(runs, path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("parameters") != ["p"]:
        raise Failure(f"parameters {doc.get('parameters')}, expected ['p']")
    meas = doc["measurements"]
    want_points = sorted(set(runs.scales))
    for cp, metrics in meas.items():
        for metric, points in metrics.items():
            got = sorted(pt["point"][0] for pt in points)
            if got != want_points:
                raise Failure(f"{cp} {metric}: points {got}, expected {want_points}")
            for pt in points:
                if not pt["values"] or not all(isinstance(v, (int, float)) for v in pt["values"]):
                    raise Failure(f"{cp} {metric}: bad values {pt}")
    key = f"loop at {runs.source}:{runs.rc_line}"
    hits = [cp for cp in meas if cp.split("->")[-1] == key]
    if len(hits) != 1:
        raise Failure(f"expected one callpath ending in {key!r}, found {hits}")
    if not all(cp.split("->")[0] == "main" for cp in meas):
        raise Failure("a callpath does not start at main")
    pts = sorted((pt["point"][0], pt["values"][0]) for pt in meas[hits[0]]["time"])
    growing(pts, f"Extra-P time of {key}")
    print(f"export: extrap: {len(meas)} callpaths; {key}: {pts}")


def walk(node, depth=0):
    yield node, depth
    for c in node.get("children", []):
        yield from walk(c, depth + 1)


def check_hatchet(runs, out):
    series = []
    for np_, d in zip(runs.scales, runs.dirs):
        path = os.path.join(out, f"scalana.p{np_}.r1.json")
        with open(path) as f:
            roots = json.load(f)
        if not isinstance(roots, list) or len(roots) != 1:
            raise Failure(f"{path}: expected a list with one root")
        nodes = list(walk(roots[0]))
        for n, _ in nodes:
            fr = n.get("frame", {})
            if not isinstance(fr.get("name"), str) or not isinstance(fr.get("type"), str):
                raise Failure(f"{path}: node without frame name/type: {n.get('frame')}")
            m = n["metrics"]
            for k in ("time (inc)", "time", "samples", "mpi wait", "ranks"):
                if k not in m:
                    raise Failure(f"{path}: node {fr['name']} lacks metric {k!r}")
            # Inclusive time is a max over ranks: at least each child's, and
            # at least the node's own exclusive time.
            for c in n["children"]:
                if c["metrics"]["time (inc)"] > m["time (inc)"] + 1e-6:
                    raise Failure(f"{path}: child {c['frame']['name']} has more inclusive "
                                  f"time than its parent {fr['name']}")
            if m["time"] > m["time (inc)"] + 1e-6:
                raise Failure(f"{path}: {fr['name']} exclusive > inclusive")
        if roots[0]["frame"]["name"] != "main":
            raise Failure(f"{path}: root is {roots[0]['frame']['name']}")
        rc = [n for n, _ in nodes if n["frame"].get("line") == runs.rc_line
              and n["frame"]["type"] == "loop"]
        if len(rc) != 1:
            raise Failure(f"{path}: expected one loop node at line {runs.rc_line}")
        truth = max(profile_cpu(os.path.join(runs.work, d), runs.rc_line).values())
        got = rc[0]["metrics"]["time"]
        if abs(got - truth) > 1e-3 * max(1, truth):
            raise Failure(f"{path}: root-cause line time {got}, the profile says {truth}")
        series.append((np_, got))
    growing(series, "Hatchet time of the root-cause line")
    print(f"export: hatchet: root-cause line {series}")


def profile_cpu(run_dir, line):
    """Per-rank CPU seconds of the rows whose context resolves to the loop at
    LINE, read from the profile by `scalana show --format json` (contexts
    resolved, rows as recorded: [context, samples, cpu seconds, counters])."""
    doc = json.loads(run([os.path.join(ARGS.bin_dir, "scalana"), "show", "--format", "json",
                          run_dir]))
    loop = {i for i, r in enumerate(doc["resolved"])
            if r and r.get("kind") == "loop" and r.get("location", "").endswith(f":{line}")}
    if not loop:
        raise Failure(f"{run_dir}: no context resolves to the loop at line {line}")
    return {r["rank"]: sum(v[2] for v in r["vertices"] if v[0] in loop) for r in doc["ranks"]}


def check_cube(runs, out):
    for np_ in runs.scales:
        path = os.path.join(out, f"scalana.p{np_}.r1", "profile.cubex")
        with tarfile.open(path) as t:
            names = t.getnames()
            if names[0] != "anchor.xml":
                raise Failure(f"{path}: first member {names[0]}")
            anchor = ET.fromstring(t.extractfile("anchor.xml").read())
            metrics = {m.findtext("uniq_name"): int(m.get("id")) for m in anchor.iter("metric")}
            for want in ("time", "cpu_time", "mpi_time", "mpi_wait", "samples"):
                if want not in metrics:
                    raise Failure(f"{path}: no metric {want}")
            regions = {int(r.get("id")): r for r in anchor.find("program").findall("region")}
            roots = anchor.find("program").findall("cnode")
            if len(roots) != 1:
                raise Failure(f"{path}: {len(roots)} root cnodes")
            order = []  # pre-order, as cube readers enumerate exclusive metrics

            def visit(c):
                order.append(c)
                for k in c.findall("cnode"):
                    visit(k)
            visit(roots[0])
            locs = list(anchor.iter("location"))
            ranks = [int(lg.findtext("rank")) for lg in anchor.iter("locationgroup")]
            if ranks != list(range(np_)) or len(locs) != np_:
                raise Failure(f"{path}: locations for ranks {ranks}, expected 0..{np_ - 1}")
            values = {}
            for name, mid in metrics.items():
                idx = t.extractfile(f"{mid}.index").read()
                if idx[:11] != b"CUBEX.INDEX" or struct.unpack("<i", idx[11:15])[0] != 1:
                    raise Failure(f"{path}: {mid}.index header {idx[:15]!r}")
                n = struct.unpack("<i", idx[18:22])[0]
                ids = struct.unpack(f"<{n}i", idx[22:])
                data = t.extractfile(f"{mid}.data").read()
                if data[:10] != b"CUBEX.DATA" or len(data) != 10 + 8 * n * len(locs):
                    raise Failure(f"{path}: {mid}.data size {len(data)} for {n} cnodes x "
                                  f"{len(locs)} locations")
                flat = struct.unpack(f"<{n * len(locs)}d", data[10:])
                values[name] = {i: flat[k * len(locs):(k + 1) * len(locs)]
                                for k, i in enumerate(ids)}
            # The root-cause loop's per-rank CPU time equals the profile's.
            pos = [k for k, c in enumerate(order)
                   if regions[int(c.get("calleeId"))].get("begin") == str(runs.rc_line)
                   and regions[int(c.get("calleeId"))].findtext("role") == "loop"]
            if len(pos) != 1:
                raise Failure(f"{path}: expected one loop cnode at line {runs.rc_line}")
            per_rank = values["cpu_time"][pos[0]]
            truth = profile_cpu(os.path.join(runs.work, f"np{np_}"), runs.rc_line)
            for r in range(np_):
                if abs(per_rank[r] - truth.get(r, 0)) > 1e-4:
                    raise Failure(f"{path}: rank {r} cpu_time {per_rank[r]}, the profile has "
                                  f"{truth.get(r, 0)}")
            # The largest run's culprit (the last rank) is the slowest there.
            if np_ > 1 and max(range(np_), key=lambda r: per_rank[r]) != np_ - 1:
                raise Failure(f"{path}: the slowest rank of the root-cause loop is not the last")
            print(f"export: cube p{np_}: {len(order)} cnodes, {len(metrics)} metrics, "
                  f"loop per rank {[round(x, 3) for x in per_rank]}")


def check_dot(runs, path):
    svg = run(["dot", "-Tsvg", path])
    if "<svg" not in svg:
        raise Failure("dot produced no SVG")
    with open(path) as f:
        text = f.read()
    if not re.search(r'class="ppgnode', text):
        raise Failure("the DOT has no PPG node")
    # Whether a path crosses ranks depends on the waits of this run: the
    # DOT must draw a crossing exactly when the report's paths take one.
    report = json.loads(run([os.path.join(ARGS.bin_dir, "scalana"), "detect", "--format",
                             "json"] + runs.paths))
    crossings = sum(1 for c in report.get("root_causes", []) for st in c.get("path", [])
                    if st.get("via") in ("p2p", "collective", "rma"))
    if crossings and "crossing" not in text:
        raise Failure(f"the paths cross ranks {crossings} times, the DOT draws no crossing")
    if not crossings and "crossing" in text:
        raise Failure("the DOT draws a crossing that no path takes")
    nodes = len(re.findall(r'class="ppgnode', text))
    print(f"export: dot: {nodes} nodes accepted by dot")


def node_name(resolved):
    """The export's name of the vertex a context resolves to (docs/report.md:
    the function's name, else NAME at FILE:LINE), its type and line; None for
    a context outside the program or not resolved."""
    if not resolved or not resolved.get("kind"):
        return None
    kind = resolved["kind"]
    path, _, line = resolved.get("location", "").rpartition(":")
    if kind == "function":
        return resolved["function"], kind, int(line) if line.isdigit() else 0
    what = resolved["label"] if kind in ("mpi", "call") else kind
    return f"{what} at {os.path.basename(path)}:{line}", kind, int(line)


def profile_truth(runs):
    """What every export must hold, from the profiles alone: per run (named
    as the per-run exports are) and per vertex with data, per-rank CPU
    seconds (measured), MPI wall seconds, seconds blocked on other ranks
    and counters, summed over the contexts that resolve to the vertex."""
    truth = {"source": runs.source, "rc_line": runs.rc_line, "runs": []}
    reps = {}
    for np_, path in zip(runs.scales, runs.paths):
        doc = json.loads(run([os.path.join(ARGS.bin_dir, "scalana"), "show", "--format", "json",
                              path]))
        reps[np_] = reps.get(np_, 0) + 1
        sampling = doc["meta"]["sampling"]
        # The rate the run obtained (the analyzer's Run::sample_rate): its
        # rows' samples over their measured CPU seconds, every row.
        rows = [row for r in doc["ranks"] for row in r["vertices"]]
        seconds = sum(row[2] for row in rows)
        hz = sum(row[1] for row in rows) / seconds if seconds > 0 else sampling.get("hz", 0)
        counters = sampling.get("counters", [])
        ranks = sorted(r["rank"] for r in doc["ranks"])
        n = len(ranks)
        names = [node_name(r) for r in doc["resolved"]]
        nodes = {}

        def node(ctx):
            if ctx >= len(names) or names[ctx] is None:
                return None
            name, kind, line = names[ctx]
            if name not in nodes:
                nodes[name] = {"type": kind, "line": line, "cpu": [0.0] * n, "off_cpu": [0.0] * n,
                               "mpi": [0.0] * n, "wait": [0.0] * n,
                               "counters": {c: [0.0] * n for c in counters}}
            elif (nodes[name]["type"], nodes[name]["line"]) != (kind, line):
                raise Failure(f"{path}: two vertices named {name}")
            return nodes[name]
        for r in doc["ranks"]:
            slot = ranks.index(r["rank"])
            for ctx, samples, cpu, ctrs in r["vertices"]:
                if (x := node(ctx)) is not None:
                    x["cpu"][slot] += cpu
                    for c, v in zip(counters, ctrs):
                        x["counters"][c][slot] += v
            for row in r["mpi"]:
                if (x := node(row[0])) is not None:
                    x["mpi"][slot] += row[2]
            for row in r.get("off_cpu", []):  # blocked seconds; run delay is no vertex's
                if (x := node(row[0])) is not None:
                    x["off_cpu"][slot] += row[3]
            for row in r["deps"]:
                if (x := node(row[0])) is not None:
                    x["wait"][slot] += row[7]
        truth["runs"].append({"name": f"scalana.p{np_}.r{reps[np_]}", "scale": np_,
                              "ranks": ranks, "hz": hz, "counters": counters, "nodes": nodes})
    return truth


def venv_python(venv, requirements):
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        raise Failure(f"{venv}: no venv with the official readers here; run the set-up, "
                      f"scripts/bootstrap.sh test (it installs {requirements} into BUILD/venv),"
                      f" or configure with -DSCALANA_OFFICIAL_READERS=OFF to leave these tests "
                      f"out")
    return py


def official(fmt, runs, out, venv, requirements):
    """FMT's official reader (official_readers.py) in VENV, which the set-up
    made; a missing venv fails: the tests never install anything."""
    py = venv_python(venv, requirements)
    truth = os.path.join(os.path.dirname(out.rstrip("/")), f"truth.{fmt}.json")
    with open(truth, "w") as f:
        json.dump(profile_truth(runs), f, indent=1)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "official_readers.py")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               MPLCONFIGDIR=os.path.join(os.path.dirname(out.rstrip("/")), "mplconfig"))
    out_text = run([py, script, fmt, out, truth, requirements], env=env)
    print(out_text, end="")
    return 0


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["check", "official"])
    p.add_argument("format", choices=["extrap", "hatchet", "thicket", "cube", "ppg-dot"])
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--runs", required=True, help="the hostile stage's work directory")
    p.add_argument("--out", required=True, help="where exports go")
    p.add_argument("--venv", help="venv of the official readers (official mode)")
    p.add_argument("--requirements", help="the pins that venv must hold (official mode)")
    ARGS = p.parse_args()
    try:
        runs = Runs(ARGS.runs)
        if ARGS.format == "thicket" and ARGS.mode != "official":
            raise Failure("thicket: official mode only (our reader of it is check hatchet)")
        if ARGS.mode == "official" and (ARGS.format == "ppg-dot" or not ARGS.venv
                                        or not ARGS.requirements):
            raise Failure("official: extrap, hatchet, thicket or cube, with --venv and "
                          "--requirements")
        if ARGS.mode == "official":
            venv_python(ARGS.venv, ARGS.requirements)  # before anything else: say what is missing
        # Each mode and format writes a directory of its own: tests run in parallel.
        out_dir = os.path.join(ARGS.out, f"{ARGS.mode}-{ARGS.format}")
        os.makedirs(out_dir, exist_ok=True)
        fmt = "hatchet" if ARGS.format == "thicket" else ARGS.format
        name = {"extrap": "extrap.json", "ppg-dot": "ppg.dot"}.get(fmt, fmt)
        out = runs.export(ARGS.bin_dir, fmt, os.path.join(out_dir, name))
        if ARGS.mode == "official":
            return official(ARGS.format, runs, out, ARGS.venv, ARGS.requirements)
        if ARGS.format == "extrap":
            check_extrap(runs, out)
        elif ARGS.format == "hatchet":
            check_hatchet(runs, out)
        elif ARGS.format == "cube":
            check_cube(runs, out)
        else:
            check_dot(runs, out)
    except (Failure, subprocess.TimeoutExpired, KeyError, ValueError, OSError) as e:
        print(f"export: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
