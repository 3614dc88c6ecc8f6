#!/usr/bin/env python3
"""Hostile run directories for `scalana show`, `scalana detect` and `scalana psg`.

Stages (each a ctest entry; `setup` is the fixture of the others):

  setup     build examples/fig3 with scalana-cc and profile it at 1 and 2 ranks
  sizes     numbers that do not fit: huge world_size, rank 5 of 4, negative
            counts, hz 1e-300, peers and members outside the world
  special   FIFOs, devices, a gzip bomb, a 3 GiB sparse binary
  stale     per-rank files of another build or world size, or renamed
  terminal  escape sequences and CR/LF in strings of the profile, in file and
            directory names: escaped in every text output
  messages  link loops, zlib/raw/truncated/corrupt data: each says what it is
  options   numeric options that are not finite or out of range: exit 2
  impossible numbers the profile's own numbers contradict, duplicate keys;
            numbers past what the run's wall clock allows (a wall time of 1e8 s,
            CPU time 1e8 s, 2^64-1 calls or bytes), with the file's CRC right
  twice     one run counted twice: a run directory given twice, through a
            symbolic link or spelled otherwise, and two directories of one
            run id: refused naming both arguments
  echo      values echoed in messages (newlines, ESC, 10 KB) by prof, detect,
            show, psg, export, the wrappers and the runtime: escaped and cut
  binary    the binary the profile names, corrupted: a section header past the
            end of the file, flipped bits in its DWARF sections. `show`,
            `detect` and `export` finish, saying which binary could not be
            read and how much could not be placed

Every command runs with a timeout and an address-space limit and must end
with the expected exit status: 1 and the expected words on stderr for bad
input (never a hang, a signal, or a peak RSS above MAX_RSS_MB).
"""
import argparse
import gzip
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

TIMEOUT = 30           # seconds per command; a FIFO read would block forever
ADDRESS_SPACE = 4 << 30  # RLIMIT_AS: an attempt at 6 GB fails instead of swapping
MAX_RSS_MB = 512       # what any of these commands may use at its peak
SCALES = (1, 2)


