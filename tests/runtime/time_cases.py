"""Cases of test_runtime.py for the time accounting (docs/runtime.md, "Time
accounting"; docs/detect.md, "Time accounting"): the kernel's split of each
rank's wall time and the report's, held to what the program measures itself
(programs/time_split.c prints its compute CPU and wall time and its sleep).

The helpers (run, check, build, ...) are test_runtime.py's, which runs as
__main__ and imports this file."""
import json
import os
import re

import __main__ as rt

# The tolerance of every comparison with the program's own figures: 10% of
# the figure, and 20 ms for clock reads at the edges of the program's spans.
REL, ABS = 0.10, 0.02


def own_figures(stdout):
    rows = {}
    for m in re.finditer(r"rank (\d+) compute_cpu ([\d.]+) compute_wall ([\d.]+) sleep ([\d.]+)",
                         stdout):
        rows[int(m.group(1))] = {"cpu": float(m.group(2)), "compute_wall": float(m.group(3)),
                                 "sleep": float(m.group(4))}
    return rows


def time_run(args, np, prog_args):
    exe = rt.build(args, args.exe)
    out, p = rt.profile_run(args, exe, np=np, prog_args=prog_args)
    own = own_figures(p.stdout)
    rt.check(sorted(own) == list(range(np)), "every rank printed its figures: %s" % p.stdout)
    ranks = {r["rank"]: r for r in rt.read_run(out)["ranks"]}
    return out, own, ranks


def check_rank_split(r, own):
    """The kernel's account of rank R's main thread against its own clocks."""
    wall, on_cpu, delay = r["wall_time"], r.get("on_cpu", 0), r.get("run_delay", 0)
    rt.check(on_cpu > 0, "rank %d: on_cpu measured: %s" % (r["rank"], r))
    blocked = wall - on_cpu - delay
    rt.check(on_cpu >= own["cpu"] * (1 - REL) - ABS,
             "rank %d: on a CPU %.3f s, the program computed %.3f CPU s" %
             (r["rank"], on_cpu, own["cpu"]))
    rt.check(on_cpu <= r["cpu_time"] + ABS,
             "rank %d: the main thread on a CPU %.3f s, more than its process's %.3f CPU s" %
             (r["rank"], on_cpu, r["cpu_time"]))
    rt.check(blocked >= own["sleep"] * (1 - REL) - ABS,
             "rank %d: blocked %.3f s, the program slept %.3f s" %
             (r["rank"], blocked, own["sleep"]))
    # While it computes, a rank is on a CPU or runnable: its own wall time
    # there less its CPU time is run delay the kernel must have counted.
    waited = own["compute_wall"] - own["cpu"]
    rt.check(delay >= waited * (1 - REL) - ABS,
             "rank %d: runnable but not running %.3f s, the program's compute took %.3f s "
             "of wall for %.3f CPU s" % (r["rank"], delay, own["compute_wall"], own["cpu"]))
    return blocked


def detect_time(args, out):
    p = rt.run([os.path.join(args.bin, "scalana"), "detect", "--format", "json", out])
    return json.loads(p.stdout)["runs"][-1]["time"]


