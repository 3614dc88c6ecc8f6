#!/usr/bin/env python3
"""What is left of the ranks that survive a fault: the fault cases of the
runtime tests (tests/runtime/programs/faults.c at --np ranks: MPI_Abort,
SIGSEGV, raise(SIGKILL), exit without MPI_Finalize, SIGTERM to mpirun),
--runs runs each. Counts the surviving ranks (all but the failing one;
every rank with SIGTERM to mpirun) by what their file holds: a full end
record; a snapshot with the reason (the premade end record a SIGTERM puts
in place, when SIGKILL comes before the full one); a snapshot only. Prints
`name value` figures, per case and in all.

usage: bench_fault_survival.py --bin BUILD/bin --source SOURCE_DIR [--runs N] [--np N]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from figures import run_figures  # noqa: E402

CASES = ("fault_abort", "fault_segv", "fault_kill", "fault_exit", "fault_term")
KEYS = ("survivor_end_record", "survivor_reason_snapshot", "survivor_snapshot", "runs_failed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--np", type=int, default=4)
    args = ap.parse_args()
    driver = os.path.join(args.source, "tests", "runtime", "test_runtime.py")
    faults = os.path.join(args.source, "tests", "runtime", "programs", "faults.c")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCALANA_")}
    env.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    total = dict.fromkeys(KEYS, 0)
    for case in CASES:
        # A failed run (a check of the test) still prints its counts.
        figures = run_figures([sys.executable, driver, "--bin", args.bin, "--case", case,
                               "--np", str(args.np), "--exe", faults, "--repeat",
                               str(args.runs)], env, allow_failure=True)
        for key in KEYS:
            n = int(figures.get(key, 0))
            total[key] += n
            print("%s.%s %d" % (case, key, n))
    survivors = sum(total[k] for k in KEYS[:3])
    print("runs %d" % (len(CASES) * args.runs))
    print("survivors %d" % survivors)
    for key in KEYS:
        print("%s %d" % (key, total[key]))
    if survivors:
        print("survivor_end_record_share %.3f" % (total["survivor_end_record"] / survivors))


if __name__ == "__main__":
    main()
