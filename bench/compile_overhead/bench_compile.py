#!/usr/bin/env python3
"""Compile-time cost of the ScalAna pass plugin.

For each code base, compiles every source at -O2 with exactly the command
scalana-cc/-cxx/-fc runs (`--scalana-show`), once with and once without the
`-fpass-plugin=` argument (same compiler, same flags, line tables included
in both), alternating the two for several rounds. Reports:
  - the instructions the compiler executes on the first file of the code
    base (valgrind callgrind; deterministic, unlike CPU time on a shared
    machine; skipped with --no-instructions or without valgrind);
  - the .text bytes of the objects of both builds, and whether their code
    sections are byte-identical (the plugin must not change the code);
  - the median CPU time (user+sys of the compiler processes) of each and the
    median of the per-round ratios;
  - the size of the PSG the plugin embeds (record bytes, functions, vertices).
"""
import argparse
import glob
import json
import os
import resource
import shutil
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


def run_all(commands):
    cpu0, wall0 = child_cpu(), time.perf_counter()
    for cmd in commands:
        subprocess.run(cmd, check=True)
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


def code_sections(objects):
    """The .text* sections of ELF64 little-endian objects: {(object, name): bytes}."""
    sections = {}
    for obj in objects:
        data = open(obj, "rb").read()
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

        def header(i):
            # sh_name, sh_offset, sh_size
            base = shoff + i * shentsize
            return (struct.unpack_from("<I", data, base)[0],
                    struct.unpack_from("<Q", data, base + 0x18)[0],
                    struct.unpack_from("<Q", data, base + 0x20)[0])
        strtab = header(shstrndx)[1]
        for i in range(shnum):
            name_off, offset, size = header(i)
            end = data.index(b"\0", strtab + name_off)
            name = data[strtab + name_off:end]
            if name.startswith(b".text"):
                sections[(obj, name)] = data[offset:offset + size]
    return sections


def instructions(command):
    """Instructions the compiler executes (valgrind callgrind, all processes)."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                        f"--callgrind-out-file={d}/cg.%p", *command], check=True,
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
        configs = [("without plugin", [c[1] for c in cmds]), ("with plugin", [c[0] for c in cmds])]
        run_all(configs[0][1])  # warm the page cache and the compiler binaries
        cpu = {c[0]: [] for c in configs}
        wall = {c[0]: [] for c in configs}
        ratios = []
        for r in range(args.rounds):
            # Alternate which goes first so drift hits both alike.
            got = {}
            for config, commands in (configs if r % 2 == 0 else configs[::-1]):
                got[config] = run_all(commands)
                cpu[config].append(got[config][0])
                wall[config].append(got[config][1])
            ratios.append(got["with plugin"][0] / got["without plugin"][0])
        objects = [c[2] for c in cmds]
        code = {}
        for config, commands in configs:
            run_all(commands)
            code[config] = code_sections(objects)
        size, functions, vertices = psg_size(objects, args.objcopy)
        counts = {}
        if args.instructions:
            for config, commands in configs:
                counts[config] = instructions(commands[0])
    print(f"{name}: {len(sources)} files, {lines} lines, -O2")
    if counts:
        base = counts["without plugin"]
        plugin = counts["with plugin"]
        print(f"  compiler instructions ({os.path.basename(sources[0])}): without plugin {base:,},"
              f" with plugin {plugin:,} ({100 * (plugin / base - 1):+.2f}%)")
    text = {config: sum(len(b) for b in code[config].values()) for config in code}
    same = code["without plugin"] == code["with plugin"]
    print(f"  .text bytes             without plugin {text['without plugin']},"
          f" with plugin {text['with plugin']}"
          f" ({100 * (text['with plugin'] / max(text['without plugin'], 1) - 1):+.1f}%),"
          f" code sections {'byte-identical' if same else 'DIFFERENT'}")
    med = statistics.median(ratios)
    print(f"  compiler CPU time       " + ", ".join(
        f"{config} median {statistics.median(cpu[config]):.3f} s"
        f" (wall {statistics.median(wall[config]):.3f} s)" for config in cpu)
        + f"; median ratio {med:.4f} ({100 * (med - 1):+.2f}%) over {args.rounds} alternating"
        f" rounds: " + " ".join(f"{x:.3f}" for x in ratios))
    print(f"  PSG                     {size} record bytes, {functions} functions, {vertices} vertices"
          f" ({size / max(lines, 1):.1f} bytes per source line)")
    sys.stdout.flush()
    return same


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin-dir", required=True, help="directory holding scalana-cc/-cxx/-fc")
    ap.add_argument("--objcopy", default="llvm-objcopy-19")
    ap.add_argument("--examples", help="examples/ directory: the largest example is measured")
    ap.add_argument("--generated-lines", type=int, default=10000,
                    help="also measure a generated C code base of at least this many lines (0: skip)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-instructions", dest="instructions", action="store_false",
                    help="do not count the compiler's instructions with valgrind (about a "
                         "minute per configuration and code base)")
    ap.add_argument("--extra", nargs="*", default=[], help="extra compiler flags")
    args = ap.parse_args()
    if args.instructions and not shutil.which("valgrind"):
        print("valgrind not found: no instruction counts")
        args.instructions = False

    identical = True
    if args.examples:
        best = None
        for d in sorted(glob.glob(os.path.join(args.examples, "*"))):
            srcs = [s for s in glob.glob(os.path.join(d, "*")) if os.path.splitext(s)[1] in WRAPPER_FOR]
            n = sum(sum(1 for _ in open(s, errors="replace")) for s in srcs)
            if srcs and (best is None or n > best[0]):
                best = (n, d, srcs)
        if best:
            identical &= bench(f"example {os.path.basename(best[1])}", sorted(best[2]), args)
    if args.generated_lines > 0:
        with tempfile.TemporaryDirectory() as gen_dir:
            # 40 functions per file average ~20 lines each: ~800 lines per file.
            files = max(1, (args.generated_lines + 799) // 800)
            subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "gen_code.py"),
                            "--out", gen_dir, "--files", str(files)], check=True)
            identical &= bench("generated code base",
                               sorted(glob.glob(os.path.join(gen_dir, "*.c"))), args)
    if not identical:
        sys.exit("the plugin changed the generated code")


if __name__ == "__main__":
    main()
