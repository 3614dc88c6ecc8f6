#!/usr/bin/env python3
"""Compile-time cost of the ScalAna pass plugin.

Three configurations: without the plugin, with it but SCALANA_INSTRUMENT=0
(the PSG is built and embedded, no stores inserted), and the default.

For each code base, compiles every source at -O2 with exactly the command
scalana-cc/-cxx/-fc runs (`--scalana-show`), once with and once without the
`-fpass-plugin=` argument (same compiler, same flags), alternating the two
for several rounds. Reports the median CPU time (user+sys of the compiler
processes) of each, the median ratio, and the size of the PSG the plugin
embeds (record bytes, functions, vertices).
"""
import argparse
import glob
import json
import os
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time

WRAPPER_FOR = {".c": "scalana-cc", ".cpp": "scalana-cxx", ".cc": "scalana-cxx",
               ".f90": "scalana-fc", ".F90": "scalana-fc"}


def compile_commands(bin_dir, sources, out_dir, extra):
    """(with plugin, without plugin) command lists for each source."""
    cmds = []
    for i, src in enumerate(sources):
        wrapper = os.path.join(bin_dir, WRAPPER_FOR[os.path.splitext(src)[1]])
        obj = os.path.join(out_dir, f"{i}.o")
        shown = subprocess.run([wrapper, "--scalana-show", "-O2", *extra, "-c", src, "-o", obj],
                               check=True, capture_output=True, text=True).stdout
        with_plugin = shown.split()
        without = [a for a in with_plugin if not a.startswith("-fpass-plugin=")]
        if len(without) != len(with_plugin) - 1:
            sys.exit(f"unexpected wrapper command: {shown}")
        cmds.append((with_plugin, without, obj))
    return cmds


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_all(commands, env=None):
    cpu0, wall0 = child_cpu(), time.perf_counter()
    for cmd in commands:
        subprocess.run(cmd, check=True, env=env)
    return child_cpu() - cpu0, time.perf_counter() - wall0


def psg_size(objects, objcopy):
    total_bytes = functions = vertices = 0
    for obj in objects:
        with tempfile.NamedTemporaryFile() as tmp:
            subprocess.run([objcopy, "--dump-section", f"scalana_psg={tmp.name}", obj,
                            os.devnull], check=True, capture_output=True)
            data = open(tmp.name, "rb").read()
        total_bytes += len(data)
        for rec in data.split(b"\0"):
            if rec.strip():
                doc = json.loads(rec)
                functions += len(doc["functions"])
                vertices += sum(len(f["vertices"]) for f in doc["functions"])
    return total_bytes, functions, vertices


def text_bytes(objects):
    """Total size of the .text* sections of ELF64 little-endian objects."""
    total = 0
    for obj in objects:
        data = open(obj, "rb").read()
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        def section(i):
            # sh_name, sh_offset, sh_size
            base = shoff + i * shentsize
            return (struct.unpack_from("<I", data, base)[0],
                    struct.unpack_from("<Q", data, base + 0x18)[0],
                    struct.unpack_from("<Q", data, base + 0x20)[0])
        strtab = section(shstrndx)[1]
        for i in range(shnum):
            name_off, _, size = section(i)
            end = data.index(b"\0", strtab + name_off)
            if data[strtab + name_off:end].startswith(b".text"):
                total += size
    return total


