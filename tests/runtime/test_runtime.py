#!/usr/bin/env python3
"""Runtime tests under mpirun: each case builds (or takes) a program, runs it
under `scalana prof` and checks what the profile says.

usage: test_runtime.py --bin BUILD/bin --case NAME [--np N] [--exe PROGRAM]

Hand-instrumented programs (programs/hand_*.c) set __scalana_ctx themselves
with known ids, so peers and attribution are checked exactly. CPU-time
samples and big ratios keep the checks deterministic on 2 oversubscribed
cores.
"""
import argparse
import atexit
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

FN = 0x8000000000100000


def ID(local):
    return "0x%016x" % (FN | local)


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def env():
    e = dict(os.environ)
    e["OMPI_MCA_mpi_yield_when_idle"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    for k in list(e):
        if k.startswith("SCALANA_"):
            del e[k]
    return e


def mpirun(np):
    return ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np)]


def run(cmd, expect_ok=True, timeout=120, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=kw.pop("env", env()), timeout=timeout, **kw)
    if expect_ok and p.returncode != 0:
        raise Failure("%s exited %d:\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p


def profile(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def profile_run(args, exe, extra=(), np=None, expect_ok=True, prog_args=()):
    out = tempfile.mkdtemp(prefix="scalana-rt-test-")
    shutil.rmtree(out)
    cmd = mpirun(np or args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out] + \
        list(extra) + ["--", exe] + list(prog_args)
    p = run(cmd, expect_ok=expect_ok)
    return out, p


def rows_by_ctx(prof, rank, table):
    ctxs = prof["contexts"]
    r = [x for x in prof["ranks"] if x["rank"] == rank][0]
    out = {}
    for row in r[table]:
        out.setdefault(tuple(ctxs[row[0]]), []).append(row)
    return out


def deps_at(prof, rank, local):
    return rows_by_ctx(prof, rank, "deps").get((ID(local),), [])


def dep_set(rows, kind):
    return {(row[2], row[3]) for row in rows if row[1] == kind}


# ---------------------------------------------------------------- cases

def case_hand_deps(args):
    out, _ = profile_run(args, args.exe)
    prof = profile(os.path.join(out, "profile.json.gz"))
    n = args.np
    check(prof["meta"]["complete"] and prof["meta"]["world_size"] == n, "meta: %s" % prof["meta"])
    check(len(prof["ranks"]) == n, "every rank gathered")
    comms = prof["comms"]
    world = list(range(n))
    for rank in range(n):
        nxt, prv, far = (rank + 1) % n, (rank - 1 + n) % n, (rank + 2) % n
        parity = [w for w in range(n) if w % 2 == rank % 2]
        where = "rank %d: " % rank
        check(dep_set(deps_at(prof, rank, 1), "send") == {(nxt, 11)}, where + "MPI_Send peer")
        check(dep_set(deps_at(prof, rank, 2), "recv") == {(prv, 11)}, where + "MPI_Recv peer")
        if rank == 0:
            posted = dep_set(deps_at(prof, 0, 3), "recv")
            completed = dep_set(deps_at(prof, 0, 4) + deps_at(prof, 0, 5), "recv")
            expect = {(w, 22) for w in range(1, n)}
            check(posted == expect, "ANY_SOURCE Irecv resolved to %s, expected %s" % (posted, expect))
            check(completed == expect,
                  "Waitany/Waitsome recorded %s, expected %s" % (completed, expect))
        else:
            check(dep_set(deps_at(prof, rank, 6), "send") == {(0, 22)}, where + "Isend")
            check(dep_set(deps_at(prof, rank, 7), "send") == {(0, 22)}, where + "Wait of Isend")
        sr = deps_at(prof, rank, 8)
        check(dep_set(sr, "send") == {(nxt, 33)} and dep_set(sr, "recv") == {(prv, 33)},
              where + "Sendrecv with ANY_SOURCE: %s" % sr)
        for local, kind, peer in ((9, "send", nxt), (10, "recv", prv)):
            rows = deps_at(prof, rank, local)
            check([r[5] for r in rows if r[1] == kind and r[2] == peer] == [3],
                  where + "persistent request at %d counted over 3 Starts: %s" % (local, rows))
        wa = deps_at(prof, rank, 12)
        check(dep_set(wa, "send") == {(nxt, 44)} and dep_set(wa, "recv") == {(prv, 44)},
              where + "Waitall of persistent requests: %s" % wa)
        ta = deps_at(prof, rank, 15)
        check(dep_set(ta, "send") == {(nxt, 55)} and dep_set(ta, "recv") == {(prv, 55)},
              where + "Testall: %s" % ta)
        for local in (17, 18, 19):
            rows = deps_at(prof, rank, local)
            check(rows and all(r[1] == "coll" and comms[r[4]] == parity for r in rows),
                  where + "collective %d on the split communicator: %s (comms %s)"
                  % (local, rows, comms))
        for local in (20, 21, 22, 23, 24):
            rows = deps_at(prof, rank, local)
            check(rows and all(r[1] == "coll" and comms[r[4]] == world for r in rows),
                  where + "collective %d on the world: %s" % (local, rows))
        check(dep_set(deps_at(prof, rank, 27), "rma") == {(nxt, 0)}, where + "MPI_Put target")
        check(dep_set(deps_at(prof, rank, 30), "rma") == {(far, 0)}, where + "MPI_Get target")
        check(dep_set(deps_at(prof, rank, 29), "rma") == {(far, 0)}, where + "Win_lock target")
        sub_next = parity[(parity.index(rank) + 1) % len(parity)]
        check(len(parity) == 1 or rank % 2 == 1 or dep_set(deps_at(prof, rank, 35), "rma") == {(sub_next, 0)},
              where + "Put on a split-communicator window targets world rank %d: %s"
              % (sub_next, deps_at(prof, rank, 35)))
        mpi = rows_by_ctx(prof, rank, "mpi")
        for local in range(1, 39):
            if rank == 0 and local in (6, 7) or rank != 0 and local in (3, 4, 5):
                continue
            if local in (4,) and (n - 1) // 2 == 0 or local in range(33, 38) and (len(parity) == 1 or rank % 2):
                continue
            check((ID(local),) in mpi, where + "MPI call at vertex %d timed" % local)


def case_hand_callsites(args):
    out, _ = profile_run(args, args.exe)
    prof = profile(os.path.join(out, "profile.json.gz"))
    for r in prof["ranks"]:
        v = rows_by_ctx(prof, r["rank"], "vertices")
        a = sum(x[1] for x in v.get((ID(1), ID(101)), []))
        b = sum(x[1] for x in v.get((ID(2), ID(101)), []))
        w = sum(x[1] for x in v.get((ID(201),), []))
        where = "rank %d: " % r["rank"]
        check(b > 0 and 2.0 <= a / b <= 4.5,
              where + "call site 1 (3x work) has %d samples, call site 2 %d: ratio not ~3" % (a, b))
        check(w > 0.3 * b, where + "worker thread (pthread) sampled: %d samples" % w)
        check(r["threads"] >= 2, where + "threads counted: %d" % r["threads"])
        check(r["samples_dropped"] == 0, where + "no samples dropped")
        check(abs(sum(x[2] for x in r["vertices"]) -
                  r["samples"] / prof["meta"]["sampling"]["hz"]) < 0.05 * r["samples"] / 200 + 0.05,
              where + "cpu seconds follow the sample count")


def case_openmp(args):
    out, _ = profile_run(args, args.exe)
    prof = profile(os.path.join(out, "profile.json.gz"))
    for r in prof["ranks"]:
        v = rows_by_ctx(prof, r["rank"], "vertices")
        t0 = sum(x[1] for x in v.get((ID(300),), []))
        t1 = sum(x[1] for x in v.get((ID(301),), []))
        check(t1 > 0 and t0 > 0 and 0.33 < t1 / t0 < 3,
              "rank %d: OpenMP threads 0 and 1 both sampled (%d, %d samples)" % (r["rank"], t0, t1))


def case_fortran(args):
    out, _ = profile_run(args, args.exe)
    prof = profile(os.path.join(out, "profile.json.gz"))
    n = args.np
    for r in prof["ranks"]:
        rank = r["rank"]
        nxt, prv = (rank + 1) % n, (rank - 1 + n) % n
        deps = {(d[1], d[2], d[3]) for d in r["deps"]}
        where = "rank %d: " % rank
        check(("send", nxt, 11) in deps, where + "Fortran MPI_Send seen: %s" % deps)
        check(("recv", prv, 11) in deps, where + "Fortran MPI_Recv seen")
        if rank == 0:
            got = {d[2] for d in r["deps"] if d[1] == "recv" and d[3] == 22}
            check(got == set(range(1, n)), "Fortran ANY_SOURCE + Waitany peers %s" % got)
        else:
            check(("send", 0, 22) in deps, where + "Fortran Isend/Wait")
        for want in (("send", nxt, 31), ("send", prv, 32), ("recv", prv, 31), ("recv", nxt, 32)):
            check(want in deps, where + "Fortran Isend/Irecv pair sharing a handle: %s in %s"
                  % (want, sorted(deps)))
        parity = [w for w in range(n) if w % 2 == rank % 2]
        check(any(d[1] == "coll" and prof["comms"][d[4]] == parity for d in r["deps"]),
              where + "Fortran Allreduce on the split communicator")
        check(r["errors"].get("ctx_missing", 0) >= 0, "")
    check("unknown context" in prof["meta"]["sampling"]["note"] or
          all(r["samples"] == 0 for r in prof["ranks"]),
          "profile says the binary was not instrumented")


def case_f08(args):
    out, _ = profile_run(args, args.exe)
    prof = profile(os.path.join(out, "profile.json.gz"))
    n = args.np
    for r in prof["ranks"]:
        rank = r["rank"]
        deps = {(d[1], d[2], d[3]) for d in r["deps"]}
        check(("send", (rank + 1) % n, 12) in deps and ("recv", (rank - 1 + n) % n, 12) in deps,
              "rank %d: mpi_f08 Send/Recv seen: %s" % (rank, deps))


def early_end(args, how, reason):
    out, p = profile_run(args, args.exe, expect_ok=False, prog_args=[how])
    check(p.returncode != 0, "%s makes the job fail" % how)
    files = sorted(glob.glob(os.path.join(out, "rank-*.json.gz")))
    check(os.path.join(out, "rank-1.json.gz") in files, "the aborting rank wrote its data: %s" % files)
    shown = run([os.path.join(args.bin, "scalana"), "show", out, "--format", "json"])
    prof = json.loads(shown.stdout)
    check(prof["meta"]["complete"] is False, "merged per-rank profile is marked incomplete")
    r1 = [r for r in prof["ranks"] if r["rank"] == 1][0]
    check(r1["errors"].get("ended_by_" + reason) == 1,
          "rank 1 says it ended by %s: %s" % (reason, r1["errors"]))
    check(r1["samples"] > 0, "rank 1's samples kept")


def case_abort(args):
    early_end(args, "abort", "MPI_Abort")


def case_segv(args):
    early_end(args, "segv", "signal_fatal")


def case_exit(args):
    early_end(args, "exit", "exit_without_finalize")


def case_dep_sample(args):
    out, _ = profile_run(args, args.exe, extra=["--dep-sample", "100"])
    prof = profile(os.path.join(out, "profile.json.gz"))
    for r in prof["ranks"]:
        mpi = rows_by_ctx(prof, r["rank"], "mpi")
        calls = sum(x[1] for x in mpi.get((ID(1),), []))
        check(calls == 2000, "rank %d: every call counted (%d)" % (r["rank"], calls))
        sends = [d for d in deps_at(prof, r["rank"], 1) if d[1] == "send"]
        check(len(sends) == 1, "one send row: %s" % sends)
        count = sends[0][5]
        # 100 recorded, then 1 in 16 of the other 1900 with weight 16.
        check((count - 100) % 16 == 0 and 1000 <= count <= 3000,
              "rank %d: sampled send count %d is 100 + 16k and near 2000" % (r["rank"], count))
        check(sends[0][6] == count * 4, "bytes scale with the weight")


def case_bad_values(args):
    marker = tempfile.mktemp(prefix="scalana-not-started-")
    prof = [os.path.join(args.bin, "scalana"), "prof"]
    for extra, envvar, needle, accepted in (
            (["--hz", "0"], None, "SCALANA_HZ", "1..10000"),
            (["--sampler", "fast"], None, "SCALANA_SAMPLER", "auto|papi|itimer|off"),
            ([], ("SCALANA_SAMPLER", "bogus"), "SCALANA_SAMPLER", "auto|papi|itimer|off"),
            ([], ("SCALANA_COUNTERS", "TOT_INS"), "SCALANA_COUNTERS", "PAPI_"),
            ([], ("SCALANA_VERBOSE", "yes"), "SCALANA_VERBOSE", "0|1")):
        e = env()
        if envvar:
            e[envvar[0]] = envvar[1]
        p = run(mpirun(1) + prof + ["-o", tempfile.mkdtemp()] + extra + ["--", "touch", marker],
                expect_ok=False, env=e)
        check(p.returncode != 0, "bad value %s accepted" % (extra or envvar,))
        check(needle in p.stderr and accepted in p.stderr and "not started" in p.stderr,
              "message names %s and its accepted values: %s" % (needle, p.stderr))
        check(not os.path.exists(marker), "the program must not start on a bad value")
    # The launcher alone (no mpirun): exit status 2.
    p = run(prof + ["--hz", "x", "--", "touch", marker], expect_ok=False)
    check(p.returncode == 2, "exit status 2 on a bad value, got %d" % p.returncode)


def case_rundir(args):
    out, _ = profile_run(args, args.exe)
    check(os.path.exists(os.path.join(out, "profile.json.gz")), "first run wrote its profile")
    cmd = mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--", args.exe]
    p = run(cmd, expect_ok=False)
    check(p.returncode != 0 and "holds the profile of another run" in p.stderr,
          "second run into the same directory refused: %s" % p.stderr)
    p = run(mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--force",
                               "--", args.exe])
    check(os.path.exists(os.path.join(out, "profile.json.gz")), "--force overwrites")


def case_show(args):
    out, _ = profile_run(args, args.exe)
    show = [os.path.join(args.bin, "scalana"), "show"]
    p = run(show + [out])
    check("itimer" in p.stdout or "papi" in p.stdout, "show prints the sampling source")
    check("== rank 0" in p.stdout and "dep" in p.stdout, "show prints per-rank rows:\n" + p.stdout)
    p = run(show + [out, "--rank", "1"])
    check("== rank 1" in p.stdout and "== rank 0" not in p.stdout, "--rank filters")
    p = run(show + ["/nonexistent/run"], expect_ok=False)
    check(p.returncode != 0 and "no such run directory" in p.stderr, "missing run: " + p.stderr)
    with open(os.path.join(out, "profile.json.gz"), "r+b") as f:
        data = f.read()
        f.seek(0)
        f.truncate()
        f.write(data[: len(data) // 2])
    p = run(show + [out], expect_ok=False)
    check(p.returncode != 0 and "corrupt" in p.stderr, "truncated profile: " + p.stderr)


def wrapped_run(args, compiler, function, thread_function=None):
    # Built here, not at build time, so a broken compiler plugin fails this
    # test rather than the whole build.
    exe = os.path.join(tempfile.mkdtemp(prefix="scalana-rt-wrapped-"), "callsites")
    run([os.path.join(args.bin, compiler), "-O2", args.exe, "-o", exe])
    out, _ = profile_run(args, exe)
    p = run([os.path.join(args.bin, "scalana"), "show", out, "--format", "json"])
    prof = json.loads(p.stdout)
    check(prof["meta"]["psg_id"], "the profile names the PSG of the binary")
    res = prof["resolved"]
    n = args.np
    for r in prof["ranks"]:
        where = "rank %d: " % r["rank"]
        loops, background = {}, 0
        for row in r["vertices"]:
            info = res[row[0]]
            if not info or info["kind"] != "loop":
                continue
            if function in info["function"]:
                site = info["call_lines"][-1] if info["call_lines"] else None
                loops[site] = loops.get(site, 0) + row[1]
            elif thread_function and thread_function in info["function"]:
                background += row[1]
        check(len(loops) == 2, where + "%s's loop on two contexts: %s" % (function, loops))
        # Sites sort by line: the 3x call comes first in the source.
        (la, a), (lb, b) = sorted(loops.items(), key=lambda kv: int(kv[0].rsplit(":", 1)[1]))
        check(b > 0 and 2.0 <= a / b <= 4.5,
              where + "call site %s has %d samples, %s has %d: expected ~3:1" % (la, a, lb, b))
        if thread_function:
            check(background > 0.3 * b, where + "thread's loop sampled: %d" % background)
        labels = {}
        for d in r["deps"]:
            info = res[d[0]]
            if info:
                labels.setdefault(info["label"], set()).add((d[1], d[2], d[3]))
        if n > 1 and "Sendrecv" in str(labels):
            got = labels.get("MPI_Sendrecv", set())
            rank = r["rank"]
            check(("send", (rank + 1) % n, 7) in got and ("recv", (rank - 1 + n) % n, 7) in got,
                  where + "Sendrecv peers resolved: %s" % got)


def case_wrapped_c(args):
    wrapped_run(args, "scalana-cc", "heavy")


def case_wrapped_cxx(args):
    wrapped_run(args, "scalana-cxx", "Sweep", thread_function="Background")


def case_wrapped_fortran(args):
    wrapped_run(args, "scalana-fc", "heavy")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    # Open MPI 4.1 races when concurrent launches create the shared session
    # directory under one TMPDIR ("mkdir ... File exists"); tests run in
    # parallel, so this one's launches get a TMPDIR of their own.
    session_tmp = tempfile.mkdtemp(prefix="scalana-test-")
    atexit.register(shutil.rmtree, session_tmp, True)
    os.environ["TMPDIR"] = session_tmp
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--exe")
    args = ap.parse_args()
    try:
        CASES[args.case](args)
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    print("ok: %s at %d ranks" % (args.case, args.np))


main()
