#!/usr/bin/env python3
"""Scaling models of known growth. models.c (weak scaling: loops growing as
1, log2 p, p^(1/2), p, p log2 p in separate functions; an all-to-all whose
bytes per rank grow as p) is built with scalana-cc and profiled at 1, 2, 3,
4, 5, 6 and 8 ranks (oversubscribed). `scalana detect --predict 8` models
every vertex on 1..6 (its busiest rank's time); Extra-P models the same
runs exported by `scalana export --format extrap` (metric `time`, the
maximum over ranks: the same values). Prints per vertex the true form,
ScalAna's model, Extra-P's, and the error of ScalAna's prediction at 8
against the measured run; then the three totals the targets name.

Each scale is run --reps times (default 5): `scalana detect` averages the
merged values of runs at one rank count, and Extra-P takes them as the
repetitions of one point. On 2 shared cores one run per scale leaves too
much noise to tell log2(p) from p^(1/4) over 1..6 ranks, and three left
p^(1/2) within reach of p^(1/3) and p^(1/4) log2(p) (docs/detect.md).

Every scale shares the cores alike: one spinning process per core runs
beside the ranks (--no-share-cores: none). Without them the runs at 1 and
2 ranks have a core each and those at 3 or more share one, and a rank that
shares its core takes about 1% more CPU time for the same work (the caches
refilled after each switch): a step between 2 and 3 ranks that bent the
p^(1/2) vertex's data toward p^(1/4) log2(p), for Extra-P as for ScalAna.
On a cluster each rank has a core of its own at every scale; here every
rank shares one at every scale.

usage: bench_models.py --bin BUILD/bin [--venv VENV] [--unit N] [--reps N] [--no-share-cores]
                       [--prof-args ARGS] [--reuse DIR]
"""
import argparse
import json
import math
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCALES = [1, 2, 3, 4, 5, 6]
HELD_OUT = 8
# function -> (true form, leading exponent, log exponent of the leading term)
TRUTH = {"grow_const": ("1", 0, 0), "grow_log": ("log2(p)", 0, 1),
         "grow_sqrt": ("p^(1/2)", 0.5, 0), "grow_lin": ("p", 1, 0),
         "grow_plogp": ("p * log2(p)", 1, 1)}


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    e.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    return e


