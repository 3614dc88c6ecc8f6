#!/usr/bin/env python3
"""Runtime tests under mpirun: each case builds (or takes) a program, runs it
under `scalana prof` and checks what the profile says.

usage: test_runtime.py --bin BUILD/bin --llvm-bin LLVM/bin --case NAME [--np N]
                       [--exe PROGRAM|SOURCE]

A source file (.c, .cpp, .f90) is first built with the compiler wrappers at
-O2. The runtime records calling contexts as the executable's frames;
`scalana show --format json` maps them to PSG vertices and source lines
("resolved"). The checks find each call site or loop they look at by a marker
comment on its line in the program (`/* @name */`, `// @name`, `! @name`), so
they carry no line numbers of their own and survive edits of the programs.
CPU-time samples and big ratios keep the checks deterministic on 2
oversubscribed cores.
"""
import argparse
import atexit
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


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


COMPILERS = {".c": "scalana-cc", ".cpp": "scalana-cxx", ".f90": "scalana-fc"}


def build(args, src, flags=()):
    """Builds SRC with the wrapper for its language; returns the executable.
    Done here, not at build time, so a broken compiler plugin fails these
    tests rather than the whole build."""
    base, ext = os.path.splitext(os.path.basename(src))
    exe = os.path.join(tempfile.mkdtemp(prefix="scalana-rt-build-"), base)
    run([os.path.join(args.bin, COMPILERS[ext]), "-O2"] + list(flags) + [src, "-o", exe])
    return exe


MARKER = re.compile(r"(?:/\*|//|!)\s*@(\w+)")
MPI_OP = re.compile(r"\b(MPI_[A-Z][A-Za-z_]*)\s*\(")


class Source:
    """The marked lines of a program: marker name -> line, and the MPI
    operation called on that line, if any."""

    def __init__(self, path):
        self.name = os.path.basename(path)
        self.lines, self.ops = {}, {}
        with open(path) as f:
            for no, text in enumerate(f, 1):
                for m in MARKER.finditer(text):
                    check(m.group(1) not in self.lines,
                          "marker @%s twice in %s" % (m.group(1), path))
                    self.lines[m.group(1)] = no
                    op = MPI_OP.search(text)
                    if op:
                        self.ops[m.group(1)] = op.group(1)

    def line(self, marker):
        check(marker in self.lines, "no marker @%s in %s" % (marker, self.name))
        return self.lines[marker]

    def at(self, location, marker):
        """Whether LOCATION ("file:line", as `scalana show` prints it) is the
        marked line."""
        f, _, line = location.rpartition(":")
        return (os.path.basename(f) == self.name and line.isdigit() and
                int(line) == self.line(marker))

    def op(self, marker):
        check(marker in self.ops, "no MPI call on the line of @%s in %s" % (marker, self.name))
        return self.ops[marker]


class Shown:
    """A run as `scalana show --format json` prints it: rows refer to PSG
    contexts, each described in "resolved" (null when it has none)."""

    def __init__(self, args, out, src):
        p = run([os.path.join(args.bin, "scalana"), "show", out, "--format", "json"])
        self.prof = json.loads(p.stdout)
        self.res = self.prof["resolved"]
        self.src = src

    def rank(self, rank):
        return [x for x in self.prof["ranks"] if x["rank"] == rank][0]

    def rows(self, rank, table, pred):
        return [row for row in self.rank(rank)[table]
                if self.res[row[0]] is not None and pred(self.res[row[0]])]

    def via(self, info, callers):
        """Whether the innermost call sites of INFO's context are the marked
        lines CALLERS (outermost first)."""
        lines = info["call_lines"]
        return len(lines) >= len(callers) and all(
            self.src.at(loc, m) for loc, m in zip(lines[len(lines) - len(callers):], callers))

    def mpi_at(self, marker, callers=()):
        """Predicate: the MPI call on the marked line (its operation and line),
        reached through CALLERS."""
        op = self.src.op(marker)
        return lambda info: (info["kind"] == "mpi" and info["label"] == op and
                             self.src.at(info["location"], marker) and self.via(info, callers))

    def loop_at(self, marker, callers=()):
        """Predicate: the loop whose header is on the marked line."""
        return lambda info: (info["kind"] == "loop" and self.src.at(info["location"], marker) and
                             self.via(info, callers))

    def at(self, rank, table, marker):
        return self.rows(rank, table, self.mpi_at(marker))

    def samples(self, rank, pred):
        return sum(row[1] for row in self.rows(rank, "vertices", pred))

    def calls(self, rank, marker):
        return sum(row[1] for row in self.at(rank, "mpi", marker))


