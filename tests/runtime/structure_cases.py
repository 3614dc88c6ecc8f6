"""Cases of test_runtime.py for what `scalana prof` says at start about the
program's file (tools/prof/structure_note.cpp): a binary built without the
wrappers has no Program Structure Graph (detect recovers a smaller one from
the binary), one stripped of its debug information has no line tables, and
one with neither can give no report. Each is said in one warning, by the
first rank only, and the program runs and is profiled all the same; a
binary built with the wrappers gets no warning.

The helpers (run, check, build, profile_run, read_run) are test_runtime.py's,
which runs as __main__ and imports this file."""
import os
import shutil
import tempfile

import __main__ as rt

NO_PSG = "has no Program Structure Graph"
NO_LINES = "has no line tables"
NEITHER = "has neither a Program Structure Graph nor line tables"


def warnings_of(p):
    return [line for line in p.stderr.splitlines() if line.startswith("scalana prof: warning:")]


def profiled_with(args, exe, label):
    """Profiles EXE at args.np ranks: its prof warnings, checked to have
    left a profile of every rank."""
    out, p = rt.profile_run(args, exe)
    doc = rt.read_run(out)
    ranks = sorted(r["rank"] for r in doc["ranks"])
    rt.check(ranks == list(range(args.np)),
             "%s: the program ran and was profiled on every rank: ranks %s" % (label, ranks))
    return warnings_of(p)


def case_structure_note(args):
    wrapped = rt.build(args, args.exe, ["-g"])
    got = profiled_with(args, wrapped, "wrappers' build")
    rt.check(not got, "a binary with its PSG and line tables is warned about: %s" % got)

    # The same source through Open MPI's own wrapper: no PSG. Said once for
    # the job, whatever its rank count, with what to do.
    mpicc = shutil.which("mpicc")
    rt.check(mpicc is not None, "mpicc (Open MPI's wrapper) not found")
    plain = os.path.join(tempfile.mkdtemp(prefix="scalana-rt-plain-"), "plain")
    rt.run([mpicc, "-O2", "-g", args.exe, "-o", plain])
    got = profiled_with(args, plain, "mpicc build")
    rt.check(len(got) == 1 and NO_PSG in got[0] and "scalana-cc" in got[0] and
             "recovers its structure" in got[0],
             "one warning naming the missing PSG, what detect does and the rebuild: %s" % got)

    # The wrappers' build stripped of its debug information: PSG, no lines.
    stripped = wrapped + "-stripped"
    shutil.copy(wrapped, stripped)
    rt.run(["strip", "--strip-debug", stripped])
    got = profiled_with(args, stripped, "stripped build")
    rt.check(len(got) == 1 and NO_LINES in got[0] and NO_PSG not in got[0],
             "one warning naming the missing line tables: %s" % got)

    # Neither PSG nor lines: detect can give no report.
    bare = plain + "-bare"
    rt.run([mpicc, "-O2", args.exe, "-o", bare])
    got = profiled_with(args, bare, "mpicc build without -g")
    rt.check(len(got) == 1 and NEITHER in got[0] and "refuse" in got[0],
             "one warning that no report can be given: %s" % got)

    # Found through PATH as execvp finds it: the same warning by name.
    os.environ["PATH"] = os.path.dirname(plain) + ":" + os.environ.get("PATH", "")
    got = profiled_with(args, "plain", "mpicc build by name")
    rt.check(len(got) == 1 and NO_PSG in got[0],
             "the program found through PATH is warned about: %s" % got)