class Tool:
    def __init__(self, args):
        self.stage = args.stage
        self.work = os.path.abspath(args.work_dir)
        self.bin_dir = args.bin_dir
        self.source_dir = args.source_dir
        self.mpirun = args.mpirun
        self.scalana = os.path.join(args.bin_dir, "scalana")
        self.binary = os.path.join(self.work, "fig3", "fig3")
        self.cases = os.path.join(self.work, "cases")
        self.failures = []
        self.checks = 0

    def base(self, np):
        return os.path.join(self.work, "runs", f"np{np}")

    # --- running the tools ------------------------------------------------

    def run(self, args, cwd=None, address_space=ADDRESS_SPACE, env=None):
        """Runs a command under the limits: (status, stdout, stderr, seconds, peak RSS MB).

        Status is the exit code, or -SIGNAL; "timeout" if it was killed for
        taking longer than TIMEOUT."""
        def limits():
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        out_path = os.path.join(self.work, self.stage + ".stdout")
        err_path = os.path.join(self.work, self.stage + ".stderr")
        start = time.time()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    preexec_fn=limits, cwd=cwd, env=env)
            status, rss_kb = None, 0
            while status is None:
                pid, wstatus, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    rss_kb = usage.ru_maxrss
                    status = (-os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus)
                              else os.WEXITSTATUS(wstatus))
                elif time.time() - start > TIMEOUT:
                    proc.kill()
                    os.wait4(proc.pid, 0)
                    status = "timeout"
                else:
                    time.sleep(0.01)
            proc.returncode = 0  # reaped here; keep Popen from waiting again
        with open(out_path, "rb") as f:
            stdout = f.read()
        with open(err_path, "rb") as f:
            stderr = f.read()
        return status, stdout, stderr, time.time() - start, rss_kb / 1024

    def check(self, name, args, status=1, stderr_has=(), stdout_has=(), verify=None, cwd=None,
              address_space=ADDRESS_SPACE, env=None):
        """One case: STATUS, phrases on stderr/stdout, VERIFY(stdout, stderr) -> error or None."""
        self.checks += 1
        got, out, err, secs, rss = self.run(args, cwd, address_space, env)
        self.last_seconds = secs
        text_out = out.decode("utf-8", "replace")
        text_err = err.decode("utf-8", "replace")
        problems = []
        if got == "timeout":
            problems.append(f"hung: killed after {TIMEOUT} s")
        elif isinstance(got, int) and (got < 0 or got >= 128):
            problems.append(f"crashed: status {got}")
        elif got != status:
            problems.append(f"exit status {got}, expected {status}")
        if rss > MAX_RSS_MB:
            problems.append(f"peak RSS {rss:.0f} MB, more than {MAX_RSS_MB} MB")
        for phrase in stderr_has:
            if phrase not in text_err:
                problems.append(f"stderr lacks {phrase!r}")
        for phrase in stdout_has:
            if phrase not in text_out:
                problems.append(f"stdout lacks {phrase!r}")
        if verify and not problems:
            why = verify(out, err)
            if why:
                problems.append(why)
        shown = " ".join(a if a.isprintable() else repr(a) for a in args[1:])
        line = (f"{'ok  ' if not problems else 'FAIL'} {name}: status {got}, {secs:.2f} s, "
                f"{rss:.0f} MB: {shown}")
        print(line, flush=True)
        if problems:
            print(f"     stderr: {text_err.strip()[-1500:]}")
            print(f"     stdout: {text_out.strip()[-1500:]}")
            self.failures.append(f"{name}: " + "; ".join(problems))
        elif text_err.strip():
            print(f"     {text_err.strip().splitlines()[-1][:300]}")

    def show(self, target, *more):
        return [self.scalana, "show", target, *more]

    def detect(self, *dirs, fmt="json"):
        return [self.scalana, "detect", "--format", fmt, *dirs]

    # --- making run directories ---------------------------------------------

    def doc(self, np=2):
        with gzip.open(os.path.join(self.base(np), "profile.json.gz"), "rt") as f:
            return json.load(f)

    def case_dir(self, name):
        path = os.path.join(self.cases, name)
        if os.path.lexists(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
        os.makedirs(path)
        return path

    def write_run(self, name, doc, file="profile.json.gz"):
        path = self.case_dir(name)
        with gzip.open(os.path.join(path, file), "wt") as f:
            json.dump(doc, f)
        return path

    def write_rank_files(self, name, doc, edit=lambda rank, d: None):
        """DOC's ranks as rank-<R>.json.gz files (a run that ended before MPI_Finalize)."""
        path = self.case_dir(name)
        for r in doc["ranks"]:
            d = json.loads(json.dumps(doc))
            d["meta"]["complete"] = False
            d["ranks"] = [json.loads(json.dumps(r))]
            edit(r["rank"], d)
            with gzip.open(os.path.join(path, f"rank-{r['rank']}.json.gz"), "wt") as f:
                json.dump(d, f)
        return path


def no_controls(*allowed):
    """VERIFY: no control byte (C0 but ALLOWED, DEL, C1 as UTF-8) in stdout or stderr."""
    def verify(out, err):
        for where, data in (("stdout", out), ("stderr", err)):
            for i, b in enumerate(data):
                if (b < 0x20 and chr(b) not in allowed) or b == 0x7f or (
                        b == 0xc2 and i + 1 < len(data) and 0x80 <= data[i + 1] <= 0x9f):
                    return f"raw control byte 0x{b:02x} in {where} at {i}: {data[max(0, i - 40):i + 20]!r}"
        return None
    return verify


# --- stages -----------------------------------------------------------------

def stage_setup(t):
    os.makedirs(os.path.dirname(t.binary), exist_ok=True)
    if os.path.exists(t.binary):
        os.remove(t.binary)
    makefile = os.path.join(t.source_dir, "examples", "fig3", "Makefile")
    subprocess.run(["make", "-f", makefile, f"SCALANA_BIN={t.bin_dir}/"],
                   cwd=os.path.dirname(t.binary), check=True)
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_mpi_yield_when_idle="1")
    for np in SCALES:
        shutil.rmtree(t.base(np), ignore_errors=True)
        subprocess.run([t.mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(np),
                        # Format 2: the cases below are built from its document.
                        t.scalana, "prof", "-o", t.base(np), "--write-group", "0", "--",
                        # A root cause to report: the stripped and dot
                        # cases compare and draw it.
                        # Long and uneven enough to stand out of the sampling
                        # noise with other tests loading the cores (CI runs
                        # two at a time): at 66 Hz the default 0.45 s run
                        # left 19 samples and no cause.
                        t.binary, "--inject", "--iters", "1600", "--factor", "12"],
                       env=env, check=True, timeout=120)
        if not os.path.exists(os.path.join(t.base(np), "profile.json.gz")):
            t.failures.append(f"no profile written at {np} ranks")
    # Both must be readable before any case is built on them.
    t.check("valid show", t.show(t.base(2)), status=0, stdout_has=["fig3.c"])
    t.check("valid detect", t.detect(t.base(1), t.base(2)), status=0)


