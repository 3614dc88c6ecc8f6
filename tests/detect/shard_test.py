#!/usr/bin/env python3
"""`mpirun -np K scalana detect` (docs/detect.md section 9): the report of a
sharded analysis is byte for byte the one `scalana detect` writes alone, and
a failure on one process ends all of them with the error.

The runs are bench/scale's halo3d at 64 and 256 ranks in groups of 16 ranks
(4 and 16 groups: K = 2 and 3 split them unevenly), generated from a real
profile of the program at 8 ranks.

  shard_test.py --bin build/bin --bench-scale build/bin/bench_scale --work DIR --mpirun mpirun
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(cmd, timeout=300, env=None):
    p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--bench-scale", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpirun", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    # bench_scale profiles its template with a plain mpirun: allowed as root
    # (the suite runs as root) the way the launches below are.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rc, out, err = run([a.bench_scale, "--bin", a.bin, "--work", a.work, "--sizes", "256",
                        "--group", "16", "--keep"], timeout=600, env=env)
    if rc != 0:
        print(out.decode(errors="replace"), err)
        sys.exit("bench_scale could not make the runs")
    runs = [os.path.join(a.work, "np64"), os.path.join(a.work, "np256")]
    scalana = os.path.join(a.bin, "scalana")
    mpirun = [a.mpirun, "--oversubscribe", "--allow-run-as-root"]
    env_note = "OMPI_COMM_WORLD_SIZE" in os.environ
    check(not env_note, "the test itself must not run under mpirun")

    for fmt in ["json", "text"]:
        rc, alone, err = run([scalana, "detect", "--format", fmt] + runs)
        check(rc == 0 and len(alone) > 1000, f"plain detect --format {fmt}: rc {rc}: {err}")
        for k in [1, 2, 3]:
            rc, sharded, err2 = run(mpirun + ["-np", str(k), scalana, "detect", "--format", fmt]
                                    + runs)
            check(rc == 0, f"K={k} --format {fmt}: rc {rc}: {err2}")
            check(sharded == alone, f"K={k} --format {fmt}: the report differs from the plain one")
            check(err2 == err, f"K={k} --format {fmt}: the warnings differ:\n{err2}\nvs\n{err}")

    # A run directory that is not there: every process stops at once, one says why.
    missing = os.path.join(a.work, "no-such-run")
    for k in [1, 2, 3]:
        rc, _, err = run(mpirun + ["-np", str(k), scalana, "detect", runs[0], missing], 120)
        check(rc != 0, f"K={k} missing run directory: exit status 0")
        check(err.count("no-such-run: not a readable directory") == 1,
              f"K={k} missing run directory: the error once, got:\n{err}")

    # A damaged block in the last group: only the last process reads it (for
    # K > 1); it must end the others too, with the error, not leave them
    # waiting for it.
    damaged = os.path.join(a.work, "np256-damaged")
    shutil.rmtree(damaged, ignore_errors=True)
    shutil.copytree(runs[1], damaged)
    path = os.path.join(damaged, "profile.scalana")
    with open(path, "r+b") as f:
        head = f.read(64)
        index_offset = struct.unpack_from("<Q", head, 40)[0]
        f.seek(index_offset - 20)
        byte = f.read(1)
        f.seek(index_offset - 20)
        f.write(bytes([byte[0] ^ 0xFF]))
    for k in [1, 2, 3]:
        cmd = [scalana, "detect", runs[0], damaged]
        rc, _, err = run((mpirun + ["-np", str(k)] if k > 1 else []) + cmd, 120)
        check(rc != 0, f"K={k} damaged block: exit status 0")
        check("group 15 (ranks 240-255): block crc mismatch" in err,
              f"K={k} damaged block: no error naming the group:\n{err}")

    if failures:
        sys.exit(f"{len(failures)} failure(s)")
    print("ok")


if __name__ == "__main__":
    main()
