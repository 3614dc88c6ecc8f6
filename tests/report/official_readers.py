#!/usr/bin/env python3
"""Reads `scalana export` output with the official readers, inside the venv
that the set-up (scripts/bootstrap.sh) installs from tests/requirements.txt,
and compares every value they read with the profiles' own (TRUTH, written by
export_test.py from `scalana show --format json`).

usage: official_readers.py FORMAT EXPORT TRUTH REQUIREMENTS
  extrap   EXPORT is the --format extrap file: Extra-P's command-line modeller
           (`extrap --json`) and its Python API build a model of every
           callpath and metric; the measurements they hold equal the profiles'
  hatchet  EXPORT is the --format hatchet directory: one GraphFrame per run,
           every node's metrics equal the profile's
  thicket  the same directory read as one Thicket ensemble of all runs
           (metadata mpi.world.size from the file names)
  cube     EXPORT is the --format cube directory: pycubexr reads every
           .cubex (each metric, cnode and rank equal to the profile's), and
           `extrap --cube` models the directory
"""
import importlib.metadata
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import warnings

fmt, export, truth_path, requirements = sys.argv[1:5]
with open(truth_path) as f:
    TRUTH = json.load(f)
KEY = f"loop at {TRUTH['source']}:{TRUTH['rc_line']}"
VENV_BIN = os.path.dirname(sys.executable)


class Failure(Exception):
    pass


def check_pins():
    """The venv holds exactly the pinned versions (a venv from another
    requirements file would test other readers than the ones named)."""
    wrong = []
    with open(requirements) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line:
                continue
            name, want = line.split("==")
            try:
                have = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                have = "missing"
            if have != want:
                wrong.append(f"{name} {have} (pinned {want})")
    if wrong:
        raise Failure(f"the venv {os.path.dirname(VENV_BIN)} does not match {requirements}: "
                      f"{', '.join(wrong)}; run the set-up again: scripts/bootstrap.sh test")


def close(a, b):
    return abs(a - b) <= 1e-6 + 1e-5 * max(abs(a), abs(b))


def same(what, got, want):
    if isinstance(want, (list, tuple)):
        got = [float(x) for x in got]
        if len(got) != len(want) or not all(close(g, w) for g, w in zip(got, want)):
            raise Failure(f"{what}: read {got}, the profile has {want}")
    elif not close(float(got), float(want)):
        raise Failure(f"{what}: read {got}, the profile has {want}")


def run_truth(name):
    for r in TRUTH["runs"]:
        if r["name"] == name:
            return r
    raise Failure(f"no profiled run for the export {name}")


def extrap_cli(options, export):
    """Extra-P's command-line modeller on EXPORT with OPTIONS; returns its
    completed process and the experiment it saved."""
    from extrap.fileio.experiment_io import read_experiment
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "scalana.extra-p")
        cmd = [os.path.join(VENV_BIN, "extrap"), options[0], "--disable-progress"] + \
            options[1:] + ["--save-experiment", saved, export]
        print("official: $ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise Failure(f"extrap {options[0]} exit code {p.returncode}:\n{p.stdout[-2000:]}\n"
                          f"{p.stderr[-2000:]}")
        return p, read_experiment(saved)


def expected(run, root, children):
    """Per node NAME of the tree (ROOT, CHILDREN: name -> child names) as the
    reader built it: per-rank exclusive and inclusive time from the profile's
    rows, and the metrics of every export derived from them (docs/report.md)."""
    n = len(run["ranks"])
    hz = run["hz"]
    zero = {"type": None, "line": None, "cpu": [0.0] * n, "off_cpu": [0.0] * n, "mpi": [0.0] * n,
            "wait": [0.0] * n, "counters": {c: [0.0] * n for c in run["counters"]}}
    out = {}

    def visit(name):
        if name in out:
            raise Failure(f"{name} appears twice in the tree the reader built")
        own = run["nodes"].get(name, zero)
        if own["type"] == "mpi":
            exc = [max(c, m) + o for c, m, o in zip(own["cpu"], own["mpi"], own["off_cpu"])]
        else:
            exc = [c + m + o for c, m, o in zip(own["cpu"], own["mpi"], own["off_cpu"])]
        inc = list(exc)
        for c in children.get(name, []):
            for i, t in enumerate(visit(c)["inc"]):
                inc[i] += t
        samples = [round(c * hz) if hz > 0 else 0 for c in own["cpu"]]
        out[name] = {
            "own": own, "exc": exc, "inc": inc, "samples_per_rank": samples,
            "time": max(exc), "time (mean)": sum(exc) / n, "time (inc)": max(inc),
            "cpu": max(own["cpu"]), "off cpu": max(own["off_cpu"]), "mpi": max(own["mpi"]),
            "mpi wait": sum(own["wait"]),
            "samples": sum(samples), "ranks": sum(1 for t in inc if t > 0)}
        return out[name]

    visit(root)
    missing = sorted(set(run["nodes"]) - set(out))
    if missing:
        raise Failure(f"{run['name']}: the reader's tree lacks nodes with data: {missing}")
    return out


