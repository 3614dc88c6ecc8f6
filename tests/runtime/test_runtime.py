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
import signal
import subprocess
import sys
import tempfile
import time


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


# The file a complete run leaves (runtime/collective_write.cpp), and the
# one rank 0 gathers with SCALANA_WRITE_GROUP=0 or when MPI-IO fails.
PROFILE, GATHERED = "profile.scalana", "profile.json.gz"
BIN = None  # --bin


def read_run(out):
    """The profile of run directory OUT as one format-2 document, whichever
    file holds it (rt_read_profile)."""
    p = run([os.path.join(BIN, "rt_read_profile"), out])
    return json.loads(p.stdout)


def profile_run(args, exe, extra=(), np=None, expect_ok=True, prog_args=(), **kw):
    out = tempfile.mkdtemp(prefix="scalana-rt-test-")
    shutil.rmtree(out)
    cmd = mpirun(np or args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out] + \
        list(extra) + ["--", exe] + list(prog_args)
    p = run(cmd, expect_ok=expect_ok, **kw)
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
        self.out = out
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


def disassembly(args, exe):
    return run([os.path.join(args.llvm_bin, "llvm-objdump"), "-d", "--no-show-raw-insn",
                exe]).stdout


def function_body(dis, symbol_pattern):
    """The instructions of the function whose symbol matches SYMBOL_PATTERN
    in DIS (llvm-objdump -d), or "" when there is none."""
    body = re.search(r"<%s>:\n(.*?)\n\n" % symbol_pattern, dis, re.S)
    return body.group(1) if body else ""


def compute_samples(shown, rank):
    """Samples outside MPI calls (unresolved ones included). Time blocked in
    MPI burns CPU too (Open MPI polls) and depends on how the other jobs on
    the shared cores delay the peers, so shares are taken of this."""
    return sum(row[1] for row in shown.rank(rank)["vertices"]
               if not shown.res[row[0]] or shown.res[row[0]]["kind"] != "mpi")


# Counts the runtime files beside its errors as facts of the run
# (runtime/output.cpp, IsInformational).
INFORMATIONAL = ("stack_truncated", "samples_in_profiler", "samples_while_blocked",
                 "perf_fd_budget_timer", "off_cpu_fd_budget")


def dep_set(rows, kind):
    return {(row[2], row[3]) for row in rows if row[1] == kind}


def check_samples_recorded(shown, r):
    """No dropped samples, and the vertex rows' CPU seconds add up to the
    process's CPU time measured (each sample stands for the time since the
    one before; the writer thread's time and samples taken inside the
    profiler's own unwinding belong to no row)."""
    where = "rank %d: " % r["rank"]
    check(r["samples_dropped"] == 0, where + "no samples dropped")
    recorded = r["samples"] - r["errors"].get("samples_in_profiler", 0)
    cpu = sum(x[2] for x in r["vertices"])
    check(0.85 * r["cpu_time"] - 0.05 < cpu <= 1.01 * r["cpu_time"] + 0.01,
          where + "cpu seconds %.3f in %d samples against %.3f measured" % (cpu, recorded, r["cpu_time"]))


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


def case_intercomm(args):
    # programs/intercomm.c: the world's even and odd ranks joined by an
    # intercommunicator, world rank 2i talking to 2i+1 across it.
    shown, _ = profiled(args)
    prof, n = shown.prof, args.np
    comms = prof["comms"]
    for rank in range(n):
        partner, where = rank ^ 1, "rank %d: " % rank

        def deps(marker):
            return shown.at(rank, "deps", marker)

        even = rank % 2 == 0
        expect = (("send", "send", 1), ("recv", "recv", 2)) if even else \
            (("recv_any", "recv", 1), ("send_back", "send", 2))
        expect += (("irecv", "recv", 3), ("isend", "send", 3), ("waitall", "send", 3),
                   ("waitall", "recv", 3))
        for marker, kind, tag in expect:
            rows = [r for r in deps(marker) if r[1] == kind]
            # The remote group's rank, resolved to the world's (not
            # MPI_UNDEFINED), on the communicator of both groups.
            check(rows and dep_set(rows, kind) == {(partner, tag)},
                  where + "%s at @%s names world rank %d: %s" % (kind, marker, partner, rows))
            check(all(sorted(comms[r[4]]) == list(range(n)) for r in rows),
                  where + "@%s on the intercommunicator's both groups: %s (comms %s)"
                  % (marker, rows, comms))
        rows = deps("barrier")
        check(rows and all(r[1] == "coll" and sorted(comms[r[4]]) == list(range(n)) for r in rows),
              where + "the barrier's members are both groups: %s (comms %s)" % (rows, comms))
    # Each side lists the intercommunicator alike: one entry for it.
    inter = [c for c in comms if sorted(c) == list(range(n)) and c != list(range(n))]
    check(len(inter) == 1, "one communicator of both groups: %s" % comms)
    d = run([os.path.join(args.bin, "scalana"), "detect", shown.out, "--format", "json"])
    check("no matching row" not in d.stdout + d.stderr,
          "every send matched its receive: %s" % d.stderr)
    # Every rank waits for rank 0's longer work. The cause's path is the
    # first that reached it: from rank 1's receive across the
    # intercommunicator, through the barrier of both groups, or from rank 0's
    # own abnormal loop, as the run's timing has it; the waits on rank 0
    # traced to it count the partner's either way, and every point-to-point
    # crossing joins partners.
    report = json.loads(d.stdout)
    crossings = [(a, b) for c in report["root_causes"] for a, b in zip(c["path"], c["path"][1:])
                 if b["via"] == "p2p"]
    work = [c for c in report["root_causes"] if c["culprit_rank"] == 0 and c["function"] == "Work"]
    check(work and work[0]["waiting_ranks"] >= 1 and work[0]["waits_caused"] > 0,
          "waits across the intercommunicator traced to rank 0's work: %s" % work[:1])
    check(all(a["rank"] == b["rank"] ^ 1 for a, b in crossings),
          "crossings join partners across the intercommunicator: %s" % crossings)
    check(any(c["culprit_rank"] == 0 and c["kind"] == "loop" and c["function"] == "Work"
              for c in report["root_causes"]),
          "rank 0's work is a root cause: %s" % report["root_causes"])


def case_callsites_threads(args, extra=()):
    shown, _ = profiled(args, ["-pthread"], extra)
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
    return shown


def case_callsites_perf(args):
    # The same attribution from the perf source, with a PAPI event counted
    # beside it where PAPI has it (the counter path without a PMU): each
    # row's task-clock delta is then the CPU time the row stands for.
    shown = case_callsites_threads(args, ["--sampler", "perf", "--counters", "perf::TASK-CLOCK"])
    sampling = shown.prof["meta"]["sampling"]
    check(sampling["source"] == "perf-task-clock", "the perf source ran: %s" % sampling)
    if not sampling["counters_real"]:
        # PAPI without a working perf_event component (a VM without a PMU):
        # no event of it exists, and the profile must say so.
        check(sampling["counters"] == [] and "perf::TASK-CLOCK not available" in sampling["note"],
              "the missing counter is named: %s" % sampling)
        return
    check(sampling["counters"] == ["perf::TASK-CLOCK"], "the counter was read: %s" % sampling)
    for r in shown.prof["ranks"]:
        cpu = sum(row[2] for row in r["vertices"])
        counted = sum(row[3][0] for row in r["vertices"] if row[3]) * 1e-9
        check(0.8 * cpu < counted < 1.2 * cpu,
              "rank %d: task-clock counted %.3f s against %.3f s of samples" % (r["rank"], counted, cpu))


