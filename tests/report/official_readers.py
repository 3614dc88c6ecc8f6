#!/usr/bin/env python3
"""Reads `scalana export` output with the official readers, inside the venv
export_test.py prepares: Extra-P models, Hatchet graph frames, pycubexr.

usage: official_readers.py extrap|hatchet|cube OUT SOURCE_NAME RC_LINE SCALE...
The root-cause loop (SOURCE_NAME:RC_LINE) grows with the rank count."""
import json
import os
import sys

fmt, out, source, rc_line = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
scales = [int(s) for s in sys.argv[5:]]
key = f"loop at {source}:{rc_line}"


def fail(msg):
    print(f"official: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


if fmt == "extrap":
    try:
        from extrap.fileio.file_reader.json_file_reader import read_json_file
    except ImportError:
        from extrap.fileio.json_file_reader import read_json_file
    from extrap.modelers.model_generator import ModelGenerator
    experiment = read_json_file(out)
    generator = ModelGenerator(experiment)
    generator.model_all()
    found = [(cp, m) for (cp, m) in generator.models
             if getattr(cp, "name", str(cp)).split("->")[-1] == key
             and getattr(m, "name", str(m)) == "time"]
    if len(found) != 1:
        fail(f"no Extra-P model of {key}")
    model = generator.models[found[0]]
    f = model.hypothesis.function
    lo, hi = f.evaluate(min(scales)), f.evaluate(4 * max(scales))
    print(f"official: Extra-P model of {key}: {f} ({lo} -> {hi})")
    if not hi > lo:
        fail("the model does not grow with p")
elif fmt == "hatchet":
    import hatchet as ht
    for p in scales:
        with open(os.path.join(out, f"scalana.p{p}.r1.json")) as f:
            gf = ht.GraphFrame.from_literal(json.load(f))
        df = gf.dataframe.reset_index()
        rows = df[df["name"] == key]
        if len(rows) != 1:
            fail(f"p={p}: Hatchet finds {len(rows)} nodes named {key}")
        t = float(rows["time"].iloc[0])
        if t <= 0 or t > float(df["time (inc)"].max()):
            fail(f"p={p}: time {t} of {key} out of range")
        print(f"official: hatchet p={p}: {key} time {t}")
elif fmt == "cube":
    from pycubexr import CubexParser
    for p in scales:
        with CubexParser(os.path.join(out, f"scalana.p{p}.r1", "profile.cubex")) as cube:
            metric = cube.get_metric_by_name("cpu_time")
            values = cube.get_metric_values(metric)
            cnodes = [c for c in cube.all_cnodes() if cube.get_region(c).name == key]
            if len(cnodes) != 1:
                fail(f"p={p}: pycubexr finds {len(cnodes)} cnodes named {key}")
            per_rank = values.cnode_values(cnodes[0], convert_to_exclusive=True)
            if len(per_rank) != p or len(cube.get_locations()) != p:
                fail(f"p={p}: {len(per_rank)} values for {p} ranks")
            if p > 1 and max(range(p), key=lambda r: per_rank[r]) != p - 1:
                fail(f"p={p}: the last rank is not the slowest at {key}: {per_rank}")
            print(f"official: pycubexr p={p}: {list(per_rank)}")
else:
    fail(f"unknown format {fmt}")