HATCHET_METRICS = ("time (inc)", "time", "time (mean)", "cpu", "off cpu", "mpi", "mpi wait", "samples",
                   "ranks")


def check_frame(what, frame, want):
    own = want["own"]
    if own["type"] is not None and (frame.get("type") != own["type"]
                                    or frame.get("line") != own["line"]):
        raise Failure(f"{what}: frame {dict(frame.attrs)}, the profile has type "
                      f"{own['type']} line {own['line']}")


# ------------------------------------------------------------------ Extra-P

def extrap_expected(experiment):
    """callpath -> metric -> {p: [values, one per run with p ranks]}, for the
    tree of the callpaths the reader holds (names joined by '->')."""
    children, root = {}, None
    for cp in experiment.callpaths:
        parts = cp.name.split("->")
        children.setdefault(parts[-1], [])
        if len(parts) == 1:
            if root is not None:
                raise Failure(f"two roots: {root}, {parts[0]}")
            root = parts[0]
        else:
            children.setdefault(parts[-2], []).append(parts[-1])
    want = {}
    scales = sorted({r["scale"] for r in TRUTH["runs"]})
    for run in TRUTH["runs"]:
        exp = expected(run, root, children)

        def walk(name, path):
            cp = f"{path}->{name}" if path else name
            e = exp[name]
            for metric, v in (("time", e["time"]), ("time_mean", e["time (mean)"]),
                              ("time_incl", e["time (inc)"])):
                want.setdefault(cp, {}).setdefault(metric, {}).setdefault(run["scale"], []) \
                    .append(v)
            for c in children.get(name, []):
                walk(c, cp)
        walk(root, "")
    return want


def check_extrap_experiment(who, experiment, models):
    want = extrap_expected(experiment)
    if [p.name for p in experiment.parameters] != ["p"]:
        raise Failure(f"{who}: parameters {experiment.parameters}")
    got_points = sorted(c[0] for c in experiment.coordinates)
    scales = sorted({r["scale"] for r in TRUTH["runs"]})
    if got_points != scales:
        raise Failure(f"{who}: points {got_points}, the runs have {scales}")
    cps = {cp.name for cp in experiment.callpaths}
    if cps != set(want):
        raise Failure(f"{who}: callpaths {sorted(cps ^ set(want))} differ from the profiles'")
    metrics = {m.name for m in experiment.metrics}
    if metrics != {"time", "time_mean", "time_incl"}:
        raise Failure(f"{who}: metrics {sorted(metrics)}")
    n = 0
    for (cp, metric), ms in experiment.measurements.items():
        for m in ms:
            p = m.coordinate[0]
            w = want[cp.name][metric.name][int(p)]
            same(f"{who}: {cp.name} {metric.name} at p={p} (mean)", m.mean, sum(w) / len(w))
            same(f"{who}: {cp.name} {metric.name} at p={p} (max)", m.maximum, max(w))
            n += 1
    if n != len(want) * 3 * len(scales):
        raise Failure(f"{who}: {n} measurements, expected {len(want) * 3 * len(scales)}")
    # A model of every callpath and metric, finite at every point.
    if len(models) != len(want) * 3:
        raise Failure(f"{who}: {len(models)} models for {len(want)} callpaths x 3 metrics")
    for (cp, metric), model in models.items():
        f = model.hypothesis.function
        for p in scales:
            if not math.isfinite(f.evaluate(p)):
                raise Failure(f"{who}: model of {cp} {metric} is {f.evaluate(p)} at p={p}")
    rc = [k for k in models if k[0].name.split("->")[-1] == KEY and k[1].name == "time"]
    if len(rc) != 1:
        raise Failure(f"{who}: no model of {KEY} time")
    f = models[rc[0]].hypothesis.function
    lo, hi = f.evaluate(min(scales)), f.evaluate(4 * max(scales))
    if not hi > lo:
        raise Failure(f"{who}: the model of {KEY} does not grow with p: {f}")
    print(f"official: {who}: {len(cps)} callpaths, {n} measurements equal to the profiles'; "
          f"{len(models)} models; {KEY}: {f} ({lo:.3g} -> {hi:.3g} at p={4 * max(scales)})")
    return {(cp.name, m.name): model.hypothesis.function for (cp, m), model in models.items()}


