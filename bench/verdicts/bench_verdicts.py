#!/usr/bin/env python3
"""How often `scalana detect` says "found" on clean runs, and names an
injected line first, over series of run directories profiled beforehand.

A series is one program at several scales. Give each on the command line as
    NAME:clean:DIR,DIR,...               nothing injected
    NAME:FILE:LINE:DIR,DIR,...           a cause injected at FILE:LINE
(FILE is matched on its base name). The program's code stays wherever it
was built; only the run directories are read. Prints one line per series
(verdict, first cause, where the injected line is, the stand-out ratio of
the first computation cause over the median of the next five), then the
false "found" rate over the clean series and the injected-first and
injected-found rates over the others. A benchmark: it prints figures and
asserts nothing.

usage: bench_verdicts.py [--bin DIR] [--detect-args '...'] SERIES...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def parse(spec):
    parts = spec.split(":")
    if len(parts) == 3 and parts[1] == "clean":
        return parts[0], None, parts[2].split(",")
    if len(parts) == 4:
        return parts[0], (parts[1], int(parts[2])), parts[3].split(",")
    sys.exit(f"bench_verdicts: bad series {spec!r}: NAME:clean:DIRS or NAME:FILE:LINE:DIRS")


def at(cause, where):
    return os.path.basename(cause.get("file", "")) == where[0] and cause.get("line") == where[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "..", "build",
                                                  "bin"))
    ap.add_argument("--detect-args", default="")
    ap.add_argument("series", nargs="+")
    args = ap.parse_args()
    scalana = os.path.join(args.bin, "scalana")
    clean = found_clean = injected = first = found_first = 0
    for spec in args.series:
        name, where, dirs = parse(spec)
        p = subprocess.run([scalana, "detect", "--format", "json", *args.detect_args.split(),
                            *dirs], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{name}: detect failed: {p.stderr.strip()[-300:]}")
            continue
        doc = json.loads(p.stdout)
        causes = doc.get("root_causes", [])
        comp = sorted((c for c in causes + doc.get("minor_causes", [])
                       if not c.get("communication") and not c.get("io")
                       and not c.get("alike_on_shared_cores")),
                      key=lambda c: -c.get("cost_seconds", 0))
        ratio = "-"
        if len(comp) > 1:
            nxt = statistics.median(c["cost_seconds"] for c in comp[1:6])
            ratio = f"{comp[0]['cost_seconds'] / nxt:.1f}x" if nxt > 0 else "inf"
        top = causes[0] if causes else None
        top_at = f"{os.path.basename(top['file'])}:{top['line']}" if top else "-"
        wall = max((r.get("wall_time", 0) for r in doc.get("runs", [])), default=0)
        verdict = doc.get("verdict")
        place = "-"
        if where is None:
            clean += 1
            found_clean += verdict == "found"
        else:
            injected += 1
            place = next((str(i + 1) for i, c in enumerate(causes) if at(c, where)), "not listed")
            if top is not None and at(top, where):
                first += 1
                found_first += verdict == "found"
        print(f"{name:24s} {verdict:12s} first {top_at:28s} injected at {place:10s} "
              f"stand-out {ratio:6s} wall {wall:.1f} s at {len(dirs)} scales")
    if clean:
        print(f"clean series 'found': {found_clean} of {clean}")
    if injected:
        print(f"injected line first: {first} of {injected}; first and 'found': {found_first}")


if __name__ == "__main__":
    main()
