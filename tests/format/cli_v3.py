#!/usr/bin/env python3
"""`scalana show` and `scalana detect` on run directories holding only
profile.scalana (docs/formats.md section 4): the real runs of examples/fig3
that tests/robustness makes (its fixture), rewritten as format 3 with both
codecs, must give what their profile.json.gz gives.

  cli_v3.py --bin-dir build/bin --runs build/tests/robustness/work/runs --work DIR
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def same(a, b, where=""):
    """A difference between two JSON values ("" if none); numbers within 1e-6
    relative or absolute. Times come back to the nanosecond, but the PPG keeps
    a rank's time split in single precision (RankTime, 4 bytes a figure at a
    million ranks): a second differing by 1 ns can round to floats 2.4e-7
    apart, and a share of the wall time computed from their difference
    (not_placed) moved by 3e-8 in one run of the suite."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{where}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            d = same(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return ""
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} vs {len(b)} elements"
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, f"{where}[{i}]")
            if d:
                return d
        return ""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        ok = math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
        return "" if ok else f"{where}: {a} vs {b}"
    return "" if a == b else f"{where}: {a!r} vs {b!r}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    scalana = os.path.join(args.bin_dir, "scalana")
    writer = os.path.join(args.bin_dir, "scalana_write_v3")
    failures = []
    shutil.rmtree(args.work, ignore_errors=True)
    for codec in ("columns", "json"):
        v3 = {}
        for np in (1, 2):
            src = os.path.join(args.runs, f"np{np}")
            dst = os.path.join(args.work, codec, f"np{np}")
            os.makedirs(dst)
            rc, _, err = run([writer, src, dst, "1", codec])
            if rc != 0:
                failures.append(f"{codec} np{np}: writing format 3 failed: {err}")
                continue
            if os.listdir(dst) != ["profile.scalana"]:
                failures.append(f"{codec} np{np}: {os.listdir(dst)} in the run directory")
            v3[np] = dst
            rc2, out2, err2 = run([scalana, "show", src])
            rc3, out3, err3 = run([scalana, "show", dst])
            if rc3 != 0 or rc2 != 0:
                failures.append(f"{codec} np{np}: show exit {rc2}/{rc3}: {err3.strip()}")
            elif out3.replace(dst, src) != out2:
                failures.append(f"{codec} np{np}: show differs:\n--- json.gz\n{out2}\n--- v3\n{out3}")
        if len(v3) != 2:
            continue
        srcs = [os.path.join(args.runs, f"np{np}") for np in (1, 2)]
        rc2, out2, err2 = run([scalana, "detect", "--format", "json", *srcs])
        rc3, out3, err3 = run([scalana, "detect", "--format", "json", v3[1], v3[2]])
        if rc2 != 0 or rc3 != 0:
            failures.append(f"{codec}: detect exit {rc2}/{rc3}: {err3.strip()}")
            continue
        for np in (1, 2):
            out3 = out3.replace(v3[np], srcs[np - 1])
        a, b = json.loads(out2), json.loads(out3)
        # A group keeps the contexts its rows use: the profile's count of
        # contexts no row names is the one thing format 3 does not keep.
        for doc in (a, b):
            for r in doc.get("runs", []):
                r.pop("contexts", None)
        d = same(a, b)
        if d:
            failures.append(f"{codec}: detect differs at {d}")
        else:
            print(f"{codec}: show and detect read profile.scalana as profile.json.gz")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