def stage_sizes(t):
    doc = t.doc()

    def edited(name, edit):
        d = json.loads(json.dumps(doc))
        edit(d)
        return t.write_run(name, d)

    huge = edited("world-1e8", lambda d: d["meta"].update(world_size=100000000))
    for args in (t.show(huge), t.detect(t.base(1), huge)):
        t.check("world_size 1e8", args, stderr_has=[
            "meta.world_size 100000000 is larger than 4194304, the most ranks a profile may hold"])

    # The largest world a profile may declare, with 2 of its ranks present:
    # the report counts the others as missing (listing the lowest and all as
    # ranges), within the memory limit.
    def largest(out, err):
        run = json.loads(out)["runs"][1]
        count, ranges, listed = (run.get("missing_ranks_count"), run.get("missing_ranks_ranges"),
                                 run["missing_ranks"])
        ok = count == 4194302 and ranges == "2-4194303" and listed[:2] == [2, 3]
        return None if ok else f"missing ranks: count {count}, ranges {ranges}, {len(listed)} listed"
    big = edited("world-max", lambda d: d["meta"].update(world_size=4194304))
    t.check("world_size at the limit", t.detect(t.base(1), big), status=0, verify=largest)
    # The same in too little memory: a clear error, also when the JSON
    # library runs out while freeing its document (a throwing destructor).
    t.check("world_size at the limit, 400 MB of address space", t.detect(t.base(1), big),
            address_space=400 << 20, stderr_has=["scalana detect: error: out of memory"])

    def rank5(d):
        d["meta"]["world_size"] = 4
        d["ranks"][1]["rank"] = 5
    five = edited("rank-5-of-4", rank5)
    for args in (t.show(five), t.detect(t.base(1), five)):
        t.check("rank 5 of 4", args, stderr_has=[
            "ranks[1].rank 5 is not below meta.world_size 4: rank ids run from 0 to world_size-1"])

    neg = edited("negative-samples", lambda d: d["ranks"][0]["vertices"][0].__setitem__(1, -3))
    for args in (t.show(neg), t.detect(t.base(1), neg)):
        t.check("negative samples", args,
                stderr_has=["ranks[0].vertices[0][1] (samples) -3 is negative"])

    hz = edited("hz-1e-300", lambda d: d["meta"]["sampling"].update(hz=1e-300))
    for args in (t.show(hz), t.detect(t.base(1), hz, fmt="text")):
        t.check("hz 1e-300", args, stderr_has=[
            "meta.sampling.hz 1e-300 is not a sampling rate (0 for none, or 1 to 1e+06 Hz)"])

    peer = edited("peer-9", lambda d: [r["deps"][0].__setitem__(2, 9) for r in d["ranks"]
                                       if r["deps"]])
    t.check("peer outside the world", t.show(peer),
            stderr_has=["(peer) 9 is not below meta.world_size 2"])
    member = edited("member-7", lambda d: d["comms"][0].__setitem__(1, 7))
    t.check("communicator member outside the world", t.show(member),
            stderr_has=["(world rank) 7 is not below meta.world_size 2"])
    frac = edited("fractional-rank", lambda d: d["ranks"][0].update(rank=0.5))
    t.check("fractional rank", t.show(frac), stderr_has=["ranks[0].rank is not an integer (0.5)"])


def stage_special(t):
    doc = t.doc()
    fifo_run = t.case_dir("fifo-profile")
    os.mkfifo(os.path.join(fifo_run, "profile.json.gz"))
    for args in (t.show(fifo_run), t.detect(t.base(1), fifo_run)):
        t.check("FIFO as profile.json.gz", args,
                stderr_has=["profile.json.gz: cannot read: not a regular file (a FIFO)"])
    fifo_rank = t.case_dir("fifo-rank")
    os.mkfifo(os.path.join(fifo_rank, "rank-0.json.gz"))
    for args in (t.show(fifo_rank), t.detect(fifo_rank)):
        t.check("FIFO as rank-0.json.gz", args,
                stderr_has=["rank-0.json.gz: cannot read: not a regular file (a FIFO)"])

    fifo_bin = os.path.join(t.cases, "fifo-binary")
    if os.path.lexists(fifo_bin):
        os.remove(fifo_bin)
    os.mkfifo(fifo_bin)
    d = json.loads(json.dumps(doc))
    d["meta"]["binary"] = fifo_bin
    run = t.write_run("binary-fifo", d)
    t.check("FIFO as meta.binary (show)", t.show(run), status=0,
            stdout_has=["fifo-binary: not a regular file (a FIFO)"])
    t.check("FIFO as meta.binary (detect)", t.detect(run),
            stderr_has=["fifo-binary: not a regular file (a FIFO)"])
    t.check("FIFO as the binary (psg)", [t.scalana, "psg", fifo_bin],
            stderr_has=["fifo-binary: not a regular file (a FIFO)"])

    for dev in ("/dev/zero", "/dev/urandom"):
        run = t.case_dir("device-" + os.path.basename(dev))
        os.symlink(dev, os.path.join(run, "profile.json.gz"))
        for args in (t.show(run), t.detect(run)):
            t.check(dev + " as profile.json.gz", args, stderr_has=[
                "profile.json.gz: cannot read: not a regular file (a character device)"])

    # 1.5 GiB of zeros in about 1.5 MB of gzip, made once.
    bomb = os.path.join(t.work, "bomb-1.5GiB.gz")
    if not os.path.exists(bomb):
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        chunk = bytes(16 << 20)
        with open(bomb + ".tmp", "wb") as f:
            for _ in range(96):
                f.write(z.compress(chunk))
            f.write(z.flush())
        os.rename(bomb + ".tmp", bomb)
    run = t.case_dir("gzip-bomb")
    shutil.copy(bomb, os.path.join(run, "profile.json.gz"))
    for args in (t.show(run), t.detect(run)):
        t.check("gzip bomb (1.5 GiB)", args, stderr_has=[
            "profile.json.gz: inflates to more than",
            "(a profile may inflate to 64 times its compressed size"])

    # Sparse giants: 3 GiB of holes, and the real binary grown to 3 GiB.
    holes = os.path.join(t.cases, "sparse-3GiB")
    with open(holes, "wb") as f:
        f.truncate(3 << 30)
    d = json.loads(json.dumps(doc))
    d["meta"]["binary"] = holes
    run = t.write_run("binary-sparse", d)
    t.check("sparse 3 GiB binary (show)", t.show(run), status=0,
            stdout_has=["sparse-3GiB: not an ELF file"])
    t.check("sparse 3 GiB binary (detect)", t.detect(run),
            stderr_has=["sparse-3GiB: not an ELF file"])
    t.check("sparse 3 GiB binary (psg)", [t.scalana, "psg", holes],
            stderr_has=["sparse-3GiB: not an ELF file"])
    grown = os.path.join(t.cases, "fig3-grown")
    shutil.copy(t.binary, grown)
    with open(grown, "r+b") as f:
        f.truncate(3 << 30)
    t.check("real binary grown to 3 GiB (detect)",
            t.detect(t.base(1), t.base(2), "--binary", grown), status=0)