def case_mpi_threads(args):
    # Threads calling MPI at once, new ones taking over the records of ended
    # ones, requests completed by another thread, MPI calls from a
    # thread_local destructor, snapshots while all that runs: every call
    # counted at its call site, no error.
    # About a second of calls: with --snapshot 1 the writer reads the
    # threads' records while they add to them without their locks.
    rounds, threads, ops, messages = 300, 2, 20000, 50
    src = Source(args.exe)
    exe = build(args, args.exe, ["-pthread"])
    # A low sampling threshold: parameters are recorded for some calls and
    # skipped for others (the lock-free path), both within one run.
    # 6 s on 2 idle cores, past 120 s with two busy loops beside it (Open
    # MPI's threads under MPI_THREAD_MULTIPLE; the runtime of before the
    # call-site chains did the same): it checks counts, not speed.
    out, _ = profile_run(args, exe, extra=["--dep-sample", "500", "--snapshot", "1"],
                         prog_args=[str(x) for x in (rounds, threads, ops, messages)],
                         timeout=600)
    shown = Shown(args, out, src)
    n = args.np
    check(shown.prof["meta"]["complete"], "profile complete")
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        nxt, prv = (rank + 1) % n, (rank - 1 + n) % n
        where = "rank %d: " % rank
        # Counts of the run's facts (a sample landing in the wrapper's own
        # unwind, likelier on a loaded machine) are not failures.
        failures = {k: v for k, v in r["errors"].items() if k not in INFORMATIONAL}
        check(not failures, where + "no runtime errors: %s" % r["errors"])
        expect = {"thread_acc": rounds * threads * ops, "late_acc": rounds * threads,
                  "late_flush": rounds * threads, "thread_irecv": rounds * threads * messages,
                  "thread_send": rounds * threads * messages, "main_waitall": rounds,
                  "thread_flush": rounds * threads * (ops // 100),
                  "thread_flush_end": rounds * threads}
        for marker, calls in expect.items():
            check(shown.calls(rank, marker) == calls, where + "%d calls at @%s, expected %d"
                  % (shown.calls(rank, marker), marker, calls))

        def deps(marker):
            return shown.at(rank, "deps", marker)

        for marker in ("thread_acc", "late_acc", "thread_flush", "late_flush"):
            check(dep_set(deps(marker), "rma") == {(nxt, 0)},
                  where + "one-sided rows at @%s target rank %d: %s" % (marker, nxt, deps(marker)))
        tags = {(prv, 100 + t) for t in range(threads)}
        check(dep_set(deps("thread_irecv"), "recv") == tags,
              where + "receives posted by the threads: %s" % deps("thread_irecv"))
        check(dep_set(deps("main_waitall"), "recv") == tags,
              where + "and completed by the main thread: %s" % deps("main_waitall"))
        # Below the sampling threshold on each thread every receive is
        # recorded once; past it, 1 in 16 Accumulates is, weighted 16.
        posted = sum(row[5] for row in deps("thread_irecv") if row[1] == "recv")
        check(posted == rounds * threads * messages, where + "receives counted: %d" % posted)
        acc = sum(row[5] for row in deps("thread_acc") if row[1] == "rma")
        total = rounds * threads * ops
        check(abs(acc - total) < 0.2 * total,
              where + "Accumulates estimated %d, made %d" % (acc, total))


def case_own_sigprof(args):
    # The program's own SIGPROF ticks, every 10 ms of CPU time, must be the
    # same with and without the profiler: ours run on another signal.
    src = Source(args.exe)
    exe = build(args, args.exe)

    def ticks(stdout):
        m = re.search(r"ticks=(\d+) cpu=([\d.]+)", stdout)
        check(m, "the program reports its ticks: %s" % stdout)
        return int(m.group(1)) / float(m.group(2))

    # ITIMER_PROF is charged a whole kernel tick at a time: on a loaded
    # machine the program alone can see 140 ticks per CPU second. Such a
    # pair says nothing of the profiler, so it is measured again (up to
    # three pairs); the profiled rate is judged against a sane one alone.
    for attempt in range(3):
        alone = ticks(run(mpirun(1) + [exe]).stdout)
        out, p = profile_run(args, exe, np=1)
        profiled_rate = ticks(p.stdout)
        if 50 <= alone <= 130:
            break
        print("the program alone saw %.0f ticks per CPU second (load?): measuring again" % alone)
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


SAMPLERS = ("timer", "perf")


def case_many_threads(args):
    # A thousand threads alive at once under `ulimit -n 1024`: the program's
    # own open() calls succeed as they would without the profiler, whatever
    # the source; perf events past the descriptor budget fall back to the
    # timer, counted.
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    exe = build(args, args.exe, ["-pthread"])
    for sampler in SAMPLERS:
        out, p = profile_run(args, exe, extra=["--sampler", sampler], prog_args=["1000", "800"],
                             preexec_fn=limit)
        m = re.search(r"threads (\d+) open failures (\d+)", p.stdout)
        check(m and m.group(1) == "1000" and m.group(2) == "0",
              "%s: the program's own open() unaffected: %s" % (sampler, p.stdout.strip()))
        r = read_run(out)["ranks"][0]
        check(r["threads"] > 1000, "%s: every thread counted: %d" % (sampler, r["threads"]))
        if sampler == "perf":
            # One event for the process, inherited (as root here: kernel
            # mode sampled), or one per thread within the budget, the rest
            # on the timer, counted.
            moved = r["errors"].get("perf_fd_budget_timer", 0)
            check(moved == 0 or 800 <= moved < 1000,
                  "perf: threads past the descriptor budget on the timer, counted: %s" % r["errors"])
        failures = {k: v for k, v in r["errors"].items() if k not in INFORMATIONAL}
        check(not failures, "%s: no runtime errors: %s" % (sampler, r["errors"]))
    # 2,000 threads of 2-3 ms each: the rate `scalana show` reports is the
    # samples over the CPU time the program measured itself once they ended.
    for sampler in SAMPLERS:
        out, p = profile_run(args, exe, extra=["--sampler", sampler], np=1,
                             prog_args=["2000", "0", "3000000"])
        m = re.search(r"threads 2000 open failures 0 process_cpu ([\d.]+)", p.stdout)
        check(m, "%s: 2,000 threads ran: %s" % (sampler, p.stdout.strip()))
        r = read_run(out)["ranks"][0]
        shown = run([os.path.join(args.bin, "scalana"), "show", out]).stdout
        said = re.search(r"Hz asked, (\d+) obtained", shown)
        measured = r["samples"] / float(m.group(1))
        check(said and abs(int(said.group(1)) - measured) <= 0.05 * measured,
              "%s, 2,000 threads: the rate said (%s) is the samples over the program's own CPU "
              "time, %.0f Hz, within 5%%:\n%s" % (sampler, said and said.group(1), measured, shown))
        print("%s, 2,000 threads: %d samples over %.2f CPU s, %s Hz said"
              % (sampler, r["samples"], float(m.group(1)), said.group(1)))


def case_own_rt_signal(args):
    # The program handles the sampling signal's number itself, with a timer
    # of its own and signals it sends itself: its handler sees exactly its
    # own signals, what it set reads back, and the profiler still samples.
    # The timer source samples on SIGRTMIN+4, the perf source on SIGTRAP:
    # the program takes each of them under each source.
    src = Source(args.exe)
    exe = build(args, args.exe)
    pattern = r"own_timer (\d+) queued (\d+)/(\d+) foreign (\d+) wall ([\d.]+) readback (\d)"
    for sampler in SAMPLERS:
        for own in ("rt", "trap"):
            what = "%s, program on %s" % (sampler, "SIGTRAP" if own == "trap" else "SIGRTMIN+4")
            out, p = profile_run(args, exe, np=1, extra=["--sampler", sampler], prog_args=[own])
            m = re.search(pattern, p.stdout)
            check(m, "%s: the program reports its signals: %s" % (what, p.stdout))
            timer, queued, sent, foreign, wall, back = m.groups()
            expected = float(wall) / 0.005
            check(abs(int(timer) - expected) <= 0.05 * expected + 2,
                  "%s: the program's own timer expiries: %s, expected %.0f" % (what, timer, expected))
            check(queued == sent == "50", "%s: its own signals: %s of %s" % (what, queued, sent))
            check(foreign == "0", "%s: no signal of the profiler reached its handler: %s"
                  % (what, foreign))
            check(back == "1", "%s: sigaction reads back the program's handler" % what)
            shown = Shown(args, out, src)
            spin = shown.samples(0, shown.loop_at("spin"))
            check(spin >= 50, "%s: the profiler kept sampling the spin loop: %d samples"
                  % (what, spin))
            note = shown.prof["meta"]["sampling"]["note"]
            ours = "SIGTRAP" if sampler == "perf" else "SIGRTMIN+4"
            theirs = "SIGTRAP" if own == "trap" else "SIGRTMIN+4"
            said = "the program handles %s" % theirs in note
            check(said == (ours == theirs), "%s: the profile says it handles the sampling "
                  "signal exactly when it does: %s" % (what, note))


def case_descriptors(args):
    # A program that closes every descriptor above 2 at start (a close()
    # loop, then closefrom) keeps its samples: the perf events and
    # libunwind's pipe stay open through its close(), counted; the rate
    # `scalana show` reports is its samples over the CPU time the program
    # measured itself, and is the asked one. Its first open() and LD_PRELOAD
    # (after MPI_Init) are as without the profiler.
    exe = build(args, args.exe)
    pattern = r"first_open (-?\d+) preload (\w+) process_cpu ([\d.]+)"
    for mode in ("loop", "closefrom"):
        plain = run(mpirun(1) + [exe, mode])
        m0 = re.search(pattern, plain.stdout)
        check(m0, "%s: the program alone reports: %s" % (mode, plain.stdout))
        for sampler in SAMPLERS:
            what = "%s, %s" % (mode, sampler)
            out, p = profile_run(args, exe, np=1, extra=["--sampler", sampler, "--hz", "1000"],
                                 prog_args=[mode])
            m = re.search(pattern, p.stdout)
            check(m, "%s: the program reports: %s" % (what, p.stdout))
            check(m.group(1) == m0.group(1) and m.group(2) == m0.group(2) == "unset",
                  "%s: first open() and LD_PRELOAD as without the profiler: %s, alone %s"
                  % (what, m.group(0), m0.group(0)))
            r = read_run(out)["ranks"][0]
            check(r["errors"].get("program_closed_profiler_descriptor", 0) >= 2,
                  "%s: its closes of the profiler's descriptors refused, counted: %s"
                  % (what, r["errors"]))
            shown = run([os.path.join(args.bin, "scalana"), "show", out]).stdout
            said = re.search(r"at 1000 Hz asked, (\d+) obtained", shown)
            check(said, "%s: show says the rate obtained:\n%s" % (what, shown))
            measured = r["samples"] / float(m.group(3))
            check(abs(int(said.group(1)) - measured) <= 0.05 * measured,
                  "%s: the rate said, %s Hz, is the samples over the program's own CPU time "
                  "(%.0f Hz) within 5%%" % (what, said.group(1), measured))
            if sampler == "perf":
                check(measured >= 900, "%s: the perf source lived through the closes: %.0f Hz"
                      % (what, measured))
                check("under half" not in shown, "%s: no rate warning:\n%s" % (what, shown))


def case_thread_clock_reads(args):
    # Under the perf source the sampling handler books CPU time from its
    # event's count, never from the thread's CPU clock: reading that clock
    # lets the scheduler end the thread's time slice at the sample, which
    # made samples miss code run just after slice starts (docs/contexts.md,
    # "Sampling"). The program counts its thread's clock reads; the timer
    # source still reads the clock at each sample, which shows the count sees
    # the handler's reads.
    src = Source(args.exe)
    exe = build(args, args.exe, ["-rdynamic"])
    reads = {}
    for sampler in SAMPLERS:
        out, p = profile_run(args, exe, np=1, extra=["--sampler", sampler])
        m = re.search(r"thread_clock_reads (\d+) cpu ([\d.]+)", p.stdout)
        check(m, "%s: the program reports its clock reads: %s" % (sampler, p.stdout))
        shown = Shown(args, out, src)
        spin = shown.samples(0, shown.loop_at("spin"))
        reads[sampler] = (int(m.group(1)), spin)
    timer_reads, timer_spin = reads["timer"]
    check(timer_spin >= 20 and timer_reads >= timer_spin,
          "timer: the handler's clock reads are seen (%d reads, %d samples)" % reads["timer"])
    perf_reads, perf_spin = reads["perf"]
    check(perf_spin >= 200, "perf: the spin loop was sampled: %d samples" % perf_spin)
    check(perf_reads <= 2, "perf: %d reads of the thread's CPU clock for %d samples" % reads["perf"])


# Points of the rank's CPU time the blocked share may be off by (the clock
# reads around each blocked stretch, the program's own and the runtime's).
BLOCKED_TOLERANCE = 0.02


def case_blocked_signals(args):
    # The program blocks every signal in eight ways (programs/blocked_signals.c)
    # and measures on its own clocks how long: the profile's figure is that
    # CPU time, and the report names the rank and the same share.
    exe = build(args, args.exe)
    for mode in ("full", "half", "thread", "inherit", "handler", "jump", "handler_jump",
                 "context"):
        out, p = profile_run(args, exe, np=1, prog_args=[mode])
        r = read_run(out)["ranks"][0]
        cpu, reported = r["cpu_time"], r.get("sampling_blocked", 0)
        m = re.search(r"process_cpu_at_block (\S+)", p.stdout)
        # full: every CPU second after the mask call is blocked, the threads
        # MPI starts (born with the mask) included.
        true = cpu - float(m.group(1)) if m else \
            float(re.search(r"blocked_cpu (\S+)", p.stdout).group(1))
        check(true > 0.3 * cpu, "%s: the program blocked %.3f of %.3f CPU s" % (mode, true, cpu))
        check(not mode.startswith("handler") or "handler read back as set" in p.stdout,
              "%s: sigaction reads back the program's action: %s" % (mode, p.stdout))
        check(abs(reported - true) <= BLOCKED_TOLERANCE * cpu,
              "%s: blocked share measured %.3f, true %.3f (%.3f of %.3f CPU s)"
              % (mode, reported / cpu, true / cpu, reported, cpu))
        d = run([os.path.join(args.bin, "scalana"), "detect", out])
        m = re.search(r"rank 0 blocked the sampling signal for (\d+)% of its CPU time: that time "
                      r"has no samples, so no vertex shows it", d.stdout)
        check(m and abs(int(m.group(1)) - 100 * true / cpu) <= 100 * BLOCKED_TOLERANCE + 0.5,
              "%s: the report names the rank and its share (true %.1f%%): %s"
              % (mode, 100 * true / cpu, d.stdout))
        shown = run([os.path.join(args.bin, "scalana"), "show", out]).stdout
        check("warning: " + m.group(0) in shown,
              "%s: scalana show warns alike: %s" % (mode, shown[:2000]))


def case_openmp(args):
    shown, _ = profiled(args, ["-fopenmp"])
    src = shown.src
    region = "parallel region (%s:%d)" % (src.name, src.line("region"))
    for r in shown.prof["ranks"]:
        t0 = shown.samples(r["rank"], shown.loop_at("loop0"))
        t1 = shown.samples(r["rank"], shown.loop_at("loop1"))
        check(t1 > 0 and t0 > 0 and 0.33 < t1 / t0 < 3,
              "rank %d: OpenMP threads 0 and 1 both sampled (%d, %d samples)" % (r["rank"], t0, t1))
        # Thread 0 (main's stack through libomp) and thread 1 (libomp's own
        # stack: no frame of main) are both placed in the region of main.
        for loop, call, fn in (("loop0", "call0", "spin_thread0"), ("loop1", "call1", "spin_thread1")):
            want = ["main", region, "%s (%s:%d)" % (fn, src.name, src.line(call))]
            paths = {tuple(shown.res[row[0]]["call_path"])
                     for row in shown.rows(r["rank"], "vertices", shown.loop_at(loop))}
            check(paths == {tuple(want)},
                  "rank %d: the samples of %s are reached through %s: %s" % (r["rank"], fn, want, paths))


def case_openmp_names(args):
    shown, _ = profiled(args, ["-fopenmp"])
    names = {info["function"] for info in shown.res if info and shown.loop_at("body_loop")(info)}
    check(names and all(n.startswith("physics::Relax(long)") for n in names),
          "the region's body is named as C++ names it: %s" % sorted(names))


def case_openmp_critical(args):
    # Waits to enter a critical section are OpenMP waits of their own kind
    # (OMPT mutex_acquire to mutex_acquired), timed like a barrier's and
    # held to what the program measures itself.
    src = Source(args.exe)
    exe = build(args, args.exe, ["-fopenmp"])
    out = tempfile.mkdtemp(prefix="scalana-rt-test-")
    shutil.rmtree(out)
    # Unbound: each thread on a core of its own, so one waits while the
    # other holds the section (bound to one core, they take turns instead).
    p = run(mpirun(args.np) + ["--bind-to", "none", os.path.join(args.bin, "scalana"), "prof",
                               "-o", out, "--", exe])
    own = {int(m.group(1)): (float(m.group(2)), float(m.group(3)))
           for m in re.finditer(r"rank (\d+) waited ([\d.]+) ([\d.]+)", p.stdout)}
    shown = Shown(args, out, src)
    for r in shown.prof["ranks"]:
        where = "rank %d: " % r["rank"]
        omp_of = {t[0]: t[1] for t in r.get("thread_info", [])}
        critical = {}
        for ctx, thread, kind, count, seconds, samples, cpu, iters in r["omp"]:
            if kind == "critical":
                n, s = critical.get(omp_of.get(thread), (0, 0.0))
                critical[omp_of.get(thread)] = (n + count, s + seconds)
        waited = own[r["rank"]]
        check(sorted(critical) == [0, 1], where + "both threads' critical waits: %s" % r["omp"])
        for t in (0, 1):
            n, s = critical[t]
            check(n == 40, where + "thread %d entered the critical section 40 times: %d" % (t, n))
            # 5 ms: two clock reads a wait, 40 waits, on either side.
            check(abs(s - waited[t]) <= 0.2 * waited[t] + 0.005,
                  where + "thread %d waited %.3f s to enter, the program measured %.3f s" %
                  (t, s, waited[t]))
    text = run([os.path.join(args.bin, "scalana"), "detect", out]).stdout
    check(re.search(r"^time: .*OpenMP waits [\d.]+%.* \(of them serialised: critical sections "
                    r"and locks [\d.]+%", text, re.M),
          "the time line counts the critical waits as serialisation:\n%s" % text[:2000])
    t = json.loads(run([os.path.join(args.bin, "scalana"), "detect", "--format", "json",
                        out]).stdout)["runs"][-1]["time"]
    main_wait = critical[0][1]
    wall = shown.prof["ranks"][0]["wall_time"]
    check(abs(t["omp_serial"]["median"] - main_wait / wall) <= 0.01,
          "JSON: serialised %.4f of wall, thread 0 waited %.3f s of %.3f s: %s" %
          (t["omp_serial"]["median"], main_wait, wall, t["omp_serial"]))


def case_openmp_waits(args):
    # The default source. mpirun binds the rank to one core, so the two
    # threads share it and the scheduler switches them at the tick a CPU-time
    # timer is checked at: thread 1's short bursts are seldom sampled by the
    # timer, so the runtime moves it to the perf source (docs/contexts.md,
    # "Sampling"); its samples are then as many as thread 0's per CPU second.
    shown, _ = profiled(args, ["-fopenmp"], [])
    src, res = shown.src, shown.res
    region = "parallel region (%s:%d)" % (src.name, src.line("region"))

    def through(info, marker):
        return any(src.at(loc, marker) for loc in info["call_lines"] + [info["location"]])

    for r in shown.prof["ranks"]:
        where = "rank %d: " % r["rank"]
        omp_of = {t[0]: t[1] for t in r.get("thread_info", [])}
        workers = [i for i, o in omp_of.items() if o == 1]
        check(len(workers) == 1 and omp_of.get(0) == 0,
              where + "threads named by their OpenMP number: %s" % r.get("thread_info"))
        worker = workers[0]
        # Each thread's own samples and CPU time: thread 1 works a third of
        # thread 0's loop and waits the rest of each region.
        info = {t[0]: t for t in r["thread_info"]}
        check(len(info[worker]) == 6 and 0.15 < info[worker][3] / info[0][3] < 0.8
              and info[worker][2] > 0,
              where + "thread 1's samples and CPU time beside thread 0's: %s" % r["thread_info"])
        # The kernel's account of each thread: CPU time and run delay fit in
        # its life (docs/runtime.md, "Time accounting").
        for t in info.values():
            check(t[5] > 0 and t[3] + t[4] <= t[5] + 0.02,
                  where + "thread %d: CPU %.3f s and run delay %.3f s within its %.3f s life" %
                  (t[0], t[3], t[4], t[5]))
        # Whether the worker is starved enough to be moved depends on how
        # the scheduler interleaves the two threads on this host; at most
        # the one worker moves, and either way it is sampled at its rate.
        check(r.get("errors", {}).get("threads_moved_to_perf", 0) <= 1,
              where + "only the starved thread moved to perf: errors %s" % r.get("errors"))
        rate = {i: t[2] / t[3] for i, t in info.items() if t[3] > 0}
        check(rate.get(worker, 0) > 0.4 * rate.get(0, 0),
              where + "thread 1 sampled at %.0f Hz, thread 0 at %.0f Hz" %
              (rate.get(worker, 0), rate.get(0, 0)))
        check(not shown.prof["sampling_warnings"],
              where + "no thread under-sampled: %s" % shown.prof["sampling_warnings"])
        # The worker's samples in work()'s loop, under each caller of region().
        loop = shown.loop_at("work")
        rows = [row for row in r["thread_vertices"]
                if row[1] == worker and res[row[0]] and loop(res[row[0]])]
        a = sum(row[2] for row in rows if through(res[row[0]], "call_a"))
        b = sum(row[2] for row in rows if through(res[row[0]], "call_b"))
        check(a > 0 and b > 0 and a + b == sum(row[2] for row in rows),
              where + "thread 1's samples of work() under caller_a (%d) and caller_b (%d) only, "
              "of %d: %s" % (a, b, sum(row[2] for row in rows),
                             {tuple(res[row[0]]["call_path"]) for row in rows}))
        for row in rows:
            check(region in res[row[0]]["call_path"],
                  where + "thread 1 reaches work() through the region: %s" % res[row[0]]["call_path"])
        # Thread 1 waits at the closing barrier for two thirds of each region.
        waits = {}
        for row in r["omp"]:
            if row[2] == "barrier" and res[row[0]]:
                for caller in ("call_a", "call_b"):
                    if through(res[row[0]], caller):
                        waits[(row[1], caller)] = waits.get((row[1], caller), 0) + row[4]
        # Thread 0's share of a context is the rank's row less the others'.
        work0 = (sum(row[2] for row in r["vertices"] if res[row[0]] and loop(res[row[0]]))
                 - sum(row[3] for row in r["thread_vertices"]
                       if res[row[0]] and loop(res[row[0]])))
        check(not any(row[1] == 0 for row in r["thread_vertices"]),
              where + "no rows of thread 0 in thread_vertices: the rank's rows hold them")
        for caller in ("call_a", "call_b"):
            w1, w0 = waits.get((worker, caller), 0), waits.get((0, caller), 0)
            check(w1 > 0.15 * work0 and w1 > 3 * w0,
                  where + "thread 1 waits at the barrier of the region under %s: %.3f s, thread 0 "
                  "%.3f s (thread 0 computes %.3f s in all)" % (caller, w1, w0, work0))
        spun = sum(row[5] for row in r["omp"] if row[1] == worker)
        print(where + "thread 1 waited %.3f s, %d samples while waiting"
              % (sum(waits.get((worker, c), 0) for c in ("call_a", "call_b")), spun))


def case_openmp_tasks(args):
    """Tasks run at a region's closing barrier are work: their samples land
    on the task bodies' loops, within sampling noise of the CPU time the
    program measured in the slow task itself, and the barrier's rows keep
    only the spinning (before, every task sample was the barrier's)."""
    src = Source(args.exe)
    exe = build(args, args.exe, ["-fopenmp"])
    out, p = profile_run(args, exe)
    measured = {int(m.group(1)): float(m.group(2)) for m in
                re.finditer(r"openmp_tasks: rank (\d+) slow_cpu ([0-9.]+)", p.stdout)}
    shown = Shown(args, out, src)
    for r in shown.prof["ranks"]:
        where = "rank %d: " % r["rank"]
        slow = measured.get(r["rank"], 0)
        check(slow > 0.05, where + "the program measured its slow tasks: %s" % p.stdout)
        cpu = lambda marker: sum(row[2] for row in shown.rows(r["rank"], "vertices",
                                                              shown.loop_at(marker)))
        got, others = cpu("slow_loop"), cpu("task_loop")
        check(0.6 * slow < got < 1.6 * slow,
              where + "the slow task's loop holds %.3f CPU s of samples; the program measured "
              "%.3f s" % (got, slow))
        check(others > 0.2 * slow, where + "the other tasks' loop holds %.3f s" % others)
        spun = sum(row[6] for row in r["omp"])
        check(spun < 0.5 * slow,
              where + "%.3f CPU s of samples booked to the waits, against %.3f s in the slow "
              "tasks: the tasks' work is not the wait" % (spun, slow))
        print(where + "slow task %.3f s (measured %.3f), other tasks %.3f s, waits' samples "
              "%.3f s" % (got, slow, others, spun))


def case_openmp_region_end(args):
    shown, _ = profiled(args, ["-fopenmp"])
    regions, serial_s = 30, 0.010
    for r in shown.prof["ranks"]:
        where = "rank %d: " % r["rank"]
        omp_of = {t[0]: t[1] for t in r.get("thread_info", [])}
        workers = [i for i, o in omp_of.items() if o == 1]
        check(len(workers) == 1, where + "one worker: %s" % r.get("thread_info"))
        rows = [row for row in r["omp"] if row[1] == workers[0] and row[2] == "barrier"]
        count, seconds = sum(row[3] for row in rows), sum(row[4] for row in rows)
        # The last region's wait ends at no release: it is not counted.
        check(count >= regions - 1, where + "the worker's closing-barrier waits: %d" % count)
        # At most the 2 ms thread 0 works longer (less where mpirun binds
        # both threads to one core: thread 1 then runs while thread 0 is
        # switched out); over 10 ms a region if the serial code counted.
        check(0 < seconds < 0.5 * count * serial_s,
              where + "the worker waited %.3f s in %d regions: the region's end bounds each "
              "wait (the serial code between them is %.0f ms)"
              % (seconds, count, 1e3 * count * serial_s))


def case_openmp_worksharing(args):
    # Off by default: the work callback is not registered, so no rows of
    # worksharing; with --omp-worksharing each thread counts the loop once a
    # region with its iterations (libomp reports the whole loop's 2000 to
    # every thread, not the thread's share).
    regions, iters = 50, 2000
    exe = build(args, args.exe, ["-fopenmp"])
    for extra, expect in (([], False), (["--omp-worksharing"], True)):
        shown = Shown(args, profile_run(args, exe, extra=extra)[0], Source(args.exe))
        for r in shown.prof["ranks"]:
            where = "rank %d %s: " % (r["rank"], " ".join(extra) or "(default)")
            loops = [row for row in r.get("omp", []) if row[2] == "loop"]
            waits = [row for row in r.get("omp", []) if row[2] == "loop_barrier"]
            check(waits, where + "the loop's closing barrier is timed either way: %s"
                  % r.get("omp"))
            if not expect:
                check(not loops, where + "no worksharing rows unless asked for: %s" % loops)
                continue
            by_thread = {}
            for row in loops:
                count, iterations = by_thread.get(row[1], (0, 0))
                by_thread[row[1]] = (count + row[3], iterations + row[7])
            check(sorted(by_thread.values()) == [(regions, regions * iters)] * 2,
                  where + "each thread's loop %d times with %d iterations: %s"
                  % (regions, regions * iters, by_thread))


def case_openmp_mpi_workers(args):
    shown, _ = profiled(args, ["-fopenmp"])
    regions = 20
    for r in shown.prof["ranks"]:
        where = "rank %d: " % r["rank"]
        # Both threads call MPI_Allreduce in every region: each caller's
        # context holds both threads' calls, the worker's under the fork's.
        a = sum(row[1] for row in shown.rows(r["rank"], "mpi",
                                               shown.mpi_at("allreduce", ["call_a", "region"])))
        b = sum(row[1] for row in shown.rows(r["rank"], "mpi",
                                               shown.mpi_at("allreduce", ["call_b", "region"])))
        total = shown.calls(r["rank"], "allreduce")
        check(a == 2 * regions and b == 2 * regions and total == 4 * regions,
              where + "MPI_Allreduce of both threads under caller_a (%d) and caller_b (%d), "
              "of %d calls; expected %d each" % (a, b, total, 2 * regions))


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
    dis = disassembly(args, exe)
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


def case_merged_calls(args):
    shown, exe = profiled(args)
    # The premise: Step's two calls of Sweep are one call instruction.
    calls = re.findall(r"\tcallq?\t.*<Sweep>", function_body(disassembly(args, exe), "Step"))
    check(len(calls) == 1, "Step() calls Sweep() from one instruction: %s" % calls)
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        in_loop = shown.samples(rank, shown.loop_at("sweep_loop", ["call_step", "call_odd"]))
        total = compute_samples(shown, rank)
        check(in_loop >= 0.8 * total,
              where + "Sweep's loop under Step's first call holds %d of %d samples outside MPI"
              % (in_loop, total))


def case_tail_mpi(args):
    shown, exe = profiled(args)
    # The premise: Reduce() ends in a jump to MPI_Allreduce.
    body = function_body(disassembly(args, exe), "Reduce")
    check(re.search(r"\tjmp\t.*<MPI_Allreduce@plt>", body),
          "Reduce() ends in a jump to MPI_Allreduce: %s" % body)
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        calls = shown.calls(rank, "allreduce")
        check(calls == 200, where + "%d MPI_Allreduce calls on Reduce's vertex, made 200" % calls)
        on_call = [row for row in shown.rank(rank)["mpi"]
                   if shown.res[row[0]] and shown.res[row[0]]["kind"] == "call"]
        check(not on_call, where + "MPI rows on a call vertex: %s" % on_call)


def case_mpi_chains(args):
    """One MPI call site under two callers in turn, the wrapper's frame at the
    same depth under both (programs/mpi_chains.c): each caller's calls under
    its own context, and the samples outside the runtime's unwinding."""
    shown, _ = profiled(args)
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        for caller in ("call_a", "call_b"):
            calls = sum(row[1] for row in shown.rows(rank, "mpi",
                                                     shown.mpi_at("test", [caller])))
            check(calls == 200000, where + "%d MPI_Test calls under @%s, made 200000"
                  % (calls, caller))
        inside = r["errors"].get("samples_in_profiler", 0)
        check(inside <= 0.1 * r["samples"], where + "%d of %d samples taken while the runtime "
              "unwound: it unwinds on every call when callers take turns" % (inside, r["samples"]))
        check_samples_recorded(shown, r)


def case_templates(args):
    shown, exe = profiled(args)
    # The premises: both tail calls are jumps, so their frames are missing.
    dis = disassembly(args, exe)
    for fn in ("run_heavy", "run_light"):
        body = function_body(dis, r"_ZN12_GLOBAL__N_1\d+%sEl" % fn)
        check(re.search(r"\tjmp\t.*<_ZN12_GLOBAL__N_14spinEl>", body),
              "%s() ends in a jump to spin(): %s" % (fn, body))
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        # An empty context is time outside the program (a library's own
        # thread, e.g. Open MPI's progress thread): it fits nothing, by right.
        unresolved = [row for row in r["vertices"]
                      if shown.res[row[0]] is None and shown.prof["contexts"][row[0]]]
        check(not unresolved, where + "every context fits the PSG: %s" % unresolved)
        heavy = shown.samples(rank, shown.loop_at("heavy_loop"))
        light = shown.samples(rank, shown.loop_at("light_loop"))
        check(light > 0 and 2.0 <= heavy / light <= 4.5,
              where + "forall instances: heavy lambda %d samples, light %d; not ~3:1"
              % (heavy, light))
        a = shown.samples(rank, shown.loop_at("spin", ["call_heavy", "tail_heavy"]))
        b = shown.samples(rank, shown.loop_at("spin", ["call_light", "tail_light"]))
        check(b > 0 and 2.0 <= a / b <= 4.5,
              where + "spin() through tail calls: %d samples via run_heavy, %d via run_light"
              % (a, b))
        check(shown.calls(rank, "allreduce") == 10,
              where + "MPI_Allreduce in exchange() timed at its own line: %d calls"
              % shown.calls(rank, "allreduce"))


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


def case_longjmp_errhandler(args):
    shown, _ = profiled(args)
    for r in shown.prof["ranks"]:
        rank = r["rank"]
        where = "rank %d: " % rank
        check(r["errors"].get("mpi_call_abandoned") == 1,
              where + "the MPI_Send left by longjmp is counted as abandoned: %s" % r["errors"])
        check(shown.calls(rank, "bad_send") == 1, where + "the abandoned MPI_Send is one call")
        check(shown.calls(rank, "after_barrier") == 10,
              where + "the 10 MPI_Barrier calls after the longjmp are recorded: %d"
              % shown.calls(rank, "after_barrier"))
        loop = shown.samples(rank, shown.loop_at("after_loop", ["after_call"]))
        total = compute_samples(shown, rank)
        check(total > 0 and loop >= 0.8 * total,
              where + "the loop after the longjmp is computation: %d of %d samples outside MPI"
              % (loop, total))
        in_send = shown.samples(rank, shown.mpi_at("bad_send"))
        check(in_send < 0.2 * max(loop, 1),
              where + "the loop's time is not MPI_Send's: %d samples there, %d on the loop"
              % (in_send, loop))
    text = run([os.path.join(args.bin, "scalana"), "show", shown.out]).stdout
    check("mpi_call_abandoned" in text, "show prints the abandoned call:\n" + text[-2000:])
    p = run([os.path.join(args.bin, "scalana"), "detect", shown.out])
    check("mpi_call_abandoned" in p.stderr, "detect warns of the abandoned call:\n" + p.stderr)


def case_fortran(args):
    out, _ = profile_run(args, args.exe)
    prof = read_run(out)
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
    check("(no PSG)" in prof["meta"]["sampling"]["note"],
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
    prof = read_run(out)
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


def seq_rows(shown, rank, marker, kind):
    return [d for d in shown.at(rank, "deps", marker) if d[1] == kind]


def seq_numbers(rows):
    return {n for d in rows for first, last in (d[8] if len(d) > 8 else [])
            for n in range(first, last + 1)}


def case_seqs(args):
    """Phases reusing one tag between the same ranks from different call
    sites: every send and receive row holds exactly its messages' numbers,
    so each receive row pairs with the right send rows; polling and one-sided
    synchronisation wait on the rank they wait for (programs/seqs.c)."""
    src = Source(args.exe)
    exe = build(args, args.exe)
    phases = {"a": (1, 5), "b": (6, 8), "c": (9, 12), "d": (13, 14)}
    sends = {"a": ["send_a"], "b": ["isend_b", "waitall_b"], "c": ["send_c"],
             "d": ["send_init_d", "wait_d"]}
    recvs = {"a": ["recv_a"], "b": ["irecv_b", "waitall_rb"], "c": ["irecv_c", "test_c"],
             "d": ["recv_init_d", "rwait_d"]}
    # Exact: every call recorded. Sampled: parameters of most calls skipped
    # after the first, numbering unchanged.
    for extra, exact in (([], True), (["--dep-sample", "1"], False)):
        out, _ = profile_run(args, exe, extra=extra)
        shown = Shown(args, out, src)
        how = "exact" if exact else "--dep-sample 1"
        for phase, (first, last) in phases.items():
            expect = set(range(first, last + 1))
            for rank, kind, markers in ((0, "send", sends[phase]), (1, "recv", recvs[phase])):
                for m in markers:
                    rows = seq_rows(shown, rank, m, kind)
                    check(rows and all(d[2] == 1 - rank and d[3] == 7 for d in rows),
                          "%s: rank %d @%s: one %s row with rank %d, tag 7: %s"
                          % (how, rank, m, kind, 1 - rank, rows))
                    got = seq_numbers(rows)
                    if exact:
                        check(got == expect and all(len(d[8]) == 1 for d in rows),
                              "%s: rank %d @%s numbers %s, expected %d-%d: %s"
                              % (how, rank, m, sorted(got), first, last, rows))
                    else:
                        check(first in got and got <= expect,
                              "%s: rank %d @%s numbers %s: within %d-%d, the first recorded"
                              % (how, rank, m, sorted(got), first, last))
        for rank, kind, m in ((0, "send", "send_other"), (1, "recv", "recv_other")):
            got = seq_numbers(seq_rows(shown, rank, m, kind))
            check(got == {1, 2} if exact else 1 in got and got <= {1, 2},
                  "%s: tag 8 is a channel of its own: rank %d @%s numbers %s"
                  % (how, rank, m, sorted(got)))
        if not exact:
            continue
        # More ranges than a row keeps: at most 8, disjoint and sorted, the
        # nearest merged, still covering every message of the row.
        got = seq_numbers(seq_rows(shown, 1, "alt_recv", "recv"))
        check(got == set(range(1, 21)), "rank 1 @alt_recv numbers %s" % sorted(got))
        for m, mine in (("alt_a", set(range(1, 20, 2))), ("alt_b", set(range(2, 21, 2)))):
            rows = seq_rows(shown, 0, m, "send")
            check(len(rows) == 1, "rank 0 @%s: one row: %s" % (m, rows))
            ranges = rows[0][8]
            flat = [n for q in ranges for n in q]
            check(len(ranges) == 8 and flat == sorted(flat) and
                  all(a[1] + 1 < b[0] for a, b in zip(ranges, ranges[1:])),
                  "rank 0 @%s: 8 disjoint sorted ranges: %s" % (m, ranges))
            got = seq_numbers(rows)
            check(mine <= got and got <= set(range(min(mine), max(mine) + 1)),
                  "rank 0 @%s: ranges %s cover %s within their span" % (m, ranges, sorted(mine)))
        # Pairing as the analyzer does it: overlapping ranges.
        for phase in phases:
            for m in recvs[phase]:
                mine = seq_numbers(seq_rows(shown, 1, m, "recv"))
                paired = {s for ph in phases for s in sends[ph]
                          if seq_numbers(seq_rows(shown, 0, s, "send")) & mine}
                check(paired == set(sends[phase]),
                      "rank 1 @%s pairs with %s, expected %s" % (m, sorted(paired),
                                                                 sorted(sends[phase])))
        # Polling: rank 1 polled with MPI_Test for 0.3 s while rank 0 slept;
        # the polls completed nothing, their time is wait on rank 0.
        polled = seq_rows(shown, 1, "test_c", "recv")
        waited = sum(d[7] for d in polled)
        check(waited >= 0.2, "rank 1: polling for rank 0's messages is wait on rank 0: "
              "%.3f s in %s" % (waited, polled))
        check(sum(d[5] for d in polled) == 4, "4 receives completed by MPI_Test: %s" % polled)
        check(all(d[7] == 0 for d in seq_rows(shown, 1, "irecv_c", "recv")),
              "the posting Irecv carries no wait")
        # One-sided: operations are edges to the target with count and bytes,
        # the flush is the waiting point.
        acc = [d for d in shown.at(0, "deps", "acc") if d[1] == "rma"]
        check([(d[2], d[5], d[6], d[7]) for d in acc] == [(1, 10, 80, 0)],
              "rank 0 @acc: 10 operations of 8 bytes to rank 1, no wait: %s" % acc)
        for m in ("flush", "flush_all"):
            rows = [d for d in shown.at(0, "deps", m) if d[1] == "rma"]
            check([(d[2], d[5]) for d in rows] == [(1, 1)],
                  "rank 0 @%s: one synchronisation row on rank 1: %s" % (m, rows))
        check(not [d for d in shown.at(0, "deps", "unlock_all") if d[1] == "rma"],
              "rank 0 @unlock_all: nothing was pending")


def case_bad_values(args):
    marker = tempfile.mktemp(prefix="scalana-not-started-")
    prof = [os.path.join(args.bin, "scalana"), "prof"]
    for extra, envvar, needle, accepted in (
            (["--hz", "0"], None, "SCALANA_HZ", "1..10000"),
            (["--sampler", "fast"], None, "SCALANA_SAMPLER", "auto|timer|perf|off|papi|itimer"),
            ([], ("SCALANA_SAMPLER", "bogus"), "SCALANA_SAMPLER", "auto|timer|perf|off|papi|itimer"),
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
    check(os.path.exists(os.path.join(out, PROFILE)), "first run wrote its profile")
    cmd = mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--", exe]
    p = run(cmd, expect_ok=False)
    check(p.returncode != 0 and "holds the profile of another run" in p.stderr,
          "second run into the same directory refused: %s" % p.stderr)
    p = run(mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--force",
                               "--", exe])
    check(os.path.exists(os.path.join(out, PROFILE)), "--force overwrites")


def case_experiment(args):
    """--experiment is kept in the profile's meta, and detect expects it."""
    exe = build(args, args.exe)
    runs = []
    for np in (1, args.np):
        out, _ = profile_run(args, exe, extra=["--experiment", "strong"], np=np)
        meta = read_run(out)["meta"]
        check(meta["config"].get("SCALANA_EXPERIMENT") == "strong",
              "meta keeps the experiment: %s" % meta["config"])
        runs.append(out)
    detect = [os.path.join(args.bin, "scalana"), "detect"]
    p = run(detect + runs)
    check("profiled as a strong scaling experiment" in p.stdout and
          "-> strong" in p.stdout, "detect expects strong scaling: %s" % p.stdout[:600])
    p = run(detect + ["--scaling", "weak"] + runs)
    check("scaling: weak" in p.stdout, "--scaling still wins: %s" % p.stdout[:400])


def case_show(args):
    src = Source(args.exe)
    out, _ = profile_run(args, build(args, args.exe))
    show = [os.path.join(args.bin, "scalana"), "show"]
    p = run(show + [out])
    check("cpu-timer" in p.stdout, "show prints the sampling source")
    check("== rank 0" in p.stdout and "dep" in p.stdout, "show prints per-rank rows:\n" + p.stdout)
    send = re.compile(r"\bMPI_Send \S*%s:%d in main\b" % (re.escape(src.name), src.line("send")))
    check(send.search(p.stdout), "show names the source line of MPI_Send:\n" + p.stdout)
    p = run(show + [out, "--rank", "1"])
    check("== rank 1" in p.stdout and "== rank 0" not in p.stdout, "--rank filters")
    p = run(show + ["/nonexistent/run"], expect_ok=False)
    check(p.returncode != 0 and "no such run directory" in p.stderr, "missing run: " + p.stderr)
    with open(os.path.join(out, PROFILE), "r+b") as f:
        data = f.read()
        f.seek(0)
        f.truncate()
        f.write(data[: len(data) // 2])
    p = run(show + [out], expect_ok=False)
    check(p.returncode != 0 and ("corrupt" in p.stderr or "truncated" in p.stderr),
          "truncated profile: " + p.stderr)


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


# ---------------------------------------------------------------- faults
#
# A run that ends abruptly must leave every rank's data readable, and the
# reports must say which ranks ended early, how, and which left nothing.
# Each case repeats a 4-rank run (tests/runtime/programs/faults.c: about a
# second of work, then one rank fails) --repeat times and needs all of them.

FAULT_RUNS = 10
VICTIM = 1
# case: (faults.c argument, errors key of the victim's end record or None for
# a snapshot, what the report says about the victim)
FAULTS = {
    "fault_abort": ("abort", "ended_by_MPI_Abort", "called MPI_Abort"),
    "fault_segv": ("segv", "ended_by_signal_fatal", "fatal signal SIGSEGV"),
    "fault_kill": ("kill", None, "no end recorded"),
    "fault_exit": ("exit", "ended_by_exit_without_finalize", "exit without MPI_Finalize"),
    "fault_term": ("term", None, None),  # SIGTERM to mpirun: every rank is a survivor
}
RANK_LINE = re.compile(r"\b(ranks?) ([\d,\-.]+) (ended before MPI_Finalize|left no data): (.*)$")


def expand_ranks(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def rank_endings(args, out):
    """What `scalana detect` says about each rank of the run in OUT:
    rank -> the reason it gives (ended early or left no data)."""
    p = run([os.path.join(args.bin, "scalana"), "detect", out])
    said = {}
    for line in p.stdout.splitlines():
        if not line.startswith("warning:"):
            continue
        m = RANK_LINE.search(line)
        if m:
            for r in expand_ranks(m.group(2)):
                check(r not in said, "rank %d named twice in the report:\n%s" % (r, p.stdout))
                said[r] = m.group(3) + ": " + m.group(4)
    return said, p.stdout


def fault_run(args, exe, how, stats):
    """One run of faults.c ending as HOW; returns why it failed, or None."""
    out = tempfile.mkdtemp(prefix="scalana-fault-")
    shutil.rmtree(out)
    cmd = mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--", exe, how,
                             "1.0", str(VICTIM)]
    if how == "term":
        # SIGTERM to mpirun once the ranks are working (rank 0 says so).
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env())
        line = p.stdout.readline()
        check("working" in line, "faults.c did not start working: %r" % line)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        rc = p.returncode
    else:
        r = run(cmd, expect_ok=False, timeout=60)
        rc, err = r.returncode, r.stderr
    check(rc != 0, "the job ends with a failure status (got %d)" % rc)
    check(not any(os.path.exists(os.path.join(out, f)) for f in (PROFILE, GATHERED)),
          "no complete profile")
    # Every rank's data is readable: the files and `scalana show`.
    shown = run([os.path.join(args.bin, "scalana"), "show", out, "--format", "json"])
    prof = json.loads(shown.stdout)
    check(prof["meta"]["complete"] is False, "the run is marked incomplete")
    ranks = {r["rank"]: r for r in prof["ranks"]}
    check(sorted(ranks) == list(range(args.np)),
          "every rank's data is there: ranks %s in %s" % (sorted(ranks), sorted(os.listdir(out))))
    said, report = rank_endings(args, out)
    stats["temporaries"] += len([f for f in os.listdir(out) if ".tmp." in f])
    for rank, r in ranks.items():
        where = "rank %d: " % rank
        check(r["wall_time"] > 0 and "vertices" in r, where + "data readable")
        ends = [k for k, v in r["errors"].items() if k.startswith("ended_by_") and v]
        check(rank in said, where + "the report names it:\n" + report)
        victim = rank == VICTIM and how != "term"  # with term, all are survivors
        if victim and FAULTS["fault_" + how][1]:
            key, text = FAULTS["fault_" + how][1:]
            check(ends == [key], where + "ended by %s: %s" % (key, r["errors"]))
            check(text in said[rank], where + "the report says %r: %s" % (text, said[rank]))
            if how == "segv":
                check(r.get("end_signal") == 11, where + "end_signal 11: %s" % r.get("end_signal"))
        elif victim:
            check(not ends and r.get("snapshot") is True,
                  where + "killed: its last snapshot, marked so: %s" % r)
            check("no end recorded" in said[rank], where + "the report says so: " + said[rank])
            stats["victim_snapshot"] += 1
        else:
            # A survivor: the launcher's SIGTERM lets it write its end record;
            # a SIGKILL without one (Open MPI sends it at once when it shuts
            # down) leaves its last snapshot. Either is its data, and said so.
            if ends:
                check(ends == ["ended_by_signal_term"] and r.get("end_signal") == 15,
                      where + "ended by the launcher's SIGTERM: %s %s"
                      % (r["errors"], r.get("end_signal")))
                check("SIGTERM" in said[rank], where + "the report says so: " + said[rank])
                # A full end record, or the premade one (its last snapshot
                # and the reason) when SIGKILL came before the full one.
                stats["survivor_reason_snapshot" if r.get("snapshot") else
                      "survivor_end_record"] += 1
            else:
                check(r.get("snapshot") is True, where + "no end record, so a snapshot: %s" % r)
                check("no end recorded" in said[rank], where + "the report says so: " + said[rank])
                stats["survivor_snapshot"] += 1
    shutil.rmtree(out, True)


def fault_case(args):
    how = FAULTS[args.case][0]
    exe = build(args, args.exe)
    stats = {"temporaries": 0, "victim_snapshot": 0, "survivor_end_record": 0,
             "survivor_reason_snapshot": 0, "survivor_snapshot": 0}
    failures = []
    for i in range(args.repeat):
        try:
            fault_run(args, exe, how, stats)
        except (Failure, subprocess.TimeoutExpired) as e:
            failures.append("run %d: %s" % (i + 1, e))
    print("%s: %d/%d runs with every rank's data readable and explained; survivors: %d full end "
          "records, %d snapshots with the reason, %d snapshots only; temporaries left by "
          "writers killed mid-write: %d"
          % (args.case, args.repeat - len(failures), args.repeat, stats["survivor_end_record"],
             stats["survivor_reason_snapshot"], stats["survivor_snapshot"], stats["temporaries"]))
    # The same as `name value` figures, for bench/fault_survival.
    for key in ("survivor_end_record", "survivor_reason_snapshot", "survivor_snapshot",
                "victim_snapshot", "temporaries"):
        print("%s %d" % (key, stats[key]))
    print("runs_failed %d" % len(failures))
    check(not failures, "%d of %d runs failed:\n%s" % (len(failures), args.repeat,
                                                      "\n".join(failures)))


for _name in FAULTS:
    globals()["case_" + _name] = fault_case


def case_snapshots(args):
    """Snapshots while the program runs (readable at any time, advancing), a
    rank killed before any snapshot when they are off (the report says it
    left no data), and a complete run that leaves profile.scalana alone."""
    exe = build(args, args.exe)
    out = tempfile.mkdtemp(prefix="scalana-snap-")
    shutil.rmtree(out)
    cmd = mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--", exe,
                             "term", "2.5"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())

    def samples():
        shown = run([os.path.join(args.bin, "scalana"), "show", out, "--format", "json"])
        prof = json.loads(shown.stdout)
        check(sorted(r["rank"] for r in prof["ranks"]) == list(range(args.np)),
              "every rank has a snapshot while running: %s" % os.listdir(out))
        check(all(r.get("snapshot") is True for r in prof["ranks"]), "marked as snapshots")
        return sum(r["samples"] for r in prof["ranks"])

    try:
        # 2.5 s of work after MPI_Init: the snapshots at 0, 1 and 2 s exist.
        check("working" in p.stdout.readline(), "faults.c started working")
        first = samples()
        # The next one is due 4 s after MPI_Init.
        later, deadline = first, time.time() + 20
        while later <= first and time.time() < deadline:
            time.sleep(0.5)
            later = samples()
        check(later > first, "a later snapshot holds more samples: %d, then %d" % (first, later))
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
    # Off: a rank killed before it wrote anything leaves no file, and the
    # report says which and why.
    out2, _ = profile_run(args, exe, extra=["--snapshot", "0"], expect_ok=False,
                          prog_args=["kill", "0.3", str(VICTIM)])
    check(not os.path.exists(os.path.join(out2, "rank-%d.json.gz" % VICTIM)),
          "no snapshots: the killed rank has no file: %s" % os.listdir(out2))
    said, report = rank_endings(args, out2)
    check("left no data" in said.get(VICTIM, ""), "the report says rank %d left no data:\n%s"
          % (VICTIM, report))
    # A complete run: the snapshots are gone, profile.scalana alone remains.
    out3, _ = profile_run(args, exe, prog_args=["finalize", "1.2"])
    check(sorted(os.listdir(out3)) == [".scalana-job", PROFILE],
          "a complete run leaves only its profile: %s" % sorted(os.listdir(out3)))
    prof = read_run(out3)
    check(prof["meta"]["complete"] and len(prof["ranks"]) == args.np and
          not any("snapshot" in r for r in prof["ranks"]), "complete profile, no snapshot marks")


# The node's snapshot container (docs/formats.md section 5): a header block,
# then per node-local index three slots (two snapshots, then the premade
# SIGTERM end record in two copies of half a slot), each record a 64-byte
# header and its payload.
CONTAINER = re.compile(r"^snapshots-(\d+)\.scs$")


def read_container(path):
    """Header fields and, per world rank, its records' headers (magic, rank,
    sequence, kind, active, length) as the runtime wrote them: slots 0 and
    1, then the two copies of the premade record."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    magic, version, header_size, leader, ranks, slot = struct.unpack_from("<8sIIIIQ", data, 0)
    check(magic == b"SCALSNP1" and version == 1, "%s: a container: %r" % (path, data[:16]))
    run_id = data[32:96].split(b"\0")[0].decode()
    world = struct.unpack_from("<%dI" % ranks, data, 104)
    out = {}
    for i, rank in enumerate(world):
        out[rank] = []
        for at in (0, slot, 2 * slot, 2 * slot + slot // 2):
            at += header_size + 3 * i * slot
            out[rank].append(struct.unpack_from("<IIQIIQ", data, at))
    return {"leader": leader, "ranks": list(world), "slot": slot, "run_id": run_id,
            "records": out}


def rank_pids(exe):
    """The processes running EXE (the ranks of a job of ours)."""
    pids = []
    real = os.path.realpath(exe)
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.path.realpath("/proc/%s/exe" % pid) == real:
                    pids.append(int(pid))
            except OSError:
                pass
    return pids


def start_working(args, exe, out, seconds="3"):
    """faults.c at args.np ranks, working until killed; returns the mpirun
    process once rank 0 says it works (its snapshots at 0, 1, 2 s taken)."""
    cmd = mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--", exe,
                             "term", seconds]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    check("working" in p.stdout.readline(), "faults.c started working")
    return p


def signal_ranks(exe, sig, expect):
    pids = rank_pids(exe)
    check(len(pids) == expect, "%d ranks running %s: %s" % (expect, exe, pids))
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def case_node_kill(args):
    """Every rank killed by SIGKILL after its first snapshots: the run
    directory holds one container for the node (no file per rank, no
    temporary) and `scalana show` reads every rank's last snapshot from it."""
    exe = build(args, args.exe)
    out = tempfile.mkdtemp(prefix="scalana-node-")
    shutil.rmtree(out)
    p = start_working(args, exe, out)
    try:
        during = sorted(os.listdir(out))
        check(during == [".scalana-job", "snapshots-0.scs"],
              "while running: one container, no rank file or temporary: %s" % during)
        # mpirun stopped meanwhile: once the first rank is gone it sends
        # SIGTERM to the others, and on a loaded host that can reach a rank
        # before this loop's SIGKILL does (its end would then be recorded).
        os.kill(p.pid, signal.SIGSTOP)
        signal_ranks(exe, signal.SIGKILL, args.np)
        deadline = time.time() + 60
        while rank_pids(exe) and time.time() < deadline:
            time.sleep(0.1)
    finally:
        os.kill(p.pid, signal.SIGCONT)
        p.communicate(timeout=60)
    left = sorted(os.listdir(out))
    check(left == [".scalana-job", "snapshots-0.scs"], "after SIGKILL: the container only: %s" % left)
    c = read_container(os.path.join(out, "snapshots-0.scs"))
    check(c["ranks"] == list(range(args.np)) and c["leader"] == 0,
          "one node: every rank in the container: %s" % c["ranks"])
    shown = json.loads(run([os.path.join(args.bin, "scalana"), "show", out, "--format",
                            "json"]).stdout)
    ranks = {r["rank"]: r for r in shown["ranks"]}
    check(sorted(ranks) == list(range(args.np)), "every rank's data read: %s" % sorted(ranks))
    for rank, r in ranks.items():
        check(r.get("snapshot") is True and r["samples"] > 0 and
              not any(k.startswith("ended_by_") for k in r["errors"]),
              "rank %d: its last snapshot, samples kept, no end: %s" % (rank, r["errors"]))
    said, report = rank_endings(args, out)
    check(all("no end recorded" in said.get(r, "") for r in range(args.np)),
          "the report says every rank was killed:\n" + report)


def case_node_term(args):
    """SIGTERM to every rank at once, as the launcher sends it: each rank's
    handler activates its premade end record in the container (one pwrite),
    then writes its full end record if it lives long enough. Every rank that
    got no full record has its premade record active, and the readers take
    it: its end is said to be SIGTERM. mpirun is stopped meanwhile: its
    SIGKILL, once a rank is gone, would otherwise end ranks on these 2
    oversubscribed cores before their handler ran at all (no handler can
    help those: bench/fault_survival counts them)."""
    exe = build(args, args.exe)
    out = tempfile.mkdtemp(prefix="scalana-node-term-")
    shutil.rmtree(out)
    p = start_working(args, exe, out)
    try:
        os.kill(p.pid, signal.SIGSTOP)
        signal_ranks(exe, signal.SIGTERM, args.np)
        deadline = time.time() + 60
        while rank_pids(exe) and time.time() < deadline:
            time.sleep(0.1)
        check(not rank_pids(exe), "every rank ended on SIGTERM")
    finally:
        os.kill(p.pid, signal.SIGCONT)
        p.communicate(timeout=60)
    names = os.listdir(out)
    check(not any(".tmp." in n for n in names), "no temporaries: %s" % names)
    full = {int(n[5:-8]) for n in names if re.match(r"^rank-\d+\.json\.gz$", n)}
    c = read_container(os.path.join(out, "snapshots-0.scs"))
    active = {rank for rank, recs in c["records"].items()
              if any(r[0] == 0x52435353 and r[3] == 2 and r[4] == 1 for r in recs[2:])}
    print("ranks with a full end record: %d, premade record active: %d, of %d"
          % (len(full), len(active), args.np))
    missing = sorted(set(range(args.np)) - full - active)
    check(not missing, "ranks with neither a full end record nor an active premade one: %s"
          % missing)
    # The handler's first act, before the full record: every rank's.
    check(active == set(range(args.np)), "the premade record activated on every rank: %s"
          % sorted(active))
    shown = json.loads(run([os.path.join(args.bin, "scalana"), "show", out, "--format",
                            "json"]).stdout)
    for r in shown["ranks"]:
        check(r["errors"].get("ended_by_signal_term") == 1 and r.get("end_signal") == 15,
              "rank %d ended by SIGTERM: %s" % (r["rank"], r["errors"]))
    check(len(shown["ranks"]) == args.np, "every rank read")
    # The premade records alone (full end records removed): read from the
    # container, the reason kept.
    for n in names:
        if n.startswith("rank-"):
            os.unlink(os.path.join(out, n))
    shown = json.loads(run([os.path.join(args.bin, "scalana"), "show", out, "--format",
                            "json"]).stdout)
    for r in shown["ranks"]:
        if r["rank"] in active:
            check(r["errors"].get("ended_by_signal_term") == 1 and r.get("snapshot") is True,
                  "rank %d: its premade record, read from the container: %s"
                  % (r["rank"], r["errors"]))


def case_stale(args):
    """Item 6, runtime side: --force leaves nothing of the previous run (its
    rank files, temporaries of killed writers, claims of killed launchers); a
    forked child that calls exit() writes nothing; profiles of other runs are
    refused."""
    exe = build(args, args.exe)
    prof = [os.path.join(args.bin, "scalana"), "prof"]
    for attempt in range(3):
        out, _ = profile_run(args, exe, expect_ok=False, prog_args=["abort", "0.5", str(VICTIM)])
        check(any(f.startswith("rank-") for f in os.listdir(out)), "the aborted run left rank files")
        # The last: the claim of a launcher that mpirun killed between
        # claiming the directory and giving up on it.
        for junk in ("rank-7.json.gz", "rank-2.json.gz.tmp.12345", "profile.json.gz.tmp.99",
                     "snapshots-9.scs",
                     PROFILE + ".partial",
                     ".scalana-job.claim.killed-job"):
            with open(os.path.join(out, junk), "wb") as f:
                f.write(b"stale")
        p = run(mpirun(args.np) + prof + ["-o", out, "--", exe, "finalize", "0.5"],
                expect_ok=False)
        check(p.returncode != 0 and "holds the profile of another run" in p.stderr,
              "refused without --force: %s" % p.stderr)
        run(mpirun(args.np) + prof + ["-o", out, "--force", "--", exe, "fork", "0.5"])
        left = sorted(os.listdir(out))
        check(left == [".scalana-job", PROFILE],
              "try %d: --force leaves only the new profile (no rank file of the old run or of a "
              "forked child, no temporary): %s" % (attempt + 1, left))
        shown = json.loads(run([os.path.join(args.bin, "scalana"), "show", out, "--format",
                                "json"]).stdout)
        check(shown["meta"]["complete"] and len(shown["ranks"]) == args.np, "the new run is whole")


def case_singleton(args):
    """`scalana prof` without an MPI launcher: Open MPI forks its daemon
    (orted) from MPI_Init; the daemon must run without the profiler."""
    exe = build(args, args.exe)
    out = tempfile.mkdtemp(prefix="scalana-single-")
    shutil.rmtree(out)
    cmd = [os.path.join(args.bin, "scalana"), "prof", "-v", "-o", out, "--", exe, "finalize", "2"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    daemons = {}
    deadline = time.time() + 20
    while p.poll() is None and time.time() < deadline and not daemons:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) != p.pid:
                    continue
                with open("/proc/%s/maps" % pid) as f:
                    maps = f.read()
                with open("/proc/%s/environ" % pid, "rb") as f:
                    environ = f.read().split(b"\0")
                with open("/proc/%s/comm" % pid) as f:
                    comm = f.read().strip()
            except (OSError, IndexError, ValueError):
                continue
            preload = [e for e in environ if e.startswith(b"LD_PRELOAD=")]
            daemons[comm] = ("libscalana-rt.so" in maps, preload)
        time.sleep(0.05)
    _, err = p.communicate(timeout=60)
    check(p.returncode == 0, "the singleton run succeeds: %s" % err)
    check(daemons, "the MPI library started a helper process (orted) from the program")
    for comm, (loaded, preload) in daemons.items():
        check(not loaded, "%s runs without the profiler loaded" % comm)
        check(not any(b"libscalana-rt" in e for e in preload),
              "%s does not inherit the profiler in LD_PRELOAD: %s" % (comm, preload))
    check(err.count("scalana: sampling") == 1 and "Forwarding signal" not in err,
          "only the program samples (one start line, no signal forwarded):\n" + err)
    check(sorted(os.listdir(out)) == [".scalana-job", PROFILE],
          "one profile: %s" % os.listdir(out))


def case_readonly(args):
    """A run directory that exists but cannot be written is refused before
    the program starts (status 2), not found out when it ends."""
    marker = tempfile.mktemp(prefix="scalana-not-started-")
    prof = [os.path.join(args.bin, "scalana"), "prof"]
    tried = 0
    setpriv = shutil.which("setpriv")
    if setpriv and os.geteuid() == 0:
        # As an unprivileged user (root writes anywhere): a directory of root's.
        d = tempfile.mkdtemp(prefix="scalana-ro-")
        os.chmod(d, 0o755)
        os.chmod(tempfile.gettempdir(), 0o755)
        p = run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] + prof +
                ["-o", d, "--", "touch", marker], expect_ok=False)
        check(p.returncode == 2 and "cannot write to the run directory" in p.stderr,
              "unwritable directory refused with status 2: %d %s" % (p.returncode, p.stderr))
        check(not os.path.exists(marker), "the program did not start")
        print("unwritable for its user: refused")
        tried += 1
    unshare = shutil.which("unshare")
    if unshare and os.geteuid() == 0:
        # As root, on a read-only mount of the directory, under mpirun.
        d = tempfile.mkdtemp(prefix="scalana-rofs-")
        script = ("mount --bind {d} {d} && mount -o remount,ro,bind {d} || exit 77; "
                  "exec {cmd}").format(d=d, cmd=" ".join(
                      mpirun(args.np) + prof + ["-o", d, "--", "touch", marker]))
        p = run([unshare, "-m", "sh", "-c", script], expect_ok=False)
        if p.returncode != 77:
            check(p.returncode != 0 and "cannot write to the run directory" in p.stderr and
                  "Read-only file system" in p.stderr,
                  "read-only file system refused: %d %s" % (p.returncode, p.stderr))
            check(not os.path.exists(marker), "the program did not start")
            print("read-only file system, under mpirun: refused")
            tried += 1
    check(tried > 0, "no way to make an unwritable directory here (needs setpriv or unshare)")


