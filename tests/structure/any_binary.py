#!/usr/bin/env python3
"""A program built without the wrappers (Open MPI's mpicc: GCC, -O2 -g),
through the whole pipeline (docs/psg.md, "Structure from the binary").

Stages (ctest entries structure.<stage>; `build` is the fixture of the rest):

  build   examples/fig3 with mpicc and with scalana-cc, both -O2 -g
  psg     `scalana psg` on the mpicc build says the structure was recovered
          from the binary, and its loops start at the lines the wrappers'
          PSG has them, with every MPI call of the source on its line
  detect  profiled at 1, 2 and 4 ranks with the injected imbalance:
          `scalana detect` names the injected loop first, on the last rank,
          says which structure it used (text and JSON), and the wrappers'
          build profiled alike gives the same first cause
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

SCALES = (1, 2, 4)


class Failure(Exception):
    pass


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, **kw)
    if p.returncode != 0:
        raise Failure(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-3000:]}\n"
                      f"{p.stderr[-3000:]}")
    return p


def psg_lines(text, kind):
    """Start lines of the KIND vertices in `scalana psg` text output."""
    return sorted({int(m.group(1)) for m in
                   re.finditer(r"^\s*" + kind + r" [^:\n]*:(\d+)", text, re.M)})


def marked_line(source, marker):
    with open(source) as f:
        for no, text in enumerate(f, 1):
            if marker in text:
                return no
    raise Failure(f"no {marker!r} in {source}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage", choices=["build", "psg", "detect"])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpicc", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    a = ap.parse_args()
    scalana = os.path.join(a.bin, "scalana")
    source = os.path.join(a.source_dir, "examples", "fig3", "fig3.c")
    plain, wrapped = os.path.join(a.work, "fig3-mpicc"), os.path.join(a.work, "fig3-wrapped")
    try:
        if a.stage == "build":
            shutil.rmtree(a.work, ignore_errors=True)
            os.makedirs(a.work)
            run([a.mpicc, "-O2", "-g", source, "-o", plain])
            run([os.path.join(a.bin, "scalana-cc"), "-O2", "-g", source, "-o", wrapped])
        elif a.stage == "psg":
            got = run([scalana, "psg", plain])
            if "recovered from the binary" not in got.stderr:
                raise Failure(f"scalana psg does not say where the structure came from: "
                              f"{got.stderr}")
            want = run([scalana, "psg", wrapped]).stdout
            for kind in ("Loop", "MPI"):
                w, g = psg_lines(want, kind), psg_lines(got.stdout, kind)
                if not w or w != g:
                    raise Failure(f"{kind} vertices at lines {g}, the wrappers' PSG has {w}:\n"
                                  f"{got.stdout}")
                print(f"{kind} vertices at lines {g}, as in the wrappers' PSG")
        else:
            env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1",
                       OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            first = {}
            for name, exe in (("mpicc", plain), ("wrapped", wrapped)):
                runs = []
                for np in SCALES:
                    out = os.path.join(a.work, f"{name}-np{np}")
                    shutil.rmtree(out, ignore_errors=True)
                    run([a.mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(np),
                         scalana, "prof", "-o", out, "--", exe, "--inject"], env=env)
                    runs.append(out)
                doc = json.loads(run([scalana, "detect", "--format", "json"] + runs).stdout)
                causes = doc.get("root_causes", [])
                if not causes:
                    raise Failure(f"{name}: no root cause")
                top = causes[0]
                first[name] = (os.path.basename(top["file"]), top["line"], top["culprit_rank"])
                source_kind = doc.get("structure", {}).get("source")
                if source_kind != ("binary" if name == "mpicc" else "psg"):
                    raise Failure(f"{name}: JSON structure source {source_kind!r}")
                print(f"{name}: first cause {first[name]}, structure {source_kind}")
            text = run([scalana, "detect"] + [os.path.join(a.work, f"mpicc-np{np}")
                                              for np in SCALES]).stdout
            if "structure: recovered from the binary" not in text:
                raise Failure("the text report does not say the structure was recovered")
            want = ("fig3.c", marked_line(source, "ROOT CAUSE"), max(SCALES) - 1)
            if first["mpicc"] != want:
                raise Failure(f"the mpicc build's first cause is {first['mpicc']}, expected "
                              f"{want}")
            if first["wrapped"] != first["mpicc"]:
                raise Failure(f"first causes differ: {first}")
    except Failure as e:
        print(f"FAILED: {e}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