def stage_stale(t):
    doc = t.doc()
    run = t.write_rank_files("rank-files", doc)
    t.check("rank files of one run", t.show(run), status=0,
            stdout_has=["incomplete: ended before MPI_Finalize"])
    t.check("rank files of one run (detect)", t.detect(t.base(1), run), status=0)

    def other_build(rank, d):
        if rank == 1:
            d["meta"]["psg_id"] = "0x00000000deadbeef"
    run = t.write_rank_files("rank-files-psg", doc, other_build)
    for args in (t.show(run), t.detect(t.base(1), run)):
        t.check("rank file of another build", args, stderr_has=[
            "rank-1.json.gz: meta.psg_id 0x00000000deadbeef differs from",
            "the run directory mixes rank files of different runs or builds"])

    def other_world(rank, d):
        if rank == 1:
            d["meta"]["world_size"] = 3
    run = t.write_rank_files("rank-files-world", doc, other_world)
    for args in (t.show(run), t.detect(t.base(1), run)):
        t.check("rank file of another world size", args,
                stderr_has=["rank-1.json.gz: meta.world_size 3 differs from 2 in"])

    def other_run(rank, d):
        if rank == 1:
            d["meta"]["run_id"] = "20261202T101010Z-4242-00000000000000ab"
            d["meta"]["args"] = [d["meta"]["args"][0], "--other"]
    run = t.write_rank_files("rank-files-run", doc, other_run)
    for args in (t.show(run), t.detect(t.base(1), run)):
        t.check("rank file of another run", args, stderr_has=[
            "rank files of different runs: " + os.path.join(run, "rank-1.json.gz") +
            " (run 20261202T101010Z-4242-00000000000000ab) not of run " + doc["meta"]["run_id"]])

    def renamed(rank, d):
        d["ranks"][0]["rank"] = 1 - rank
    run = t.write_rank_files("rank-files-renamed", doc, renamed)
    t.check("renamed rank file", t.show(run),
            stderr_has=["rank-0.json.gz: holds rank 1, not rank 0 as its name says"])


def stage_terminal(t):
    doc = t.doc()
    d = json.loads(json.dumps(doc))
    d["meta"]["mpi_library"] = "Open MPI \x1b]0;pwned\x07\x1b[2J\x1b[H"
    d["meta"]["sampling"]["note"] = "csi \u009b2J, rlo \u202etxt.exe, del \x7f"
    d["meta"]["start_time"] = "2026\rforged"
    d["ranks"][0]["host"] = "n01\r\nforged line"
    d["ranks"][0]["errors"]["\x1b[31mred"] = 1
    run = t.write_run("escapes", d)

    def one_host_line(out, err):
        text = out.decode()
        if "n01\\x0d\\x0aforged line" not in text or "\\x1b]0;pwned\\x07\\x1b[2J" not in text:
            return "escaped host or mpi_library missing"
        if any(line.startswith("forged") for line in text.splitlines()):
            return "a line was forged"
        return no_controls("\n")(out, err)
    t.check("show text", t.show(run), status=0, verify=one_host_line)

    def same_strings(out, err):
        why = no_controls("\n")(out, err)
        if why:
            return why
        got = json.loads(out)
        if (got["meta"]["mpi_library"] != d["meta"]["mpi_library"]
                or got["ranks"][0]["host"] != d["ranks"][0]["host"]
                or got["meta"]["sampling"]["note"] != d["meta"]["sampling"]["note"]):
            return "show --format json changed the strings"
        return None
    t.check("show json", t.show(run, "--format", "json"), status=0, verify=same_strings)

    # Names from the command line and the file system: a run directory with
    # ESC and a newline in its name, the binary through a link named so.
    odd = os.path.join(t.cases, "run\x1b[2J\nforged")
    if os.path.lexists(odd):
        shutil.rmtree(odd)
    shutil.copytree(t.base(2), odd)
    link = os.path.join(t.cases, "fig3\x1b]0;title\x07")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(t.binary, link)
    escaped = ["fig3\\x1b]0;title\\x07", "run\\x1b[2J\\x0aforged"]
    for fmt in ("text", "html"):
        t.check(f"detect {fmt}: names with controls",
                t.detect(t.base(1), odd, fmt=fmt) + ["--binary", link], status=0,
                stdout_has=escaped, verify=no_controls("\n"))

    def exact_names(out, err):
        report = json.loads(out)
        if report["binary"] != link or report["runs"][1]["dir"] != odd:
            return "the JSON report changed the names"
        return no_controls("\n")(out, err)
    t.check("detect json: names with controls",
            t.detect(t.base(1), odd) + ["--binary", link], status=0, verify=exact_names)
    d = json.loads(json.dumps(doc))
    d["meta"]["psg_id"] = "0x1\x1b[2J"
    run = t.write_run("psg-id-escape", d)
    t.check("detect error quoting the profile", t.detect(t.base(1), run),
            stderr_has=["PSG 0x1\\x1b[2J"], verify=no_controls("\n"))
    t.check("psg error quoting the path", [t.scalana, "psg", "/nonexistent/\x1b[2Japp"],
            stderr_has=["/nonexistent/\\x1b[2Japp"], verify=no_controls("\n"))