def profiled(args, flags=(), extra=()):
    """Builds the case's program, profiles it and shows the run."""
    src = Source(args.exe)
    exe = build(args, args.exe, flags)
    out, _ = profile_run(args, exe, extra=extra)
    return Shown(args, out, src), exe


def compute_samples(shown, rank):
    """Samples outside MPI calls (unresolved ones included). Time blocked in
    MPI burns CPU too (Open MPI polls) and depends on how the other jobs on
    the shared cores delay the peers, so shares are taken of this."""
    return sum(row[1] for row in shown.rank(rank)["vertices"]
               if not shown.res[row[0]] or shown.res[row[0]]["kind"] != "mpi")


def dep_set(rows, kind):
    return {(row[2], row[3]) for row in rows if row[1] == kind}


def check_samples_recorded(shown, r):
    """No dropped samples, and the vertex rows' CPU seconds follow the samples
    they hold (samples taken inside the profiler's own unwinding are counted
    in the total but belong to no row)."""
    where = "rank %d: " % r["rank"]
    check(r["samples_dropped"] == 0, where + "no samples dropped")
    recorded = r["samples"] - r["errors"].get("samples_in_profiler", 0)
    cpu = sum(x[2] for x in r["vertices"])
    check(abs(cpu - recorded / shown.prof["meta"]["sampling"]["hz"]) < 0.05 * recorded / 200 + 0.05,
          where + "cpu seconds %.3f follow the sample count %d" % (cpu, recorded))


# ---------------------------------------------------------------- cases

def case_deps(args):
    shown, _ = profiled(args)
    prof, src = shown.prof, shown.src
    n = args.np
    check(prof["meta"]["complete"] and prof["meta"]["world_size"] == n, "meta: %s" % prof["meta"])
    check(len(prof["ranks"]) == n, "every rank gathered")
    comms = prof["comms"]
    world = list(range(n))
    for rank in range(n):
        nxt, prv, far = (rank + 1) % n, (rank - 1 + n) % n, (rank + 2) % n
        parity = [w for w in range(n) if w % 2 == rank % 2]
        where = "rank %d: " % rank

        def deps(marker):
            return shown.at(rank, "deps", marker)

        check(dep_set(deps("send"), "send") == {(nxt, 11)}, where + "MPI_Send peer")
        check(dep_set(deps("recv"), "recv") == {(prv, 11)}, where + "MPI_Recv peer")
        if rank == 0:
            posted = dep_set(deps("irecv_any"), "recv")
            completed = dep_set(deps("waitany") + deps("waitsome"), "recv")
            expect = {(w, 22) for w in range(1, n)}
            check(posted == expect,
                  "ANY_SOURCE Irecv resolved to %s, expected %s" % (posted, expect))
            check(completed == expect,
                  "Waitany/Waitsome recorded %s, expected %s" % (completed, expect))
            check(shown.calls(0, "irecv_any") == n - 1, "one Irecv call per other rank")
        else:
            check(dep_set(deps("isend"), "send") == {(0, 22)}, where + "Isend")
            check(dep_set(deps("wait_isend"), "send") == {(0, 22)}, where + "Wait of Isend")
        sr = deps("sendrecv")
        check(dep_set(sr, "send") == {(nxt, 33)} and dep_set(sr, "recv") == {(prv, 33)},
              where + "Sendrecv with ANY_SOURCE: %s" % sr)
        for marker, kind, peer in (("send_init", "send", nxt), ("recv_init", "recv", prv)):
            rows = deps(marker)
            check([r[5] for r in rows if r[1] == kind and r[2] == peer] == [3],
                  where + "persistent request of @%s counted over 3 Starts: %s" % (marker, rows))
        for marker in ("startall", "waitall"):
            check(shown.calls(rank, marker) == 3, where + "3 calls at @%s" % marker)
        wa = deps("waitall")
        check(dep_set(wa, "send") == {(nxt, 44)} and dep_set(wa, "recv") == {(prv, 44)},
              where + "Waitall of persistent requests: %s" % wa)
        ta = deps("testall")
        check(dep_set(ta, "send") == {(nxt, 55)} and dep_set(ta, "recv") == {(prv, 55)},
              where + "Testall: %s" % ta)
        for marker in ("allreduce_sub", "iallreduce_sub", "wait_iallreduce"):
            rows = deps(marker)
            check(rows and all(r[1] == "coll" and comms[r[4]] == parity for r in rows),
                  where + "collective @%s on the split communicator: %s (comms %s)"
                  % (marker, rows, comms))
        for marker in ("bcast", "alltoall", "gather", "ibarrier", "wait_ibarrier"):
            rows = deps(marker)
            check(rows and all(r[1] == "coll" and comms[r[4]] == world for r in rows),
                  where + "collective @%s on the world: %s" % (marker, rows))
        check(dep_set(deps("put"), "rma") == {(nxt, 0)}, where + "MPI_Put target")
        check(dep_set(deps("get"), "rma") == {(far, 0)}, where + "MPI_Get target")
        check(dep_set(deps("win_lock"), "rma") == {(far, 0)}, where + "Win_lock target")
        sub_next = parity[(parity.index(rank) + 1) % len(parity)]
        check(len(parity) == 1 or rank % 2 == 1 or
              dep_set(deps("sub_put"), "rma") == {(sub_next, 0)},
              where + "Put on a split-communicator window targets world rank %d: %s"
              % (sub_next, deps("sub_put")))
        # Every MPI call timed at its own call site: every marked line of the
        # program is an MPI call.
        for marker in src.lines:
            if rank == 0 and marker in ("isend", "wait_isend") or \
                    rank != 0 and marker in ("irecv_any", "waitany", "waitsome"):
                continue
            if marker == "waitany" and (n - 1) // 2 == 0 or \
                    marker.startswith("sub_") and (len(parity) == 1 or rank % 2):
                continue
            check(shown.at(rank, "mpi", marker), where + "%s at @%s (line %d) timed"
                  % (src.op(marker), marker, src.line(marker)))
        stray = [(row, shown.res[row[0]]) for row in shown.rank(rank)["mpi"]
                 if not shown.res[row[0]] or shown.res[row[0]]["kind"] != "mpi"]
        check(not stray, where + "MPI rows not on an MPI call site: %s" % stray)