def case_two_runs(args):
    """Rank files of two runs (same binary and world size, other arguments)
    in one directory are refused, naming the odd file and its run id."""
    exe = build(args, args.exe)
    a, _ = profile_run(args, exe, expect_ok=False, prog_args=["exit", "0.3", "1"])
    b, _ = profile_run(args, exe, expect_ok=False, prog_args=["exit", "0.5", "0"])
    ids = {}
    for d in (a, b):
        # The rank that exits leaves its end record; the others theirs, or
        # their premade record in the node's container.
        check(any(f.startswith("rank-") for f in os.listdir(d)), "the run left rank files")
        ids[d] = {profile(os.path.join(d, f))["meta"]["run_id"]
                  for f in os.listdir(d) if f.startswith("rank-")}
        ids[d] |= {read_container(os.path.join(d, f))["run_id"]
                   for f in os.listdir(d) if CONTAINER.match(f)}
        check(len(ids[d]) == 1 and "" not in ids[d], "one run id in all its ranks: %s" % ids[d])
        with open(os.path.join(d, ".scalana-job")) as f:
            check("run " + next(iter(ids[d])) in f.read(), ".scalana-job names the run id")
    check(ids[a] != ids[b], "two runs, two run ids")
    shutil.copy(os.path.join(b, "rank-0.json.gz"), os.path.join(a, "rank-0.json.gz"))
    for tool in ("show", "detect"):
        p = run([os.path.join(args.bin, "scalana"), tool, a], expect_ok=False)
        check(p.returncode == 1 and "rank files of different runs: %s/rank-0.json.gz (run %s) not "
              "of run %s" % (a, next(iter(ids[b])), next(iter(ids[a]))) in p.stderr,
              "%s refuses the mixed directory: %d %s" % (tool, p.returncode, p.stderr))
    # The id the job is given is the one every rank writes.
    out, _ = profile_run(args, exe, expect_ok=False, prog_args=["exit", "0.3", "1"],
                         env=dict(env(), SCALANA_RUN_ID="nightly-42"))
    for f in os.listdir(out):
        if f.startswith("rank-"):
            check(profile(os.path.join(out, f))["meta"]["run_id"] == "nightly-42",
                  "SCALANA_RUN_ID honoured in " + f)
        if CONTAINER.match(f):
            check(read_container(os.path.join(out, f))["run_id"] == "nightly-42",
                  "SCALANA_RUN_ID honoured in " + f)


