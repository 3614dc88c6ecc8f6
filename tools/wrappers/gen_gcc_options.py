#!/usr/bin/env python3
"""Regenerates gcc_options.inc: the GCC-only options the compiler wrappers drop.

The wrappers promise to accept what the GCC-based mpicc/mpicxx/mpif90 of the
same Debian accept (docs/static.md section 2). This script asks GCC which
-f, -m and -W options it knows (`--help=` classes of gcc, g++ and gfortran),
gives each one, and its -fno-/-Wno- form, to GCC and to the clang/flang the
wrappers drive, and records the options GCC accepts and clang or flang either
rejects ("unknown argument", flang's "Only -Werror is supported") or accepts
only to ignore with a warning ("optimization flag ... is not supported",
"unknown warning option", "argument unused" also when linking). Dropping an
option of the second kind changes no code: the compiler ignored it.

Run it again when the compilers change:
  tools/wrappers/gen_gcc_options.py --clang clang-19 --clangxx clang++-19 \
      --flang flang-new-19 -o tools/wrappers/gcc_options.inc
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

HELP_CLASSES = {
    "c": ["common", "optimizers", "warnings", "c", "target"],
    "c++": ["common", "optimizers", "warnings", "c++", "target"],
    "fortran": ["common", "optimizers", "warnings", "fortran", "target"],
}
SOURCES = {
    "c": ("t.c", "int main(void) { return 0; }\n"),
    "c++": ("t.cpp", "int main() { return 0; }\n"),
    "fortran": ("t.f90", "program t\nend program t\n"),
}


# Values to try for an option's placeholder, by the placeholder's spelling
# (GCC rejects some, e.g. a free-form line length of 1).
def sample_values(spec):
    if spec.startswith("["):
        choices = spec.strip("[]").split("|")
        return ["bounds"] if choices == ["..."] else choices[:1]
    inner = spec.strip("<>")
    if "|" in inner:
        return inner.split("|")[:1]
    return ["1", "132", "0", "x"]


# GCC families its --help does not list one by one: (forms, entry, prefix).
EXTRA_FORMS = [
    (["-fopt-info-vec-missed"], "-fopt-info", True),
    (["-fdump-tree-all"], "-fdump-tree-", True),
    (["-fdump-ipa-all"], "-fdump-ipa-", True),
    (["-fdump-rtl-all"], "-fdump-rtl-", True),
    (["-ftree-vectorizer-verbose=2"], "-ftree-vectorizer-verbose=", True),
    (["--param=max-inline-insns-single=10"], "--param=", True),
]


def gcc_options(gcc, classes, warnings):
    """(forms to try on the compilers, table entry, entry is a prefix)."""
    seen, out = set(), list(EXTRA_FORMS)
    for cls in classes:
        text = subprocess.run([gcc, "--help=" + cls], capture_output=True, text=True).stdout
        for line in text.splitlines():
            m = re.match(r"^\s+(-[fmW][^\s]*)", line)
            if not m:
                continue
            opt = m.group(1)
            if opt.startswith(("-Wl,", "-Wa,", "-Wp,")) or opt == "-W":
                continue
            if opt.startswith("-W") and not warnings:
                continue
            # -name=<value>, -name=[a|b], -name-<n>: a joined value.
            pm = re.match(r"^(-[^<\[=]*?)(=|-)?([<\[].*)$", opt)
            if pm:
                stem, sep = pm.group(1), pm.group(2) or ""
                forms = [([stem + sep + v for v in sample_values(pm.group(3))], stem + sep, True)]
            elif opt.endswith("="):
                forms = [([opt + v for v in sample_values("")], opt, True)]
            elif re.search(r"=(filename|name)?(,\.\.\.)?$", opt):
                # -name=filename,...: GCC's help names the value in words.
                stem = opt[:opt.index("=") + 1]
                forms = [([stem + "x"], stem, True)]
            else:
                forms = [([opt], opt, False)]
                neg = None
                if opt.startswith("-fno-"):
                    neg = "-f" + opt[5:]
                elif opt.startswith("-f"):
                    neg = "-fno-" + opt[2:]
                elif opt.startswith("-Wno-"):
                    neg = "-W" + opt[5:]
                elif opt.startswith("-W"):
                    neg = "-Wno-" + opt[2:]
                elif opt.startswith("-mno-"):
                    neg = "-m" + opt[5:]
                elif opt.startswith("-m"):
                    neg = "-mno-" + opt[2:]
                if neg:
                    forms.append(([neg], neg, False))
            for f in forms:
                if f[1] not in seen:
                    seen.add(f[1])
                    out.append(f)
    return out


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


IGNORED = re.compile(
    r"optimization flag '.*' is not supported|unknown warning option|"
    r"the warning option '.*' is not supported|argument unused during compilation")
REJECTED = re.compile(r"unknown argument|Only `-Werror` is supported")


def classify(lang, gcc, compiler, forms, workdir):
    """rejected or ignored (GCC-only), accepted, or None (GCC rejects it, or
    the compiler rejects only this value), for the first form GCC accepts."""
    src = SOURCES[lang][0]
    for form in forms:
        rc, err = run([gcc, form, "-c", src, "-o", "/dev/null"], workdir)
        if rc == 0 and "unrecognized" not in err and "not supported" not in err:
            break
    else:
        return None
    rc, err = run([compiler, form, "-c", src, "-o", "/dev/null"], workdir)
    if rc != 0:
        return "rejected" if REJECTED.search(err) else None
    if not IGNORED.search(err):
        return "accepted"
    if "argument unused during compilation" in err:
        # A link option is used when linking: only drop what the link ignores too.
        rc, err = run([compiler, form, src, "-o", os.path.join(workdir, "a.out")], workdir)
        if rc != 0 or "argument unused" not in err:
            return "accepted"
    return "ignored"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gcc", default="gcc")
    ap.add_argument("--gxx", default="g++")
    ap.add_argument("--gfortran", default="gfortran")
    ap.add_argument("--clang", default="clang-19")
    ap.add_argument("--clangxx", default="clang++-19")
    ap.add_argument("--flang", default="flang-new-19")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    pairs = {"c": (args.gcc, args.clang), "c++": (args.gxx, args.clangxx),
             "fortran": (args.gfortran, args.flang)}
    versions = {}
    for tool in [args.gcc, args.gxx, args.gfortran, args.clang, args.clangxx, args.flang]:
        versions[tool] = subprocess.run([tool, "--version"], capture_output=True,
                                        text=True).stdout.splitlines()[0]
    tables = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name, text in SOURCES.values():
            with open(os.path.join(workdir, name), "w") as f:
                f.write(text)
        for lang, (gcc, compiler) in pairs.items():
            # flang takes no -W option but -Werror: the wrapper handles them
            # all by rule, not by table.
            opts = gcc_options(gcc, HELP_CLASSES[lang], warnings=lang != "fortran")
            with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
                kinds = list(pool.map(
                    lambda o: classify(lang, gcc, compiler, o[0], workdir), opts))
            # A prefix entry must not swallow an option the compiler takes
            # (gfortran's -ffixed-<register> against flang's -ffixed-form).
            accepted = [f for o, k in zip(opts, kinds) if k == "accepted" for f in o[0]]
            rows = set()
            for o, k in zip(opts, kinds):
                if k not in ("rejected", "ignored"):
                    continue
                if o[2] and any(a.startswith(o[1]) for a in accepted):
                    print(f"{lang}: not a prefix entry: {o[1]}", file=sys.stderr)
                    continue
                rows.add((o[1], o[2], k))
            rows = sorted(rows)
            tables[lang] = rows
            print(f"{lang}: {len(opts)} GCC option forms, {len(rows)} GCC-only", file=sys.stderr)
    with open(args.output, "w") as out:
        out.write("// Generated by tools/wrappers/gen_gcc_options.py: GCC-only options the\n"
                  "// wrappers drop (docs/static.md section 2). Do not edit; regenerate.\n")
        for tool, v in versions.items():
            out.write(f"//   {tool}: {v}\n")
        names = {"c": "kGccOnlyC", "c++": "kGccOnlyCxx", "fortran": "kGccOnlyFortran"}
        for lang, rows in tables.items():
            out.write(f"constexpr GccOnlyOption {names[lang]}[] = {{\n")
            for text, prefix, kind in rows:
                out.write(f'    {{"{text}", {"true" if prefix else "false"}, '
                          f'{"true" if kind == "ignored" else "false"}}},\n')
            out.write("};\n")


if __name__ == "__main__":
    main()