def case_callsites_threads(args):
    shown, _ = profiled(args, ["-pthread"])
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        a = shown.samples(rank, shown.loop_at("heavy_loop", ["site_a"]))
        b = shown.samples(rank, shown.loop_at("heavy_loop", ["site_b"]))
        w = shown.samples(rank, shown.loop_at("worker_loop"))
        where = "rank %d: " % rank
        check(b > 0 and 2.0 <= a / b <= 4.5,
              where + "call site A (3x work) has %d samples, call site B %d: ratio not ~3" % (a, b))
        check(w > 0.3 * b, where + "worker thread (pthread) sampled: %d samples" % w)
        check(r["threads"] >= 2, where + "threads counted: %d" % r["threads"])
        check_samples_recorded(shown, r)


def case_own_sigprof(args):
    # The program's own SIGPROF ticks, every 10 ms of CPU time, must be the
    # same with and without the profiler: ours run on another signal.
    src = Source(args.exe)
    exe = build(args, args.exe)

    def ticks(stdout):
        m = re.search(r"ticks=(\d+) cpu=([\d.]+)", stdout)
        check(m, "the program reports its ticks: %s" % stdout)
        return int(m.group(1)) / float(m.group(2))

    alone = ticks(run(mpirun(1) + [exe]).stdout)
    out, p = profile_run(args, exe, np=1)
    profiled_rate = ticks(p.stdout)
    check(50 <= alone <= 130 and 0.6 * alone <= profiled_rate <= 1.5 * alone,
          "the program's own ticks per CPU second: %.0f alone, %.0f profiled" % (alone, profiled_rate))
    shown = Shown(args, out, src)
    note = shown.prof["meta"]["sampling"]["note"]
    check("the program uses SIGPROF and ITIMER_PROF itself" in note,
          "the profile says the program profiles itself: %s" % note)
    r = shown.rank(0)
    spin = shown.samples(0, shown.loop_at("spin"))
    check(spin >= 80, "the profiler kept sampling the spin loop: %d samples in 0.8 s" % spin)
    check("sampling_signal_taken" not in r["errors"], "errors: %s" % r["errors"])