def stage_messages(t):
    doc = t.doc()
    text = json.dumps(doc).encode()

    loop = t.case_dir("link-loop")
    os.symlink(os.path.join(loop, "profile.json.gz"), os.path.join(loop, "profile.json.gz"))
    for args in (t.show(loop), t.detect(loop)):
        t.check("profile.json.gz links to itself", args,
                stderr_has=["profile.json.gz: cannot read: symbolic link loop"])

    self_link = os.path.join(t.cases, "self-run")
    if os.path.lexists(self_link):
        os.remove(self_link)
    os.symlink(self_link, self_link)
    t.check("run directory links to itself (show)", t.show(self_link), stderr_has=[
        "self-run: symbolic link loop (the run directory is a link that leads back to itself)"])
    t.check("run directory links to itself (detect)", t.detect(self_link), stderr_has=[
        "self-run: not a readable directory (symbolic link loop"])
    dangling = os.path.join(t.cases, "dangling-run")
    if os.path.lexists(dangling):
        os.remove(dangling)
    os.symlink(os.path.join(t.cases, "no-such-dir"), dangling)
    t.check("run directory is a dangling link", t.show(dangling),
            stderr_has=["dangling-run: symbolic link to a missing run directory"])

    gz = gzip.compress(text)
    for name, data, phrase in (
            ("zlib", zlib.compress(text), "zlib data, not gzip"),
            ("raw-json", text, "not gzip data: uncompressed JSON?"),
            ("truncated", gz[:len(gz) // 2], "truncated gzip data"),
            ("corrupt", gz[:30] + bytes(b ^ 0xff for b in gz[30:60]) + gz[60:],
             "corrupt gzip data ("),
            ("not-json", gzip.compress(b"hello, world"), "not valid JSON"),
            ("empty", b"", "empty file")):
        run = t.case_dir("data-" + name)
        with open(os.path.join(run, "profile.json.gz"), "wb") as f:
            f.write(data)
        for args in (t.show(run), t.detect(run)):
            t.check(f"{name} data", args, stderr_has=["profile.json.gz: " + phrase])


def stage_options(t):
    """Every numeric option of every tool: a finite number in its range, else
    exit 2 and a message naming the option and the range."""
    run = t.base(2)
    detect = [t.scalana, "detect", t.base(1), run]
    cases = [
        (detect, "--abnorm-thd", "nan", "is not a finite number: expected a number from 1 to 1000"),
        (detect, "--abnorm-thd", "-1", "is out of range: expected a number from 1 to 1000"),
        (detect, "--abnorm-thd", "1e400", "is not a finite number"),
        (detect, "--top", "0", "expected a whole number from 1 to 1000000"),
        (detect, "--top", "9" * 300, "is out of range: expected a whole number from 1 to 1000000"),
        (detect, "--top", "2.5", "is not a whole number from 1 to 1000000"),
        (detect, "--min-share", "inf", "expected a number from 0 to 1"),
        (detect, "--min-share", "1.5", "expected a number from 0 to 1"),
        (detect, "--min-time", "-1", "expected a number from 0 to 1000000000"),
        (detect, "--min-wait", "nan", "expected a number from 0 to 1000000000"),
        (detect, "--max-loop-depth", "-3", "expected a whole number from 0 to 1000"),
        ([t.scalana, "export", "--format", "extrap", "-o", os.path.join(t.cases, "x.json"), run],
         "--max-loop-depth", "1000000000", "expected a whole number from 0 to 1000"),
        ([t.scalana, "show", run], "--rank", "-1", "expected a whole number from 0 to 4194303"),
        ([t.scalana, "psg", t.binary], "--max-vertices", "0", "expected a whole number from 1 to"),
        ([t.scalana, "psg", t.binary], "--max-loop-depth", "nan", "is not a whole number"),
        ([t.scalana, "prof", "-o", os.path.join(t.cases, "never")], "--hz", "0",
         "SCALANA_HZ='0' is not valid (--hz): expected 1..10000"),
        ([t.scalana, "prof", "-o", os.path.join(t.cases, "never")], "--hz", "1e999",
         "(--hz): expected 1..10000"),
    ]
    for base, option, value, phrase in cases:
        args = base + [option, value]
        if base[1] == "prof":
            args += ["--", "true"]
        t.check(f"{base[1]} {option} {value[:20]}", args, status=2,
                stderr_has=[option, phrase])


def stage_impossible(t):
    """Numbers a profile's own numbers contradict, and repeated keys."""
    doc = t.doc()

    def edited(name, edit):
        d = json.loads(json.dumps(doc))
        edit(d)
        return t.write_run(name, d)

    def samples(d):
        d["ranks"][0]["samples"] = 2 ** 63 - 1
    run = edited("samples-2e63", samples)
    for args in (t.show(run), t.detect(t.base(1), run)):
        t.check("samples 2^63-1", args, stderr_has=[
            "ranks[0].samples 9.22337e+18 samples is more than the sampling rate allows"])

    def vertex(d):
        d["ranks"][1]["vertices"][0][1] = 2 ** 62
    run = edited("vertex-samples-2e62", vertex)
    t.check("vertex samples 2^62", t.detect(t.base(1), run), stderr_has=[
        "ranks[1].vertices[0][1] (samples, with the rows before it)", "impossible for rank 1"])

    def wait(d):
        d["ranks"][0]["mpi"][0][2] = 1e9
    run = edited("mpi-1e9-s", wait)
    t.check("MPI time 1e9 s", t.detect(t.base(1), run), stderr_has=[
        "ranks[0].mpi[0][2] (seconds, with the rows before it) 1e+09 s in MPI calls is more than "
        "the rank ran"])

    def dep(d):
        for r in d["ranks"]:
            if r["deps"]:
                r["deps"][0][7] = 1e8
    run = edited("dep-wait-1e8-s", dep)
    t.check("dependence wait 1e8 s", t.show(run), stderr_has=[
        ".deps[0][7] (wait seconds, with the rows before it) 1e+08 s of waiting"])

    # Lies past what the run's own wall clock allows (gzip's CRC is right).
    wall = doc["ranks"][1]["wall_time"]

    def started_now(d):
        d["meta"]["start_time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        d["meta"]["wall_time"] = 1e8
        for r in d["ranks"]:
            r["wall_time"] = 1e8
    lies = [
        ("rank wall time 1e8 s", lambda d: d["ranks"][1].update(wall_time=1e8),
         ["ranks[1].wall_time 1e+08 s is longer than the run ran", "impossible for rank 1"]),
        ("run and rank wall times 1e8 s", started_now,
         ["meta.wall_time 1e+08 s from meta.start_time", "ends after the time it is read"]),
        ("CPU time 1e8 s", lambda d: d["ranks"][1].update(cpu_time=1e8),
         ["ranks[1].cpu_time 1e+08 s of CPU time is more than its threads could use",
          f"at most 1.1 x ({wall:.6g} s + 1 s) x"]),
        ("calls 2^64-1", lambda d: d["ranks"][1]["mpi"][0].__setitem__(1, 2 ** 64 - 1),
         ["ranks[1].mpi[0][1] (calls, with the rows before it) 1.84467e+19 MPI calls",
          "one per 10 ns of each thread's wall time"]),
        ("bytes 2^64-1", lambda d: d["ranks"][1]["mpi"][0].__setitem__(3, 2 ** 64 - 1),
         ["ranks[1].mpi[0][3] (bytes) 1.84467e+19 bytes is more than"]),
    ]
    for name, edit, says in lies:
        run = edited(name.replace(" ", "-").replace("^", ""), edit)
        for args in (t.show(run), t.detect(t.base(1), run)):
            t.check(name, args, stderr_has=says + ["profile.json.gz: ",
                                                   "the file was edited or damaged: re-run"])

    # The same key twice: the JSON library would keep the second.
    text = json.dumps(doc)
    at = text.index('"world_size": ')
    text = text[:at] + '"world_size": 9999, ' + text[at:]
    path = t.case_dir("duplicate-world-size")
    with gzip.open(os.path.join(path, "profile.json.gz"), "wt") as f:
        f.write(text)
    for args in (t.show(path), t.detect(t.base(1), path)):
        t.check("world_size twice", args, stderr_has=[
            "profile.json.gz: meta: key \"world_size\" appears twice"])




def stage_twice(t):
    """One run given twice to one analysis: refused (status 1) naming both arguments."""
    one, two = t.base(1), t.base(2)
    t.check("the same directory twice", t.detect(one, two, one), stderr_has=[
        f"{one} (argument 3) is the run directory {one} (argument 1): one run given twice "
        "would count as two repetitions of its scale"])
    link = os.path.join(t.cases, "np1-link")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(one, link)
    t.check("a symbolic link to a directory given", t.detect(one, two, link), stderr_has=[
        f"{link} (argument 3) is the run directory {one} (argument 1) (both are "
        f"{os.path.realpath(one)})"])
    spelled = os.path.join(os.path.dirname(one), ".", "np1") + "/"
    t.check("another spelling of a directory given", t.detect(spelled, two, one), stderr_has=[
        f"{one} (argument 3) is the run directory {spelled} (argument 1)"])
    rel = os.path.relpath(one, t.work)
    t.check("a relative path to a directory given", t.detect(rel, two, one), cwd=t.work,
            stderr_has=[f"{one} (argument 3) is the run directory {rel} (argument 1)"])
    # A copy of a run directory: another inode, the same run id.
    copy = t.case_dir("np2-copy")
    shutil.copy(os.path.join(two, "profile.json.gz"), copy)
    run_id = t.doc(2)["meta"]["run_id"]
    t.check("a copy of a run directory", t.detect(one, two, copy), stderr_has=[
        f"{copy} (argument 3) holds run {run_id}, as {two} (argument 2) does"])
    # Two runs of one SCALANA_RUN_ID: the 2-rank run's id given to the 1-rank run.
    d = t.doc(1)
    d["meta"]["run_id"] = run_id
    same = t.write_run("np1-same-run-id", d)
    t.check("two runs of one run id", t.detect(same, two), stderr_has=[
        f"{two} (argument 2) holds run {run_id}, as {same} (argument 1) does",
        "each job its own SCALANA_RUN_ID"])
    # `export` reads the runs as `detect` does.
    t.check("export: the same directory twice",
            [t.scalana, "export", "--format", "extrap", "-o",
             os.path.join(t.cases, "twice.extrap.json"), one, two, link],
            stderr_has=[f"{link} (argument 3) is the run directory {one} (argument 1)"])
    # Two distinct runs are read as ever.
    t.check("two distinct runs", t.detect(one, two), status=0)


def elf_sections(data):
    """{name: (header offset, file offset, size)} of an ELF64 little-endian file."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names = struct.unpack_from("<HHH", data, 0x3a)
    strtab = struct.unpack_from("<Q", data, shoff + names * entsize + 0x18)[0]
    out = {}
    for i in range(count):
        hdr = shoff + i * entsize
        name = struct.unpack_from("<I", data, hdr)[0]
        end = data.index(0, strtab + name)
        offset, size = struct.unpack_from("<QQ", data, hdr + 0x18)
        out[data[strtab + name:end].decode()] = (hdr, offset, size)
    return out


def stage_binary(t):
    with open(t.binary, "rb") as f:
        good = f.read()
    sections = elf_sections(good)
    doc = t.doc()

    def case(name, data):
        run = t.case_dir("binary-" + name)
        path = os.path.join(run, "fig3")
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755)
        d = json.loads(json.dumps(doc))
        d["meta"]["binary"] = path
        with gzip.open(os.path.join(run, "profile.json.gz"), "wt") as f:
            json.dump(d, f)
        return run, path

    def commands(run):
        return (("show", t.show(run)), ("detect", t.detect(run)),
                ("export", [t.scalana, "export", "--format", "hatchet", "--output",
                            os.path.join(run, "export.json"), run]))

    # LLVM's ELF reader ends in report_fatal_error (abort) on this one.
    huge = bytearray(good)
    struct.pack_into("<Q", huge, sections[".symtab"][0] + 0x20, 0x39000000000498)
    run, path = case("symtab-size", bytes(huge))
    for what, args in commands(run):
        t.check(f"{what}: .symtab runs past the end of the file", args, status=0,
                verify=lambda out, err, p=path: None if (
                    (p + ": its debug information could not be read").encode() in out + err and
                    b"LLVM ERROR: section" in out + err) else "no warning naming the binary")
    # One flipped bit in .debug_line: LLVM's line-table reader crashed on it
    # (SIGSEGV).
    line = bytearray(good)
    line[sections[".debug_line"][1] + 68] ^= 0x80
    run, path = case("debug-line-bit", bytes(line))
    for what, args in commands(run):
        t.check(f"{what}: one bit flipped in .debug_line", args, status=0)
    # Flipped bits in the DWARF sections: whatever LLVM makes of them, the
    # tools finish (status 0) and never crash. A fixed seed: the same cases
    # every run.
    rng = random.Random(21)
    for n in range(24):
        sec = rng.choice([".debug_line", ".debug_info", ".debug_abbrev", ".debug_str_offsets"])
        _, offset, size = sections[sec]
        data = bytearray(good)
        for _ in range(1 + n % 3):
            data[offset + rng.randrange(size)] ^= 1 << rng.randrange(8)
        run, _ = case(f"flip-{n}", bytes(data))
        for what, args in commands(run):
            t.check(f"{what}: bits flipped in {sec} (case {n})", args, status=0)


FORGED = "5\n\x1b[31mscalana prof: forged"
BIG = "9" * 10240


def echoed(*phrases, most=2000):
    """VERIFY: PHRASES on stderr, no control byte but newlines, no line
    forged by a value (one starting "forged" or "scalana prof: forged"),
    and at most MOST bytes: a 10 KB value is cut."""
    def verify(out, err):
        why = no_controls("\n")(out, err)
        if why:
            return why
        text = err.decode("utf-8", "replace")
        for phrase in phrases:
            if phrase not in text:
                return f"stderr lacks {phrase!r}"
        if any(l.startswith(("forged", "scalana prof: forged")) for l in text.splitlines()):
            return "a value forged a line"
        if len(err) > most:
            return f"{len(err)} bytes on stderr: the value was not cut"
        return None
    return verify


def stage_echo(t):
    """Values echoed back in messages, by every front end: escaped (ESC and
    newlines as \\xNN, no forged line) and cut at 200 bytes with the full
    length stated."""
    never = os.path.join(t.cases, "never")
    prof = [t.scalana, "prof", "-o", never]
    esc = "5\\x0a\\x1b[31mscalana prof: forged"
    cut = "9" * 200 + "... (10240 bytes)"
    cases = [
        ("prof --hz newline+ESC", prof + ["--hz", FORGED, "--", "true"], {}, 2, [esc]),
        ("prof --hz 10 KB", prof + ["--hz", BIG, "--", "true"], {}, 2, [cut]),
        ("prof SCALANA_HZ newline+ESC", prof + ["--", "true"], {"SCALANA_HZ": FORGED}, 2,
         [esc + "' is not valid (--hz)"]),
        ("prof SCALANA_SAMPLER 10 KB", prof + ["--", "true"], {"SCALANA_SAMPLER": BIG}, 2, [cut]),
        ("prof --force=newline+ESC", prof + ["--force=" + FORGED, "--", "true"], {}, 2, [esc]),
        ("prof unknown option (CLI11)", prof + ["--bogus=" + FORGED, "--", "true"], {}, 2,
         ["--bogus=" + esc]),
        ("prof -o a file named with ESC", [t.scalana, "prof", "-o",
                                           os.path.join(t.cases, "file\x1b[2J\nforged"), "--",
                                           "true"], {}, 2,
         ["file\\x1b[2J\\x0aforged exists and is not a directory"]),
        ("detect --top newline+ESC", t.detect(t.base(1), t.base(2)) + ["--top", FORGED], {}, 2,
         [esc]),
        ("detect 10 KB run directory", t.detect(t.base(1), "/nonexistent/" + BIG), {}, 1,
         ["... (10253 bytes)"]),
        ("show --format newline+ESC", t.show(t.base(2), "--format", FORGED), {}, 2, [esc]),
        ("show 10 KB run directory", t.show("/nonexistent/\x1b[2J" + BIG), {}, 1,
         ["/nonexistent/\\x1b[2J", "... (10257 bytes)"]),
        ("psg 10 KB binary", [t.scalana, "psg", "/nonexistent/" + BIG], {}, 1, ["(10253 bytes)"]),
        ("export --format ESC", [t.scalana, "export", "--format", FORGED, "-o",
                                 os.path.join(t.cases, "x.json"), t.base(2)], {}, 2, [esc]),
        ("scalana unknown command", [t.scalana, FORGED], {}, 2, [esc]),
        ("scalana-cc --showme:newline+ESC", [os.path.join(t.bin_dir, "scalana-cc"),
                                             "--showme:" + FORGED], {}, 1,
         ["unrecognized option: --showme:" + esc]),
    ]
    with open(os.path.join(t.cases, "file\x1b[2J\nforged"), "w"):
        pass
    for name, args, env, status, phrases in cases:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            t.check(name, args, status=status, verify=echoed(*phrases))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    # The runtime's own messages: a program started without the launcher,
    # a value only the runtime reads.
    out = t.case_dir("echo-runtime")
    lib = os.path.join(t.bin_dir, "..", "lib", "libscalana-rt.so")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        t.check("runtime SCALANA_HZ newline+ESC",
                [t.mpirun, "--oversubscribe", "--allow-run-as-root", "-np", "1",
                 "-x", "LD_PRELOAD=" + lib, "-x", "SCALANA_OUTPUT=" + out,
                 "-x", "SCALANA_HZ=" + FORGED, t.binary], status=0,
                verify=echoed("scalana: SCALANA_HZ='" + esc + "' is not valid (--hz): expected "
                              "1..10000; the default 1000 is used", most=100000))
    finally:
        os.environ.clear()
        os.environ.update(saved)


STAGES = {"setup": stage_setup, "sizes": stage_sizes, "special": stage_special,
          "stale": stage_stale, "terminal": stage_terminal, "messages": stage_messages,
          "options": stage_options, "impossible": stage_impossible, "twice": stage_twice,
          "binary": stage_binary, "echo": stage_echo}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", choices=sorted(STAGES))
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    args = ap.parse_args()
    t = Tool(args)
    os.makedirs(t.cases, exist_ok=True)
    STAGES[args.stage](t)
    print(f"{args.stage}: {t.checks - len(t.failures)} of {t.checks} checks passed")
    for f in t.failures:
        print("FAILED: " + f)
    return 1 if t.failures else 0


if __name__ == "__main__":
    sys.exit(main())
