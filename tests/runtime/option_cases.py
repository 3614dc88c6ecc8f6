"""Cases of test_runtime.py for the values `scalana prof` takes: a Bool,
Uint or Choice option accepts exactly what runtime/config_table.h says
(a number: decimal digits, no sign, no leading zero),
in its option form (--force=2) and its environment form (SCALANA_FORCE=2)
alike; anything else stops the launcher (status 2) before the program
starts.

The helpers (run, check, env) are test_runtime.py's, which runs as
__main__ and imports this file."""
import os
import tempfile

import __main__ as rt

# (option form, environment form): refused, each with the variable named.
REFUSED = [
    ("--force=2", ("SCALANA_FORCE", "2")),
    ("--force=1e23", ("SCALANA_FORCE", "1e23")),
    ("--force=yes", ("SCALANA_FORCE", "yes")),
    ("--force=true", ("SCALANA_FORCE", "true")),
    ("--force=01", ("SCALANA_FORCE", "01")),
    ("--force=", ("SCALANA_FORCE", " 1")),
    ("--force={}", ("SCALANA_FORCE", "1 ")),
    ("--verbose=2", ("SCALANA_VERBOSE", "2")),
    ("--omp-worksharing=1e23", ("SCALANA_OMP_WORKSHARING", "on")),
    ("--hz=+5", ("SCALANA_HZ", "+5")),
    ("--hz=1e3", ("SCALANA_HZ", "1e3")),
    ("--hz=5.0", ("SCALANA_HZ", "5.0")),
    ("--hz=0x10", ("SCALANA_HZ", "0x10")),
    ("--hz= 5", ("SCALANA_HZ", "5 ")),
    ("--hz=5x", ("SCALANA_HZ", "-5")),
    ("--hz=99999999999999999999", ("SCALANA_HZ", "18446744073709551621")),
    ("--snapshot=-0", ("SCALANA_SNAPSHOT", "1.")),
    ("--hz=010", ("SCALANA_HZ", "0010")),
    ("--sampler=Timer", ("SCALANA_SAMPLER", "TIMER")),
    ("--sampler=timer ", ("SCALANA_SAMPLER", "timer\n")),
    ("--snapshot-files=node,rank", ("SCALANA_SNAPSHOT_FILES", "Node")),
]
# Accepted: the bare flag, and exactly 0 and 1.
ACCEPTED = [["--force"], ["-f"], ["--force=0"], ["--force=1"], ["-v"], ["--verbose=0"],
            ["--hz=5"], ["--snapshot=0"], ["--sampler=timer"]]
ACCEPTED_ENV = [("SCALANA_FORCE", "0"), ("SCALANA_FORCE", "1"), ("SCALANA_VERBOSE", "1"),
                ("SCALANA_OMP_WORKSHARING", "0")]


def case_strict_values(args):
    prof = [os.path.join(args.bin, "scalana"), "prof"]
    marker = tempfile.mktemp(prefix="scalana-not-started-")
    for option, (var, value) in REFUSED:
        for extra, e in (([option], rt.env()), ([], dict(rt.env(), **{var: value}))):
            p = rt.run(prof + ["-o", tempfile.mkdtemp()] + extra + ["--", "touch", marker],
                       expect_ok=False, env=e)
            what = extra[0] if extra else "%s=%r" % (var, value)
            rt.check(p.returncode == 2, "%s accepted: status %d" % (what, p.returncode))
            rt.check(var in p.stderr and "expected " in p.stderr and "not started" in p.stderr,
                     "%s: the message names %s and what it accepts: %s" % (what, var, p.stderr))
            rt.check(len(p.stderr.splitlines()) == 2,
                     "%s: one line and the refusal, no forged line: %r" % (what, p.stderr))
            rt.check(not os.path.exists(marker), "%s: the program must not start" % what)
    # Refused by the command-line parser itself (no value, -f takes none).
    for extra in (["--hz="], ["-f=2"], ["-f2"]):
        p = rt.run(prof + ["-o", tempfile.mkdtemp()] + extra + ["--", "touch", marker],
                   expect_ok=False)
        rt.check(p.returncode == 2 and not os.path.exists(marker),
                 "%s refused: status %d %s" % (extra, p.returncode, p.stderr))
    for extra in ACCEPTED:
        p = rt.run(prof + ["-o", tempfile.mkdtemp()] + extra + ["--", "true"], expect_ok=False)
        rt.check(p.returncode == 0, "%s refused: %s" % (extra, p.stderr))
    for var, value in ACCEPTED_ENV:
        p = rt.run(prof + ["-o", tempfile.mkdtemp(), "--", "true"], expect_ok=False,
                   env=dict(rt.env(), **{var: value}))
        rt.check(p.returncode == 0, "%s=%s refused: %s" % (var, value, p.stderr))
    # The last occurrence counts: seen on a directory holding an ended job's
    # profile, which only --force takes.
    for flags, taken in ((["--force=0", "--force"], True), (["--force", "--force=0"], False),
                         (["-f", "--force=0"], False), (["--force=0", "-f"], True)):
        d = tempfile.mkdtemp()
        with open(os.path.join(d, ".scalana-job"), "w") as f:
            f.write("old-job\nrun old-run\n")  # an older version's record: ended
        os.utime(os.path.join(d, ".scalana-job"), (1, 1))
        with open(os.path.join(d, "profile.json.gz"), "wb") as f:
            f.write(b"old")
        p = rt.run(prof + ["-o", d] + flags + ["--", "true"], expect_ok=False)
        rt.check((p.returncode == 0) == taken and
                 (taken or "holds the profile of another run" in p.stderr),
                 "%s: forced %s: %d %s" % (flags, taken, p.returncode, p.stderr))
    # The command line wins over the environment, and only its value is read.
    p = rt.run(prof + ["-o", tempfile.mkdtemp(), "--force=0", "--", "true"], expect_ok=False,
               env=dict(rt.env(), SCALANA_FORCE="2"))
    rt.check(p.returncode == 0, "--force=0 over SCALANA_FORCE=2: %s" % p.stderr)