def check_extrap():
    from extrap.fileio.file_reader.json_file_reader import JsonFileReader
    from extrap.modelers.model_generator import ModelGenerator

    # The Python API.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "at least 5 points": the runs have 3
        experiment = JsonFileReader().read_experiment(export)
        generator = ModelGenerator(experiment)
        generator.model_all()
    api = check_extrap_experiment("Extra-P API", experiment, generator.models)

    # The command-line modeller: its printed models and its saved experiment.
    p, experiment = extrap_cli(["--json", "--print", "{callpath}\t{metric}\t{model:python}"],
                               export)
    models = experiment.modelers[0].models
    cli = check_extrap_experiment("extrap --json", experiment, models)
    printed = [line.split("\t") for line in p.stdout.splitlines() if line.count("\t") == 2]
    if len(printed) != len(cli):
        raise Failure(f"extrap --json printed {len(printed)} models, saved {len(cli)}")
    for cp, metric, model in printed:
        if (cp, metric) not in api:
            raise Failure(f"extrap --json printed a model of {cp} {metric} the API has not")
        for x in sorted({r["scale"] for r in TRUTH["runs"]}):
            printed_value = eval(model, {"log2": math.log2, "p": float(x)})  # noqa: S307
            if not close(printed_value, api[cp, metric].evaluate(x)):
                raise Failure(f"{cp} {metric}: the command line's model {model} and the API's "
                              f"{api[cp, metric]} differ at p={x}")
    print(f"official: extrap --json printed {len(printed)} models, the same as the API's")


# ------------------------------------------------------------------ Hatchet / Thicket

def literal_files():
    names = sorted((f for f in os.listdir(export) if re.fullmatch(r"scalana\.p\d+\.r\d+\.json", f)),
                   key=lambda f: [int(x) for x in re.findall(r"\d+", f)])
    if sorted(n[:-5] for n in names) != sorted(r["name"] for r in TRUTH["runs"]):
        raise Failure(f"{export}: files {names}, runs {[r['name'] for r in TRUTH['runs']]}")
    return [(os.path.join(export, n), run_truth(n[:-5])) for n in names]


def tree_of(graph, keep=lambda node: True):
    roots = [r for r in graph.roots if keep(r)]
    if len(roots) != 1:
        raise Failure(f"{len(roots)} roots")
    children = {}
    for node in graph.traverse():
        if keep(node):
            children[node.frame["name"]] = [c.frame["name"] for c in node.children if keep(c)]
    return roots[0].frame["name"], children


def check_hatchet():
    import hatchet as ht
    frames = []
    for path, run in literal_files():
        with open(path) as f:
            gf = ht.GraphFrame.from_literal(json.load(f))
        if gf.inc_metrics != ["time (inc)"] or set(gf.exc_metrics) != set(HATCHET_METRICS) - {
                "time (inc)"} or gf.default_metric != "time":
            raise Failure(f"{path}: Hatchet classified the metrics as inclusive "
                          f"{gf.inc_metrics}, exclusive {gf.exc_metrics}")
        root, children = tree_of(gf.graph)
        want = expected(run, root, children)
        frames.append((run, gf, want))
        df = gf.dataframe
        if len(df) != len(want):
            raise Failure(f"{path}: {len(df)} rows for {len(want)} nodes")
        for node in gf.graph.traverse():
            name = node.frame["name"]
            check_frame(f"{path}: {name}", node.frame, want[name])
            row = df.loc[node]
            if row["name"] != name:
                raise Failure(f"{path}: row of {name} is named {row['name']}")
            for m in HATCHET_METRICS:
                same(f"{path}: {name} {m!r}", row[m], want[name][m])
        t = float(df[df["name"] == KEY]["time"].iloc[0])
        print(f"official: hatchet {run['name']}: {len(want)} nodes x {len(HATCHET_METRICS)} "
              f"metrics equal to the profile's; {KEY} time {t:.3f}")
    # A Hatchet operation on two runs: the difference of every node's time.
    if len(frames) >= 2:
        (ra, ga, wa), (rb, gb, wb) = frames[-1], frames[-2]
        diff = ga - gb
        for node in diff.graph.traverse():
            name = node.frame["name"]
            w = wa.get(name, {"time": 0.0})["time"] - wb.get(name, {"time": 0.0})["time"]
            same(f"hatchet {ra['name']} - {rb['name']}: {name} time",
                 diff.dataframe.loc[node]["time"], w)
        print(f"official: hatchet {ra['name']} - {rb['name']}: every node's time difference "
              f"equals the profiles'")