def instructions(command, env=None):
    """Instructions the compiler executes (valgrind callgrind, all processes)."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                        f"--callgrind-out-file={d}/cg.%p", *command], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        total = 0
        for f in glob.glob(os.path.join(d, "cg.*")):
            for line in open(f, errors="replace"):
                if line.startswith("totals:"):
                    total += int(line.split()[1])
        return total


def bench(name, sources, args):
    lines = sum(sum(1 for _ in open(s, errors="replace")) for s in sources)
    with tempfile.TemporaryDirectory() as out_dir:
        cmds = compile_commands(args.bin_dir, sources, out_dir, args.extra)
        plugin = [c[0] for c in cmds]
        plain = [c[1] for c in cmds]
        run_all(plain)  # warm the page cache and the compiler binaries
        psg_only_env = dict(os.environ, SCALANA_INSTRUMENT="0")
        configs = [("without plugin", plain, None), ("PSG only", plugin, psg_only_env),
                   ("PSG + instrumentation", plugin, None)]
        cpu = {c[0]: [] for c in configs}
        wall = {c[0]: [] for c in configs}
        ratios = {c[0]: [] for c in configs[1:]}
        for r in range(args.rounds):
            # Rotate which goes first so drift hits every configuration alike.
            order = configs[r % 3:] + configs[:r % 3]
            got = {}
            for config, commands, env in order:
                got[config] = run_all(commands, env)
                cpu[config].append(got[config][0])
                wall[config].append(got[config][1])
            for config in ratios:
                ratios[config].append(got[config][0] / got["without plugin"][0])
        # Code size is deterministic where CPU time is noisy: the stores' cost
        # shows as extra machine code.
        objects = [c[2] for c in cmds]
        text = {}
        for config, commands, env in configs:
            run_all(commands, env)
            text[config] = text_bytes(objects)
        size, functions, vertices = psg_size(objects, args.objcopy)
        # Instruction counts do not scatter with the machine's load: one file.
        counts = {}
        if args.instructions:
            for config, commands, env in configs:
                counts[config] = instructions(commands[0], env)
    print(f"{name}: {len(sources)} files, {lines} lines, {args.rounds} rotating rounds at -O2,"
          f" compiler CPU time (user+sys)")
    for config in cpu:
        line = (f"  {config:22s} median {statistics.median(cpu[config]):8.3f} s"
                f" (wall {statistics.median(wall[config]):7.3f} s)")
        if config in ratios:
            med = statistics.median(ratios[config])
            line += (f"  overhead: median ratio {med:.4f} ({100 * (med - 1):+.2f}%),"
                     f" rounds " + " ".join(f"{x:.3f}" for x in ratios[config]))
        print(line)
    base = text["without plugin"]
    print("  .text bytes            " + ", ".join(
        f"{config} {text[config]}" + ("" if config == "without plugin" else
                                      f" ({100 * (text[config] / base - 1):+.1f}%)")
        for config in text))
    if counts:
        base_count = counts["without plugin"]
        print(f"  instructions ({os.path.basename(sources[0])}) " + ", ".join(
            f"{config} {counts[config]:,}" + ("" if config == "without plugin" else
                                              f" ({100 * (counts[config] / base_count - 1):+.2f}%)")
            for config in counts))
    print(f"  PSG                    {size} record bytes, {functions} functions, {vertices} vertices"
          f" ({size / max(lines, 1):.1f} bytes per source line)")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin-dir", required=True, help="directory holding scalana-cc/-cxx/-fc")
    ap.add_argument("--objcopy", default="llvm-objcopy-19")
    ap.add_argument("--examples", help="examples/ directory: the largest example is measured")
    ap.add_argument("--generated-lines", type=int, default=10000,
                    help="also measure a generated C code base of at least this many lines (0: skip)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--instructions", action="store_true",
                    help="also count the compiler's instructions on one file of each code base "
                         "with valgrind (deterministic; about a minute per configuration)")
    ap.add_argument("--extra", nargs="*", default=[], help="extra compiler flags")
    args = ap.parse_args()

    if args.examples:
        best = None
        for d in sorted(glob.glob(os.path.join(args.examples, "*"))):
            srcs = [s for s in glob.glob(os.path.join(d, "*")) if os.path.splitext(s)[1] in WRAPPER_FOR]
            n = sum(sum(1 for _ in open(s, errors="replace")) for s in srcs)
            if srcs and (best is None or n > best[0]):
                best = (n, d, srcs)
        if best:
            bench(f"example {os.path.basename(best[1])}", sorted(best[2]), args)
    if args.generated_lines > 0:
        with tempfile.TemporaryDirectory() as gen_dir:
            # 40 functions per file average ~20 lines each: ~800 lines per file.
            files = max(1, (args.generated_lines + 799) // 800)
            subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "gen_code.py"),
                            "--out", gen_dir, "--files", str(files)], check=True)
            bench("generated code base", sorted(glob.glob(os.path.join(gen_dir, "*.c"))), args)


if __name__ == "__main__":
    main()
