#!/usr/bin/env python3
"""Runs one libFuzzer target from its seed corpus and checks that it ends clean.

Limits (as in docs/formats.md, "Readers"): no input may take more than 1 s
(-timeout=1), the process may not pass 1 GB of RSS nor allocate 1 GB at once,
and libFuzzer stops at the first crash, sanitizer report or leak. The corpus
grows in WORK/corpus, started afresh each run; crashing inputs are saved in
WORK as crash-*, leak-*, timeout-* or oom-*.

  run_fuzz.py --fuzzer build/tests/fuzz/profile_fuzz --seeds tests/fuzz/seeds/profile \\
              --work /tmp/fz --seconds 60 [--runs N] [--time-corpus] [--dict FILE]

--runs stops after N inputs instead of at the time limit (the longer runs for
the record: --runs 1000000 --seconds 0); --time-corpus then times every unit
of the final corpus once and names the slowest. --fork N runs libFuzzer's
fork mode, N worker processes fuzzing one shared corpus, --runs counting
the inputs of all of them; every crash, timeout and out-of-memory stops it,
as in the single process.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seconds", type=int, default=60, help="0: no time limit")
    ap.add_argument("--runs", type=int, default=-1, help="stop after this many inputs")
    ap.add_argument("--time-corpus", action="store_true")
    ap.add_argument("--unit-timeout", type=int, default=1,
                    help="seconds one input may take (default 1); a long run of binary_fuzz "
                         "beside other work may need more: its reader child waits for a core")
    ap.add_argument("--limits-in-asan", action="store_true",
                    help="bound allocations in ASan, not in libFuzzer's malloc hook: for "
                         "targets whose code forks a child, where the inherited hook would "
                         "report the child's refused allocation as the fuzzer's out-of-memory")
    ap.add_argument("--dict", help="a libFuzzer dictionary (tokens mutations insert: the fields "
                                   "and values the readers' limits bound)")
    ap.add_argument("--fork", type=int, default=0,
                    help="worker processes (libFuzzer's -fork); 0: one process")
    args = ap.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    corpus = os.path.join(args.work, "corpus")
    os.makedirs(corpus)
    limits = ["-rss_limit_mb=1024", "-malloc_limit_mb=1024"]
    env = dict(os.environ)
    if args.limits_in_asan:
        # An allocation past 1 GiB returns null (operator new throws) in the
        # fuzzer and in its children alike: the child dies, which the reader
        # reports; in the fuzzer itself it is a crash as before.
        limits = ["-rss_limit_mb=0", "-malloc_limit_mb=0"]
        env["ASAN_OPTIONS"] = ":".join(
            x for x in (env.get("ASAN_OPTIONS"), "max_allocation_size_mb=1024",
                        "allocator_may_return_null=1") if x)
    cmd = [args.fuzzer] + limits + ["-timeout=%d" % args.unit_timeout, "-print_final_stats=1",
                                    "-artifact_prefix=" + args.work + "/"]
    if args.seconds > 0:
        cmd.append(f"-max_total_time={args.seconds}")
    if args.runs >= 0:
        cmd.append(f"-runs={args.runs}")
    if args.dict:
        cmd.append("-dict=" + args.dict)
    if args.fork > 0:
        # Fork mode ignores timeouts and out-of-memory by default: not here.
        cmd += [f"-fork={args.fork}", "-ignore_crashes=0", "-ignore_timeouts=0",
                "-ignore_ooms=0"]
    cmd += [corpus, args.seeds]
    print("$ " + " ".join(cmd), flush=True)
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", env=env)
    elapsed = time.time() - start
    log = proc.stdout
    with open(os.path.join(args.work, "fuzz.log"), "w") as f:
        f.write(log)

    def stat(name):
        m = re.search(r"stat::%s:\s*(\d+)" % name, log)
        return int(m.group(1)) if m else None

    units, rss = stat("number_of_executed_units"), stat("peak_rss_mb")
    slowest = stat("slowest_unit_time_sec")  # whole seconds
    if args.fork > 0:
        # The workers' final statistics stay in their own logs; the parent
        # counts the inputs of all of them in its status lines.
        counts = [int(n) for n in re.findall(r"^#(\d+): cov:", log, re.M)]
        done = re.search(r"fuzzed for (\d+) iterations", log)
        units = int(done.group(1)) if done else (max(counts) if counts else None)
        failures = re.findall(r"oom/timeout/crash: (\d+)/(\d+)/(\d+)", log)
        if failures and any(int(x) for x in failures[-1]):
            print("fuzz: oom/timeout/crash " + "/".join(failures[-1]))
            units = None
    artifacts = [f for f in os.listdir(args.work)
                 if re.match(r"(crash|leak|timeout|oom|slow-unit)-", f)]
    print(f"fuzz: {os.path.basename(args.fuzzer)}: {units} inputs in {elapsed:.0f} s, "
          f"peak RSS {rss} MB, slowest input {slowest} s (whole seconds), "
          f"corpus {len(os.listdir(corpus))} units, exit status "
          f"{proc.returncode}, artifacts {artifacts or 'none'}")
    if proc.returncode != 0 or artifacts or units is None:
        sys.stdout.write(log[-6000:])
        print(f"fuzz: FAILED (log in {args.work}/fuzz.log)")
        return 1
    if args.time_corpus:
        # Executed without fuzzing, libFuzzer reports each unit's time.
        files = [os.path.join(corpus, f) for f in os.listdir(corpus)]
        out = subprocess.run([args.fuzzer, "-runs=1"] + files, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, errors="replace").stdout
        times = [(int(ms), name) for name, ms in re.findall(r"Executed (\S+) in (\d+) ms", out)]
        if times:
            ms, name = max(times)
            print(f"fuzz: slowest corpus unit {ms} ms ({os.path.basename(name)}, "
                  f"{os.path.getsize(name)} bytes) of {len(times)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