def check_thicket():
    import hatchet as ht
    import thicket as th
    import pandas as pd

    files = literal_files()
    parts = []
    for path, run in files:
        with open(path) as f:
            gf = ht.GraphFrame.from_literal(json.load(f))
        p, r = (int(x) for x in re.fullmatch(r"scalana\.p(\d+)\.r(\d+)\.json",
                                             os.path.basename(path)).groups())
        gf.metadata = {"mpi.world.size": p, "repetition": r}
        parts.append(th.Thicket.thicketize_graphframe(gf, path))
    tk = th.Thicket.concat_thickets(parts, disable_tqdm=True)
    meta = tk.metadata.reset_index()
    if len(tk.profile) != len(files) or len(meta) != len(files):
        raise Failure(f"the ensemble has {len(tk.profile)} profiles for {len(files)} runs")
    by_profile = {}
    for _, row in meta.iterrows():
        name = f"scalana.p{int(row['mpi.world.size'])}.r{int(row['repetition'])}"
        by_profile[row["profile"]] = run_truth(name)
    if sorted(r["name"] for r in by_profile.values()) != sorted(r["name"] for _, r in files):
        raise Failure(f"the ensemble's metadata names {sorted(by_profile.values())}")
    df = tk.dataframe
    checked = 0
    wants = {}
    for prof, run in by_profile.items():
        # The nodes this run reached: a row with values under this profile.
        def reached(node, prof=prof):
            return not pd.isna(df.loc[(node, prof)]["time"])
        root, children = tree_of(tk.graph, reached)
        want = wants[prof] = expected(run, root, children)
        for node in tk.graph.traverse():
            name = node.frame["name"]
            row = df.loc[(node, prof)]
            if name not in want:
                if not all(pd.isna(row[m]) for m in HATCHET_METRICS):
                    raise Failure(f"thicket {run['name']}: {name} has values, the run has none")
                continue
            check_frame(f"thicket {run['name']}: {name}", node.frame, want[name])
            for m in HATCHET_METRICS:
                same(f"thicket {run['name']}: {name} {m!r}", row[m], want[name][m])
                checked += 1
    # An ensemble statistic over the runs: the largest time of every node.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pandas, on thicket's use of max
        th.stats.maximum(tk, columns=["time"])
    sf = tk.statsframe.dataframe
    for node in tk.graph.traverse():
        name = node.frame["name"]
        w = max(want[name]["time"] for want in wants.values() if name in want)
        same(f"thicket max time of {name}", sf.loc[node]["time_max"], w)
    print(f"official: thicket: one ensemble of {len(by_profile)} runs "
          f"({', '.join(sorted((r['name'] for r in by_profile.values())))}), "
          f"{len(list(tk.graph.traverse()))} nodes, {checked} values equal to the profiles'; "
          f"stats.maximum equal too")


# ------------------------------------------------------------------ CUBE

CUBE_METRICS = {"time": "exc", "cpu_time": "cpu", "off_cpu_time": "off_cpu", "mpi_time": "mpi",
                "mpi_wait": "wait",
                "samples": "samples_per_rank"}


def cube_tree(cube):
    roots = cube.get_root_cnodes()
    if len(roots) != 1:
        raise Failure(f"{len(roots)} root cnodes")
    children, by_name = {}, {}

    def walk(c):
        name = cube.get_region(c).name
        if name in by_name:
            raise Failure(f"two cnodes named {name}")
        by_name[name] = c
        children[name] = [cube.get_region(k).name for k in c.get_children()]
        for k in c.get_children():
            walk(k)
    walk(roots[0])
    return cube.get_region(roots[0]).name, children, by_name


