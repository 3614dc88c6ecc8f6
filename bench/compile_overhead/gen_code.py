#!/usr/bin/env python3
"""Generates a synthetic MPI C code base for the compile-time benchmark.

Each file holds many functions mixing loops (some nested), branches, calls to
functions of the same and other files, and MPI calls of every class, like a
stencil/solver code. Deterministic for a given seed.
"""
import argparse
import os
import random

MPI_CALLS = [
    "MPI_Allreduce(MPI_IN_PLACE, &acc, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);",
    "MPI_Barrier(MPI_COMM_WORLD);",
    "MPI_Bcast(&acc, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);",
    "MPI_Sendrecv_replace(&acc, 1, MPI_DOUBLE, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);",
    "{ MPI_Request r[2]; double in = 0; MPI_Irecv(&in, 1, MPI_DOUBLE, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &r[0]); MPI_Isend(&acc, 1, MPI_DOUBLE, (rank + 1) % size, 1, MPI_COMM_WORLD, &r[1]); MPI_Waitall(2, r, MPI_STATUSES_IGNORE); acc += in; }",
]


def gen_function(rng, file_idx, fn_idx, fns_per_file, out):
    name = f"f{file_idx}_{fn_idx}"
    out.append(f"double {name}(double *a, int n, int rank, int size) {{")
    out.append("  double acc = 0.0;")
    for block in range(rng.randint(3, 6)):
        kind = rng.choice(["loop", "nested", "branch", "call", "mpi", "comp"])
        if kind == "loop":
            out.append("  for (int i = 0; i < n; ++i) {")
            out.append(f"    a[i] = a[i] * {rng.uniform(0.5, 1.5):.3f} + acc;")
            out.append("    acc += a[i] * 0.5;")
            out.append("  }")
        elif kind == "nested":
            out.append("  for (int i = 1; i < n - 1; ++i) {")
            out.append("    for (int j = 0; j < 4; ++j) {")
            out.append("      a[i] = 0.25 * (a[i - 1] + a[i + 1]) + j;")
            out.append("    }")
            if rng.random() < 0.3:
                out.append("    " + rng.choice(MPI_CALLS))
            out.append("  }")
        elif kind == "branch":
            out.append(f"  if (rank % {rng.randint(2, 4)} == 0) {{")
            out.append("    " + rng.choice(MPI_CALLS))
            out.append("  } else {")
            out.append("    for (int i = 0; i < n; ++i)")
            out.append("      acc -= a[i];")
            out.append("  }")
        elif kind == "call" and fn_idx > 0:
            callee = f"f{file_idx}_{rng.randrange(fn_idx)}"
            out.append(f"  acc += {callee}(a, n / 2, rank, size);")
        elif kind == "call" and file_idx > 0:
            callee = f"f{rng.randrange(file_idx)}_{rng.randrange(fns_per_file)}"
            out.append(f"  acc += {callee}(a, n / 2, rank, size);")
        elif kind == "mpi":
            out.append("  " + rng.choice(MPI_CALLS))
        else:
            out.append("  acc = acc * 0.5 + n;")
            out.append("  if (acc > 1e9)")
            out.append("    acc = 0;")
    out.append("  return acc;")
    out.append("}")
    out.append("")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True, help="directory to write the sources to")
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--functions", type=int, default=40, help="functions per file")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    decls = [f"double f{f}_{i}(double *a, int n, int rank, int size);"
             for f in range(args.files) for i in range(args.functions)]
    total = 0
    for f in range(args.files):
        out = ["#include <mpi.h>", ""] + decls + [""]
        for i in range(args.functions):
            gen_function(rng, f, i, args.functions, out)
        path = os.path.join(args.out, f"gen{f:03d}.c")
        with open(path, "w") as fh:
            fh.write("\n".join(out) + "\n")
        total += len(out) - len(decls)
    print(f"generated {args.files} files, {total} lines of code (plus prototypes) in {args.out}")


if __name__ == "__main__":
    main()