def case_full_disk(args):
    """A full file system: the writer says so, leaves no temporary, and the
    readers say the ranks could not write, not that they were killed."""
    exe = build(args, args.exe)
    mnt = tempfile.mkdtemp(prefix="scalana-full-")
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                                            mnt]).returncode != 0:
        print("SKIPPED: mounting a small tmpfs needs root (mount -t tmpfs) and is refused here")
        return
    try:
        st = os.statvfs(mnt)
        with open(os.path.join(mnt, "filler"), "wb") as f:
            f.write(b"\0" * (st.f_bavail * st.f_frsize - 4096))  # one block left
        out = os.path.join(mnt, "run")
        p = run(mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out, "--",
                                   exe, "finalize", "0.3"], expect_ok=False)
        check("could not write: no space left" in p.stderr, "the write error says why: %s" % p.stderr)
        left = sorted(os.listdir(out))
        check(not any(".tmp." in f for f in left), "no temporaries left: %s" % left)
        check(any(f.endswith(".unwritten.ENOSPC") for f in left), "ranks marked: %s" % left)
        for tool in ("show", "detect"):
            p = run([os.path.join(args.bin, "scalana"), tool, out], expect_ok=False)
            text = p.stdout + p.stderr
            check("could not write: no space left on the device" in text and
                  "SIGKILL" not in text, "%s says the ranks could not write: %s" % (tool, text))
    finally:
        subprocess.run(["umount", mnt])
        os.rmdir(mnt)


from collective_cases import case_collective, case_collective_fallback  # noqa: E402
from claim_cases import case_one_job  # noqa: E402
from option_cases import case_strict_values  # noqa: E402
from structure_cases import case_structure_note  # noqa: E402
from time_cases import (case_mpiio, case_mpiio_scaling, case_posix_io, case_posix_io_scaling,  # noqa: E402
                        case_time_off_cpu, case_time_shared_cores, case_time_split)

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
    ap.add_argument("--repeat", type=int, default=FAULT_RUNS, help="runs of each fault case")
    args = ap.parse_args()
    global BIN
    BIN = args.bin
    try:
        CASES[args.case](args)
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    print("ok: %s at %d ranks" % (args.case, args.np))


main()