def case_time_split(args):
    # Compute, then sleep: the sleep is blocked time, the compute on a CPU.
    np = args.np
    out, own, ranks = time_run(args, np, ["0.4", "0.5"])
    for rank, r in ranks.items():
        check_rank_split(r, own[rank])
    t = detect_time(args, out)
    walls = [ranks[k]["wall_time"] for k in ranks]
    lo = min(own[k]["cpu"] / ranks[k]["wall_time"] for k in ranks)
    hi = max(own[k]["cpu"] / ranks[k]["wall_time"] for k in ranks)
    comp = t["computation"]["median"]
    # Computation is the sampled CPU outside MPI calls: the compute loop and
    # the little before MPI_Init.
    rt.check(lo * (1 - REL) - 0.02 <= comp <= hi * (1 + REL) + 0.02,
             "report: computation %.3f of wall, the program computed %.3f-%.3f" % (comp, lo, hi))
    sleep_share = min(own[k]["sleep"] / ranks[k]["wall_time"] for k in ranks)
    rt.check(t["not_placed"]["median"] >= sleep_share * (1 - REL),
             "report: not placed %.3f of wall, the program slept %.3f of it" %
             (t["not_placed"]["median"], sleep_share))
    text = rt.run([os.path.join(args.bin, "scalana"), "detect", out]).stdout
    rt.check(re.search(r"^hint: [\d.]+% of a rank's wall time \(median\) is not placed: .*"
                       r"`scalana prof --off-cpu on`", text, re.M),
             "the report says how to place the sleep:\n%s" % text[:2000])
    rt.check(t["kernel_ranks"] == np and t["ranks"] == np, "report: every rank timed: %s" % t)
    rt.check(abs(t["median_wall_seconds"] - sorted(walls)[len(walls) // 2]) < 1e-3,
             "report: median wall %s of %s" % (t["median_wall_seconds"], walls))


def case_time_off_cpu(args):
    # Under the perf source the off-CPU source places the sleep on the code
    # that slept (docs/runtime.md, "Time off the CPU"), as blocked time, and
    # the report's split counts it as such instead of "not placed".
    np = args.np
    exe = rt.build(args, args.exe)
    out, p = rt.profile_run(args, exe, extra=["--off-cpu", "on"], np=np,
                            prog_args=["0.3", "0.5"])
    own = own_figures(p.stdout)
    rt.check(sorted(own) == list(range(np)), "every rank printed its figures: %s" % p.stdout)
    rt.check("and time off the CPU" in p.stderr, "prof says the source runs: %s" % p.stderr)
    shown = json.loads(rt.run([os.path.join(args.bin, "scalana"), "show", "--format", "json",
                               out]).stdout)
    resolved = shown["resolved"]
    for r in shown["ranks"]:
        rows = r.get("off_cpu", [])
        where = {}
        for ctx, thread, switches, blocked, delay in rows:
            if thread == 0:
                fn = (resolved[ctx] or {}).get("function", "(outside)")
                where[fn] = where.get(fn, 0) + blocked
        slept = own[r["rank"]]["sleep"]
        rt.check(abs(where.get("rest", 0) - slept) <= REL * slept + ABS,
                 "rank %d: %.3f s blocked placed in rest(), the program slept %.3f s: %s" %
                 (r["rank"], where.get("rest", 0), slept, where))
        rt.check(sum(where.values()) <= r["wall_time"] - r.get("on_cpu", 0) + ABS,
                 "rank %d: blocked %.3f s placed, the kernel's account allows %.3f s" %
                 (r["rank"], sum(where.values()), r["wall_time"] - r.get("on_cpu", 0)))
    t = detect_time(args, out)
    sleep_share = min(own[r["rank"]]["sleep"] / r["wall_time"] for r in shown["ranks"])
    rt.check(t["off_cpu"]["median"] >= sleep_share * (1 - REL),
             "report: blocked off the CPU %.3f of wall, the program slept %.3f of it" %
             (t["off_cpu"]["median"], sleep_share))
    rt.check(t["not_placed"]["median"] <= 0.05,
             "report: not placed %.3f of wall, at most 5%% once the sleep is placed: %s" %
             (t["not_placed"]["median"], t))
    text = rt.run([os.path.join(args.bin, "scalana"), "detect", out]).stdout
    rt.check(re.search(r"^time: .*blocked off the CPU [\d.]+%", text, re.M),
             "the time line names the blocked time:\n%s" % text[:2000])
    rt.check("--off-cpu on" not in text, "no hint to turn on what ran:\n%s" % text[:2000])


def case_time_shared_cores(args):
    # More ranks than cores, all computing at once: each waits for a core
    # for most of its compute, and the report says so before any cause.
    np = args.np
    cores = os.cpu_count() or 1
    out, own, ranks = time_run(args, np, ["0.3", "0"])
    for rank, r in ranks.items():
        check_rank_split(r, own[rank])
    p = rt.run([os.path.join(args.bin, "scalana"), "detect", out])
    head = p.stdout.split("== Root causes")[0]
    t = detect_time(args, out)
    if np > cores:
        rt.check(t["shared_cores"] and t["max_ranks_per_host"] == np and t["cores"] == cores,
                 "JSON: shared cores, %d ranks on %d cores: %s" % (np, cores, t))
        m = re.search(r"^shared cores: %d ranks on %d cores: ranks runnable but not running "
                      r"([\d.]+)%% of their wall time" % (np, cores), head, re.M)
        rt.check(m, "the report names the shared cores before any cause:\n%s" % head)
        rt.check(abs(float(m.group(1)) / 100 - t["run_delay"]["median"]) < 0.001,
                 "text and JSON agree: %s vs %s" % (m.group(1), t["run_delay"]))
        lines = head.splitlines()
        rt.check(lines[3].startswith("shared cores:"),
                 "the shared cores are the report's first line after the runs:\n%s" % head)
    else:
        rt.check(t["cores"] == cores, "JSON: the host's cores: %s" % t)


def io_run(args, np, target, kib):
    """The I/O program profiled at NP ranks writing TARGET (beside the
    binary), KIB per rank per step; returns the run and each rank's own
    (seconds, bytes) of I/O."""
    exe = rt.build(args, args.exe)
    target = os.path.join(os.path.dirname(exe), target)
    out, p = rt.profile_run(args, exe, np=np, prog_args=[target, "0.2", str(kib)])
    own = {}
    for m in re.finditer(r"rank (\d+) io ([\d.]+) bytes (\d+)", p.stdout):
        own[int(m.group(1))] = (float(m.group(2)), int(m.group(3)))
    rt.check(sorted(own) == list(range(np)), "every rank printed its I/O: %s" % p.stdout)
    return out, own


def mpiio_run(args, np):
    return io_run(args, np, "mpiio_grow.out", 1024)


def case_mpiio(args):
    # MPI-IO collectives are timed with their bytes and recorded as
    # collectives over the file's group; the time split counts them as I/O.
    np = args.np
    out, own = mpiio_run(args, np)
    doc = rt.read_run(out)
    ctx_op = {}
    for r in doc["ranks"]:
        for row in r["mpi"]:
            if len(row) == 5:
                ctx_op[row[0]] = row[4]
    for r in doc["ranks"]:
        io_s, nbytes = own[r["rank"]]
        rows = {row[4]: row for row in r["mpi"] if len(row) == 5}
        w = rows.get("MPI_File_write_at_all")
        rt.check(w and w[1] == 4 and w[3] == nbytes,
                 "rank %d: MPI_File_write_at_all 4 calls, %d bytes: %s" % (r["rank"], nbytes, w))
        timed = sum(rows[op][2] for op in ("MPI_File_write_at_all", "MPI_File_sync") if op in rows)
        rt.check(abs(timed - io_s) <= 0.2 * io_s + ABS,
                 "rank %d: write and sync timed %.3f s, the program measured %.3f s" %
                 (r["rank"], timed, io_s))
        colls = [d for d in r["deps"]
                 if d[1] == "coll" and ctx_op.get(d[0]) == "MPI_File_write_at_all"]
        rt.check(len(colls) == 1 and doc["comms"][colls[0][4]] == list(range(np)),
                 "rank %d: the collective write is a collective over all %d ranks: %s" %
                 (r["rank"], np, colls))
    t = detect_time(args, out)
    share = min(own[r["rank"]][0] / r["wall_time"] for r in doc["ranks"])
    rt.check(t["io"]["median"] >= share * 0.8,
             "report: I/O %.3f of wall, the program measured %.3f" % (t["io"]["median"], share))


def case_mpiio_scaling(args):
    # The write grows with the ranks (weak scaling otherwise): the report's
    # first cause is the I/O line, called I/O.
    runs = [mpiio_run(args, np)[0] for np in (1, 2, 4)]
    p = rt.run([os.path.join(args.bin, "scalana"), "detect", "--format", "json"] + runs)
    causes = json.loads(p.stdout)["root_causes"]
    src = rt.Source(args.exe)
    rt.check(causes and causes[0]["io"] and
             causes[0]["line"] in (src.line("write"), src.line("sync")),
             "the first cause is the write or its sync, as I/O: %s" % causes[:2])
    text = rt.run([os.path.join(args.bin, "scalana"), "detect"] + runs).stdout
    rt.check(re.search(r"^#1  io at \S+:(%d|%d)  \(main\)" % (src.line("write"), src.line("sync")),
                       text, re.M) and "I/O that no computation explains" in text,
             "the text names it I/O:\n%s" % text[:3000])


def posix_run(args, np):
    return io_run(args, np, "posix_gather_write.np%d.out" % np, 2048)


def case_posix_io(args):
    # write(2) and fsync(2) from the program's code are timed with their
    # bytes at their own lines; stdio's writes and the MPI library's are not.
    np = args.np
    out, own = posix_run(args, np)
    doc = rt.read_run(out)
    for r in doc["ranks"]:
        io_s, nbytes = own[r["rank"]]
        rows = {row[4]: row for row in r["mpi"] if len(row) == 5}
        posix = {op: row for op, row in rows.items() if not op.startswith("MPI_")}
        if r["rank"] != 0:
            rt.check(not posix, "rank %d made no POSIX I/O call of its own: %s" % (r["rank"], posix))
            continue
        w, s = posix.get("write"), posix.get("fsync")
        rt.check(w and w[3] == nbytes and w[1] >= 4 and s and s[1] == 4 and set(posix) ==
                 {"write", "fsync"},
                 "rank 0: write with the %d bytes written, fsync 4 calls, nothing else: %s" %
                 (nbytes, posix))
        timed = w[2] + s[2]
        rt.check(abs(timed - io_s) <= 0.2 * io_s + ABS,
                 "rank 0: write and fsync timed %.3f s, the program measured %.3f s" %
                 (timed, io_s))
    t = detect_time(args, out)
    rt.check(t["io"]["max"] >= 0.8 * own[0][0] and t["io"]["max_rank"] == 0,
             "report: rank 0's I/O %.3f s of wall is its write and fsync (%.3f s): %s" %
             (t["io"]["max"], own[0][0], t["io"]))


def case_posix_io_scaling(args):
    # Rank 0's write grows with the ranks and the others wait for it: the
    # first cause is the write or its fsync, as I/O, with its measured time.
    runs, owns = [], []
    for np in (1, 2, 4):
        out, own = posix_run(args, np)
        runs.append(out)
        owns.append(own)
    p = rt.run([os.path.join(args.bin, "scalana"), "detect", "--format", "json"] + runs)
    causes = json.loads(p.stdout)["root_causes"]
    src = rt.Source(args.exe)
    lines = (src.line("write"), src.line("sync"))
    rt.check(causes and causes[0]["io"] and causes[0]["line"] in lines and
             causes[0]["culprit_rank"] == 0,
             "the first cause is rank 0's write or fsync, as I/O: %s" % causes[:2])
    rt.check(causes[0]["cost_seconds"] >= 0.3 * owns[-1][0][0],
             "its cost %.3f s is the I/O's, not its CPU samples' (the program measured %.3f s)" %
             (causes[0]["cost_seconds"], owns[-1][0][0]))
    # The barrier's waits are the write's: traced to it, not a cause of their
    # own that "no computation explains".
    rt.check(any(c["line"] in lines and c["waiting_ranks"] >= 1 and c["waits_caused"] > 0
                 for c in causes),
             "the other ranks' waits traced to the write: %s" % causes[:2])
    barrier = [c for c in causes if c["line"] == src.line("barrier")]
    rt.check(not barrier, "the barrier is explained by the write: %s" % barrier)
    text = rt.run([os.path.join(args.bin, "scalana"), "detect"] + runs).stdout
    rt.check(re.search(r"^#1  io at \S+:(%d|%d)  \(main\)" % lines, text, re.M) and
             "I/O of the rank's own" in text,
             "the text names it I/O:\n%s" % text[:3000])
