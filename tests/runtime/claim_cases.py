"""Cases of test_runtime.py for the claim of a run directory by one job
(runtime/run_dir_claim.cpp, docs/runtime.md "The run directory"): a second
job into a directory a running job holds is refused before its program
starts, --force or not, and the first job's profile stays whole; a claim
of a job that has ended is taken over (with --force when it left a
profile); the ranks of two jobs started at once never share a directory.

The helpers (run, check, build, ...) are test_runtime.py's, which runs as
__main__ and imports this file."""
import json
import os
import socket
import subprocess
import tempfile
import time

import __main__ as rt

JOB_FILE = ".scalana-job"


def job_file(out):
    with open(os.path.join(out, JOB_FILE)) as f:
        return f.read()


def run_line(text):
    return [l[4:] for l in text.splitlines() if l.startswith("run ")]


def prof(args, out, extra=(), np=None):
    return rt.mpirun(np or args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out] + \
        list(extra) + ["--"]


def shown(args, out):
    return json.loads(rt.run([os.path.join(args.bin, "scalana"), "show", out, "--format",
                              "json"]).stdout)


def check_whole(args, out, run_id, what):
    left = sorted(os.listdir(out))
    rt.check(left == [JOB_FILE, rt.PROFILE], "%s: the directory holds one profile: %s" % (what, left))
    s = shown(args, out)
    rt.check(s["meta"]["complete"] and len(s["ranks"]) == args.np,
             "%s: the profile is whole: %d ranks" % (what, len(s["ranks"])))
    rt.check(s["meta"]["run_id"] == run_id and run_line(job_file(out)) == [run_id],
             "%s: the profile and %s name one run, %s: %s" % (what, JOB_FILE, run_id, s["meta"]["run_id"]))