@contextlib.contextmanager
def spinners(count):
    """COUNT processes that spin until the block ends (see the docstring)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


def extrap_models(venv, export):
    """callpath -> (text, leading exponent, leading log exponent, and the
    same of the terms that carry at least 2% of the model at the largest
    fitted scale) from Extra-P's Python API (run in its venv)."""
    code = r'''
import json, math, sys, warnings
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.modelers.model_generator import ModelGenerator
warnings.simplefilter("ignore")
exp = JsonFileReader().read_experiment(sys.argv[1])
gen = ModelGenerator(exp)
gen.model_all()
p = float(sys.argv[2])
out = {}
for (cp, metric), m in gen.models.items():
    if metric.name != "time":
        continue
    f = m.hypothesis.function
    terms = []
    for ct in f.compound_terms:
        i = j = 0.0
        for st in ct.simple_terms:
            if st.term_type == "polynomial":
                i += st.exponent
            else:
                j += st.exponent
        terms.append(((i, j), abs(ct.coefficient * p ** i * math.log2(p) ** j)))
    total = abs(f.constant_coefficient) + sum(t[1] for t in terms)
    lead = max([(0.0, 0.0)] + [t[0] for t in terms])
    sig = max([(0.0, 0.0)] + [t[0] for t in terms if t[1] >= 0.02 * total])
    out[cp.name] = [str(f), lead[0], lead[1], sig[0], sig[1]]
print(json.dumps(out))
'''
    py = os.path.join(venv, "bin", "python")
    p = subprocess.run([py, "-c", code, export, str(max(SCALES))], capture_output=True,
                       text=True)
    if p.returncode != 0:
        print("Extra-P failed:", p.stderr[-1500:])
        return {}
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--venv", default="")
    ap.add_argument("--unit", type=int, default=100000000)
    ap.add_argument("--reps", type=int, default=5, help="runs per scale (repetitions)")
    ap.add_argument("--reuse", default="", help="the runs of an earlier invocation: model only")
    ap.add_argument("--no-share-cores", action="store_true",
                    help="no spinning process beside the ranks (see above)")
    ap.add_argument("--prof-args", default="",
                    help="more options for scalana prof, e.g. '--sampler perf --hz 1000'")
    args = ap.parse_args()
    work = args.reuse or tempfile.mkdtemp(prefix="scalana-bench-models-")
    exe = os.path.join(work, "models")
    if not args.reuse:
        subprocess.run([os.path.join(args.bin, "scalana-cc"), "-O2", "-g",
                        os.path.join(HERE, "models.c"), "-o", exe, "-lm"], check=True)
    if args.reps < 1:
        ap.error("--reps takes a whole number of at least 1")
    runs = {}  # ranks -> run directories, one per repetition
    share = 0 if args.reuse or args.no_share_cores else os.cpu_count() or 1
    with spinners(share):
        for rep in range(args.reps):  # repetitions interleaved, so load hits every scale alike
            for p in SCALES + [HELD_OUT]:
                d = os.path.join(work, "np%d.r%d" % (p, rep))
                runs.setdefault(p, []).append(d)
                if args.reuse:
                    continue
                subprocess.run(["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(p),
                                os.path.join(args.bin, "scalana"), "prof", "-f", "-o", d,
                                "--experiment", "weak"] + shlex.split(args.prof_args) +
                               ["--", exe, str(args.unit)],
                               check=True, env=env(), stdout=subprocess.DEVNULL)
    fit = [d for p in SCALES for d in runs[p]]
    det = subprocess.run([os.path.join(args.bin, "scalana"), "detect", "--predict",
                          str(HELD_OUT), "--format", "json"] + fit,
                         check=True, capture_output=True, text=True)
    pred = {(v["function"], v["name"]): v for v in json.loads(det.stdout)["prediction"]["vertices"]}
    full = subprocess.run([os.path.join(args.bin, "scalana"), "detect", "--predict",
                           str(HELD_OUT), "--format", "json"] + fit + runs[HELD_OUT],
                          check=True, capture_output=True, text=True)
    measured = {}  # the mean of the repetitions at the held-out scale
    for v in json.loads(full.stdout)["prediction"]["vertices"]:
        at = [m["time"] for m in v["measured"] if m["ranks"] == HELD_OUT]
        if at:
            measured[(v["function"], v["name"])] = sum(at) / len(at)
    export = os.path.join(work, "extrap.json")
    subprocess.run([os.path.join(args.bin, "scalana"), "export", "--format", "extrap",
                    "-o", export] + fit, check=True, stdout=subprocess.DEVNULL)
    ep = extrap_models(args.venv, export) if args.venv else {}

    def extrap_for(func, line):
        for cp, m in ep.items():
            last = cp.split("->")[-1]
            if ("models.c:%d" % line) in last and (func in cp or "MPI" in last):
                return m
        return None

    rows, growing, exp_ok, agree, compared, errors = [], 0, 0, 0, 0, []
    agree_fit, compared_fit = 0, 0  # vertices whose data determine a model
    agree_sig = 0  # Extra-P's terms under 2% of its model read as absent
    for (func, name), v in sorted(pred.items(), key=lambda kv: -kv[1]["predicted"]):
        truth = TRUTH.get(func)
        if "Alltoall" in name:
            truth = ("bytes ~ p", None, None)
        if truth is None:
            continue
        m = v["model"]
        ours = m.get("formula", "no model")
        lead = (m.get("leading_exponent", 0), m.get("leading_log_exponent", 0))
        e = extrap_for(func, v["line"])
        meas = measured.get((func, name))
        err = abs(v["predicted"] - meas) / meas if meas else float("nan")
        if truth[1] is not None and meas and meas > 0:
            errors.append(err)
        if truth[1] is not None and (truth[1], truth[2]) != (0, 0):
            growing += 1
            exp_ok += (lead[0], lead[1]) == (truth[1], truth[2])
        if e is not None:
            same = abs(e[1] - lead[0]) < 1e-9 and abs(e[2] - lead[1]) < 1e-9
            compared += 1
            agree += same
            agree_sig += abs(e[3] - lead[0]) < 1e-9 and abs(e[4] - lead[1]) < 1e-9
            if m.get("confidence", "low") != "low":
                compared_fit += 1
                agree_fit += same
        rows.append((func + " " + name, truth[0], ours, e[0] if e else "-", err))
    for r in rows:
        print("%-34s true %-12s ScalAna %-40s Extra-P %-40s error at %d: %.1f%%"
              % (r[0][:34], r[1], r[2], r[3], HELD_OUT, 100 * r[4]))
    print("leading term (p^i log2(p)^j) recovered: %d of %d growing vertices" % (exp_ok, growing))
    if errors:
        print("prediction error at %d ranks (CPU vertices): median %.1f%%, max %.1f%%"
              % (HELD_OUT, 100 * sorted(errors)[len(errors) // 2], 100 * max(errors)))
    print("leading term agrees with Extra-P's: %d of %d vertices" % (agree, compared))
    print("  of those whose model is not of low confidence (CV SMAPE under 25%%, 4+ scales): "
          "%d of %d" % (agree_fit, compared_fit))
    print("  with Extra-P's terms under 2%% of its model at %d ranks read as noise, as "
          "ScalAna's search reads them: %d of %d" % (max(SCALES), agree_sig, compared))
    print("%d run(s) per scale, %d spinning process(es) beside the ranks%s; runs in %s"
          % (args.reps, share, ", scalana prof " + args.prof_args if args.prof_args else "", work))


if __name__ == "__main__":
    sys.exit(main())