def case_openmp(args):
    shown, _ = profiled(args, ["-fopenmp"])
    for r in shown.prof["ranks"]:
        t0 = shown.samples(r["rank"], shown.loop_at("loop0"))
        t1 = shown.samples(r["rank"], shown.loop_at("loop1"))
        check(t1 > 0 and t0 > 0 and 0.33 < t1 / t0 < 3,
              "rank %d: OpenMP threads 0 and 1 both sampled (%d, %d samples)" % (r["rank"], t0, t1))


def case_inlined(args):
    shown, exe = profiled(args)
    # The premise: work() has no out-of-line copy, so its code exists only
    # inside phase_a and phase_b.
    nm = run([os.path.join(args.llvm_bin, "llvm-nm"), exe]).stdout
    symbols = {line.split()[-1] for line in nm.splitlines() if line.strip()}
    check("phase_a" in symbols and "phase_b" in symbols, "the callers stay out of line: %s"
          % sorted(symbols))
    check(not any(re.fullmatch(r"work(\..*)?", s) for s in symbols),
          "work() was not inlined everywhere: %s" % sorted(symbols))
    dis = run([os.path.join(args.llvm_bin, "llvm-objdump"), "-d", "--no-show-raw-insn", exe]).stdout
    calls = [line for line in dis.splitlines() if re.search(r"<work[.>+]", line)]
    check(not calls, "code refers to an out-of-line work(): %s" % calls[:5])
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        a = shown.samples(rank, shown.loop_at("work_loop", ["phase_a", "call_a"]))
        b = shown.samples(rank, shown.loop_at("work_loop", ["phase_b", "call_b"]))
        contexts = {tuple(shown.res[row[0]]["call_lines"])
                    for row in shown.rows(rank, "vertices", shown.loop_at("work_loop"))}
        check(len(contexts) == 2, where + "work()'s loop on two contexts: %s" % contexts)
        check(b > 0 and 2.0 <= a / b <= 4.5,
              where + "inlined into phase_a (3x work): %d samples, into phase_b: %d; not ~3:1"
              % (a, b))
        total = compute_samples(shown, rank)
        check(a + b >= 0.8 * total,
              where + "most samples outside MPI on the inlined loop: %d of %d" % (a + b, total))


def case_recursion(args):
    shown, _ = profiled(args)
    depth = 40
    chain = ["descend"] + ["recurse"] * depth
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        spin = shown.samples(rank, shown.loop_at("spin", chain))
        total = compute_samples(shown, rank)
        check(spin >= 0.8 * total,
              where + "the loop %d frames deep holds %d of %d samples outside MPI"
              % (depth, spin, total))
        # Exactly the chain: not one recursion level more or less.
        full = lambda info: len(info["call_lines"]) == len(chain)
        mpi = [row for row in shown.rows(rank, "mpi", shown.mpi_at("bottom_mpi", chain))
               if full(shown.res[row[0]])]
        check(sum(row[1] for row in mpi) == 1,
              where + "MPI_Barrier at the bottom of the recursion timed there once: %s" % mpi)
        deps = [row for row in shown.rows(rank, "deps", shown.mpi_at("bottom_mpi", chain))
                if full(shown.res[row[0]])]
        check(len(deps) == 1 and deps[0][1] == "coll" and
              shown.prof["comms"][deps[0][4]] == list(range(args.np)),
              where + "its dependence row: %s" % deps)
        check(not r["errors"].get("stack_truncated"),
              where + "%d frames fit in a context: %s" % (depth, r["errors"]))