def start_long_job(args, exe, out, seconds, until=None):
    """Job A, running for SECONDS, or until the file UNTIL exists; returned
    once its program passed MPI_Init (the job file names its run)."""
    env = rt.env()
    if until:
        env["FAULTS_UNTIL"] = until
    a = subprocess.Popen(prof(args, out) + [exe, "finalize", str(seconds)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and a.poll() is None:
        if os.path.exists(os.path.join(out, JOB_FILE)) and run_line(job_file(out)):
            return a
        time.sleep(0.05)
    rt.check(False, "job A did not start: %s" % (a.communicate()[1] if a.poll() is not None else ""))


def case_one_job(args):
    exe = rt.build(args, args.exe)
    out = tempfile.mkdtemp(prefix="scalana-one-job-")
    # 1. A runs; B, started into its directory, is refused: by the launcher
    # (status 2 from `scalana prof`, non-zero from mpirun), --force or not.
    # A runs until told (a file beside its directory), however long the
    # attempts below take on a loaded machine.
    stop = out + ".stop"
    a = start_long_job(args, exe, out, 600, until=stop)
    record = job_file(out)
    job_a = record.splitlines()[0]
    # A's own files: it writes snapshots while it runs (every few seconds),
    # which B's attempts must not be blamed for.
    def not_a_snapshot(names):
        return sorted(n for n in names if not n.startswith("snapshots-"))
    before = not_a_snapshot(os.listdir(out))
    for extra in ([], ["--force"], ["-f"]):
        p = rt.run(prof(args, out, extra) + [exe, "finalize", "0.3"], expect_ok=False)
        rt.check(p.returncode != 0 and "is in use by job %s (host " % job_a in p.stderr and
                 "started " in p.stderr and "which is still running" in p.stderr and
                 "--force never takes" in p.stderr,
                 "B %s refused, naming job A and its start: %d %s" % (extra, p.returncode, p.stderr))
        print("B %s into A's directory: mpirun status %d: %s" % (
            extra, p.returncode, p.stderr.splitlines()[0]))
    # The launcher alone: status 2.
    p = rt.run([os.path.join(args.bin, "scalana"), "prof", "-o", out, "--force", "--", "true"],
               expect_ok=False)
    rt.check(p.returncode == 2 and "is in use by job " + job_a in p.stderr,
             "the launcher alone: status 2: %d %s" % (p.returncode, p.stderr))
    # Without the launcher (the library preloaded, SCALANA_OUTPUT set): the
    # program is never stopped; it runs unprofiled, and says why.
    lib = os.path.join(args.bin, "..", "lib", "libscalana-rt.so")
    p = rt.run(rt.mpirun(args.np) + ["-x", "LD_PRELOAD=" + lib, "-x", "SCALANA_OUTPUT=" + out,
                                     "-x", "SCALANA_FORCE=1", exe, "finalize", "0.3"],
               expect_ok=False)
    rt.check(p.returncode == 0 and "this run is not profiled (the program runs on)" in p.stderr and
             "is in use by job " + job_a in p.stderr,
             "without the launcher: the program runs to its end, unprofiled: %d %s"
             % (p.returncode, p.stderr))
    rt.check(a.poll() is None, "A still ran while B was refused")
    rt.check(job_file(out) == record and not_a_snapshot(os.listdir(out)) == before,
             "B changed nothing of A's: %s" % os.listdir(out))
    open(stop, "w").close()
    _, err = a.communicate(timeout=120)
    rt.check(a.returncode == 0, "A ends normally: %d %s" % (a.returncode, err))
    check_whole(args, out, run_line(record)[0], "A")
    # 2. A has ended: its profile is refused without --force, with the job
    # named; taken with it.
    p = rt.run(prof(args, out) + [exe, "finalize", "0.3"], expect_ok=False)
    rt.check(p.returncode != 0 and "holds the profile of another run (job %s" % job_a in p.stderr and
             "which has ended" in p.stderr, "ended A's profile refused: %s" % p.stderr)
    rt.run(prof(args, out, ["--force"]) + [exe, "finalize", "0.3"])
    rt.check(job_file(out).splitlines()[0] != job_a, "B's job now holds the directory")
    check_whole(args, out, run_line(job_file(out))[0], "B with --force")
    # 3. Two jobs started at once into a new directory: one runs, the
    # other is refused, whichever wins.
    for attempt in range(3):
        d = tempfile.mkdtemp(prefix="scalana-race-")
        os.rmdir(d)
        jobs = [subprocess.Popen(prof(args, d) + [exe, "finalize", "1"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=rt.env()) for _ in range(2)]
        ends = [(j.communicate(timeout=120)[1], j.returncode) for j in jobs]
        ok = [rc == 0 for _, rc in ends]
        rt.check(sum(ok) == 1, "try %d: one job of two runs: %s" % (attempt + 1, ends))
        loser = ends[ok.index(False)][0]
        rt.check("is in use by job" in loser or "holds the profile of another run" in loser,
                 "try %d: the other is refused: %s" % (attempt + 1, loser))
        check_whole(args, d, run_line(job_file(d))[0], "race %d" % (attempt + 1))
    # 4. Claims left by jobs that are gone, and one that cannot be judged.
    case_left_claims(args, exe)
    # 5. The launcher put before mpirun holds the claim itself: the ranks,
    # of another job id, descend from it and are its job.
    d = tempfile.mkdtemp(prefix="scalana-outer-")
    rt.run([os.path.join(args.bin, "scalana"), "prof", "-o", d, "--"] + rt.mpirun(args.np) +
           [exe, "finalize", "0.3"])
    check_whole(args, d, run_line(job_file(d))[0], "scalana prof -- mpirun")


def fake_record(out, host, boot, pid, lock, extra=""):
    with open(os.path.join(out, JOB_FILE), "w") as f:
        f.write("gone-job\nhost %s\nboot %s\npid %d\npid_start 1\nstart 2026-01-01T00:00:00Z\n"
                "lock %d\nready\nrun gone-run\n%s" % (host, boot, pid, lock, extra))


def case_left_claims(args, exe):
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot = f.read().strip()
    host = socket.gethostname()
    dead = subprocess.Popen(["true"])
    dead.wait()
    # This machine, its process gone, no profile: taken without --force.
    out = tempfile.mkdtemp(prefix="scalana-left-")
    fake_record(out, host, boot, dead.pid, 1)
    rt.run(prof(args, out) + [exe, "finalize", "0.3"])
    check_whole(args, out, run_line(job_file(out))[0], "a dead job's claim")
    # Another host whose lock is free here: ended; its profile needs --force.
    fake_record(out, "node-17", "other-boot", 4242, 1)
    p = rt.run(prof(args, out) + [exe, "finalize", "0.3"], expect_ok=False)
    rt.check(p.returncode != 0 and "job gone-job (host node-17, pid 4242, started "
             "2026-01-01T00:00:00Z), which has ended" in p.stderr, "ended elsewhere: %s" % p.stderr)
    rt.run(prof(args, out, ["--force"]) + [exe, "finalize", "0.3"])
    check_whole(args, out, run_line(job_file(out))[0], "another host's ended claim, --force")
    # Another host that held no lock: whether it runs cannot be told here,
    # so even --force is refused; the host's name, hostile, is echoed escaped.
    fake_record(out, "node\x1b[2J\nforged", "other-boot", 4242, 0)
    p = rt.run(prof(args, out, ["--force"]) + [exe, "finalize", "0.3"], expect_ok=False)
    rt.check(p.returncode != 0 and "cannot be told from this host" in p.stderr and
             "host node\\x1b[2J" in p.stderr and "\x1b" not in p.stderr and
             not any(l.startswith("forged") for l in p.stderr.splitlines()),
             "a claim that cannot be judged is refused, --force or not: %r" % p.stderr)