def check_cube():
    from pycubexr import CubexParser
    cnode_paths = None  # the callpaths of cnodes in every run
    for run in TRUTH["runs"]:
        path = os.path.join(export, run["name"], "profile.cubex")
        with CubexParser(path) as cube:
            root, children, by_name = cube_tree(cube)

            here = set()

            def paths(name, prefix):
                cp = f"{prefix}->{name}" if prefix else name
                here.add(cp)
                for c in children[name]:
                    paths(c, cp)
            paths(root, "")
            cnode_paths = here if cnode_paths is None else cnode_paths & here
            want = expected(run, root, children)
            if len(cube.all_cnodes()) != len(want):
                raise Failure(f"{path}: {len(cube.all_cnodes())} cnodes for {len(want)} nodes")
            locs = cube.get_locations()
            if [loc.name for loc in locs] != [f"rank {r}" for r in run["ranks"]]:
                raise Failure(f"{path}: locations {[loc.name for loc in locs]}")
            names = [m.name for m in cube.get_metrics()]
            if names != list(CUBE_METRICS) + run["counters"]:
                raise Failure(f"{path}: metrics {names}")
            n = 0
            for metric in cube.get_metrics():
                values = cube.get_metric_values(metric)
                for name, cnode in by_name.items():
                    got = values.cnode_values(cnode, convert_to_exclusive=True)
                    field = CUBE_METRICS.get(metric.name)
                    if field in ("cpu", "off_cpu", "mpi", "wait"):
                        w = want[name]["own"][field]
                    elif field:
                        w = want[name][field]
                    else:
                        w = want[name]["own"]["counters"][metric.name]
                    same(f"{path}: {name} {metric.name} per rank", got, w)
                    n += len(w)
                    if metric.name == "time":  # the tree adds up to the inclusive time
                        same(f"{path}: {name} inclusive time per rank",
                             values.cnode_values(cnode, convert_to_inclusive=True),
                             want[name]["inc"])
            print(f"official: pycubexr {run['name']}: {len(want)} cnodes, {len(names)} metrics, "
                  f"{len(locs)} ranks: {n} values equal to the profile's; {KEY} cpu_time "
                  f"{[round(x, 3) for x in want[KEY]['own']['cpu']]}")

    # Extra-P reads the same directory (its cube layout) and models it.
    p, experiment = extrap_cli(["--cube", "--keep-values", "--print", "callpaths"], export)
    models = experiment.modelers[0].models
    # Extra-P joins the region names with "->" and splits them again into its
    # call tree: that tree is the cnodes' (those of every run; Extra-P merges
    # the others into their parents).
    tree = set()

    def walk(node, prefix):
        for c in node.childs:
            cp = f"{prefix}->{c.name}" if prefix else c.name
            if cp in tree:
                raise Failure(f"extrap --cube: two nodes {cp} in its call tree")
            tree.add(cp)
            walk(c, cp)
    walk(experiment.call_tree, "")
    if tree != cnode_paths:
        raise Failure(f"extrap --cube: its call tree differs from the cnodes': "
                      f"{sorted(tree ^ cnode_paths)}")
    rc = [cp for cp in experiment.callpaths if cp.name.split("->")[-1] == KEY]
    if len(rc) != 1:
        raise Failure(f"extrap --cube: no callpath ending in {KEY}")
    for run in TRUTH["runs"]:
        want = run["nodes"][KEY]["cpu"]
        ms = [m for m in experiment.measurements[(rc[0], _metric(experiment, "cpu_time"))]
              if int(m.coordinate[0]) == run["scale"]]
        same(f"extrap --cube: {KEY} cpu_time per rank at p={run['scale']}",
             sorted(float(x) for x in ms[0].values.ravel()), sorted(want))
    if not all((cp, m) in models for cp in experiment.callpaths for m in experiment.metrics):
        raise Failure("extrap --cube: a callpath or metric without a model")
    print(f"official: extrap --cube: {len(experiment.callpaths)} callpaths x "
          f"{len(experiment.metrics)} metrics modelled; {KEY} cpu_time per rank equal to the "
          f"profiles'")


def _metric(experiment, name):
    for m in experiment.metrics:
        if m.name == name:
            return m
    raise Failure(f"no metric {name}")


def main():
    try:
        check_pins()
        {"extrap": check_extrap, "hatchet": check_hatchet, "thicket": check_thicket,
         "cube": check_cube}[fmt]()
    except Failure as e:
        print(f"official: FAILED: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