def case_exceptions(args):
    shown, _ = profiled(args)
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        v = shown.samples(rank, shown.loop_at("virtual_loop", ["virtual_call"]))
        a = shown.samples(rank, shown.loop_at("after_loop", ["after_call"]))
        check(v > 0 and 1.3 <= a / v <= 3.2,
              where + "loop after the catch (2x work) has %d samples, the virtual call's %d: "
              "not ~2:1" % (a, v))
        total = compute_samples(shown, rank)
        check(a + v >= 0.8 * total,
              where + "most samples outside MPI on the two loops: %d of %d" % (a + v, total))
        check(shown.calls(rank, "in_handler") == 10,
              where + "MPI_Barrier in the catch handler timed there 10 times")


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
    check("cannot be mapped to source structure" in prof["meta"]["sampling"]["note"],
          "profile says the binary has no PSG: %s" % prof["meta"]["sampling"]["note"])
    # Without a PSG, show still prints the run, with contexts as raw frames,
    # and says why.
    show = [os.path.join(args.bin, "scalana"), "show", out]
    p = run(show)
    check("== rank 0" in p.stdout and "Program Structure Graph" in p.stdout,
          "show explains that frames cannot be mapped:\n" + p.stdout)
    shown = json.loads(run(show + ["--format", "json"]).stdout)
    check(all(x is None for x in shown["resolved"]) and
          "Program Structure Graph" in shown.get("resolve_note", ""),
          "show --format json maps no context and says why: %s" % shown.get("resolve_note"))


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
    shown, _ = profiled(args, extra=["--dep-sample", "100"])
    for r in shown.prof["ranks"]:
        calls = shown.calls(r["rank"], "send")
        check(calls == 2000, "rank %d: every call counted (%d)" % (r["rank"], calls))
        sends = [d for d in shown.at(r["rank"], "deps", "send") if d[1] == "send"]
        check(len(sends) == 1, "one send row: %s" % sends)
        count = sends[0][5]
        # 100 recorded, then 1 in 16 of the other 1900 with weight 16.
        check((count - 100) % 16 == 0 and 1000 <= count <= 3000,
              "rank %d: sampled send count %d is 100 + 16k and near 2000" % (r["rank"], count))
        check(sends[0][6] == count * 4, "bytes scale with the weight")
        # Waits are weighted like counts: the sampled rows' wait adds up to
        # about the time the Wait calls took (rank 1 waits for rank 0).
        if r["rank"] == 1:
            waited = sum(x[2] for x in shown.at(1, "mpi", "wait"))
            recorded = sum(d[7] for d in shown.at(1, "deps", "wait") if d[1] == "recv")
            check(waited > 0.1 and 0.6 * waited <= recorded <= 1.6 * waited,
                  "rank 1: dependence rows hold %.3f s of wait for %.3f s in MPI_Wait"
                  % (recorded, waited))


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
    exe = build(args, args.exe)
    out, _ = profile_run(args, exe)
    check(os.path.exists(os.path.join(out, "profile.json.gz")), "first run wrote its profile")
    cmd = mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--", exe]
    p = run(cmd, expect_ok=False)
    check(p.returncode != 0 and "holds the profile of another run" in p.stderr,
          "second run into the same directory refused: %s" % p.stderr)
    p = run(mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--force",
                               "--", exe])
    check(os.path.exists(os.path.join(out, "profile.json.gz")), "--force overwrites")


def case_show(args):
    src = Source(args.exe)
    out, _ = profile_run(args, build(args, args.exe))
    show = [os.path.join(args.bin, "scalana"), "show"]
    p = run(show + [out])
    check("itimer" in p.stdout or "papi" in p.stdout, "show prints the sampling source")
    check("== rank 0" in p.stdout and "dep" in p.stdout, "show prints per-rank rows:\n" + p.stdout)
    send = re.compile(r"\bMPI_Send \S*%s:%d in main\b" % (re.escape(src.name), src.line("send")))
    check(send.search(p.stdout), "show names the source line of MPI_Send:\n" + p.stdout)
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


def wrapped_run(args, function, thread_function=None):
    out, _ = profile_run(args, build(args, args.exe))
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
    wrapped_run(args, "heavy")


def case_wrapped_cxx(args):
    wrapped_run(args, "Sweep", thread_function="Background")


def case_wrapped_fortran(args):
    wrapped_run(args, "heavy")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    # Open MPI 4.1 races when concurrent launches create the shared session
    # directory under one TMPDIR ("mkdir ... File exists"); tests run in
    # parallel, so this one's launches get a TMPDIR of their own.
    session_tmp = tempfile.mkdtemp(prefix="scalana-test-")
    atexit.register(shutil.rmtree, session_tmp, True)
    os.environ["TMPDIR"] = session_tmp
    # Builds and run directories go there too, and are removed with it.
    tempfile.tempdir = session_tmp
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--llvm-bin", default="/usr/lib/llvm-19/bin")
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
