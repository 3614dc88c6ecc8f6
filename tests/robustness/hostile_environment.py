#!/usr/bin/env python3
"""What surrounds the profile, hostile: the binary it names and the dot program.

Stages (ctest entries robustness.runs.<stage>; the `setup` stage of
hostile_runs.py is their fixture, and its Tool runs every command under the
same time and memory limits):

  stripped  the binary stripped (`strip --strip-all`, build id kept): `detect`
            says "no symbols: N samples could not be placed" with N counted
            from the profiles, what to rebuild, and no busiest rank of
            0.000 s; with its debug information in a separate file
            (gnu_debuglink) it is placed as before; a copy whose .debug_line
            lies past the end of the file is named as damaged
  dot       the HTML report's dot program ($SCALANA_DOT) hangs (and starts a
            child that would outlive it), prints a script, an event handler,
            an external link or 50 MB: `detect --format html` finishes in
            its --dot-timeout with the page written, the picture left out
            with the reason on the page and one warning, nothing inlined;
            a dot still running when detect is killed ends with it
"""
import argparse
import gzip
import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

from hostile_runs import SCALES, Tool, elf_sections


def stage_stripped(t):
    work = os.path.join(t.cases, "stripped")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tools = {name: shutil.which(name) for name in ("strip", "objcopy")}
    if not all(tools.values()):
        t.failures.append(f"binutils missing: {tools}")
        return
    docs = {np: t.doc(np) for np in SCALES}

    def placed_samples(doc):
        """Samples of rows whose recorded context holds frames of the program."""
        return sum(row[1] for r in doc["ranks"] for row in r["vertices"]
                   if doc["contexts"][row[0]])

    def binary_case(name, path):
        runs = []
        for np in SCALES:
            run = os.path.join(work, f"{name}-np{np}")
            os.makedirs(run)
            d = json.loads(json.dumps(docs[np]))
            d["meta"]["binary"] = path
            with gzip.open(os.path.join(run, "profile.json.gz"), "wt") as f:
                json.dump(d, f)
            runs.append(run)
        return runs

    stripped = os.path.join(work, "fig3-stripped")
    shutil.copy(t.binary, stripped)
    subprocess.run([tools["strip"], "--strip-all", stripped], check=True)
    with open(stripped, "rb") as f:
        sections = elf_sections(f.read())
    left = [n for n in sections if n.startswith(".debug") or n == ".symtab"]
    if ".note.gnu.build-id" not in sections or "scalana_psg" not in sections or left:
        t.failures.append(f"strip --strip-all left {sorted(sections)}")
        return
    per_run = [placed_samples(docs[np]) for np in SCALES]
    total = sum(per_run)
    if min(per_run) <= 0:
        t.failures.append(f"the runs hold no samples to place: {per_run}")
        return
    runs = binary_case("strip-all", stripped)

    def says_no_symbols(out, err):
        text = (out + err).decode()
        if "busiest rank measured 0.000 s" in text:
            return "a busiest rank of 0.000 s for ranks that hold samples"
        for np, n in zip(SCALES, per_run):
            if f"{n} samples measured, none placed (no symbols)" not in text:
                return f"the runs line does not say {n} samples at {np} rank(s) were not placed"
        if "no line tables" in text:
            return "'no line tables' for a binary with no symbols"
        return None
    t.check("stripped binary: detect", t.detect(*runs, fmt="text"), status=0,
            stderr_has=[f"{stripped}: no symbols: {total} samples could not be placed",
                        "do not strip it", "--add-gnu-debuglink"],
            verify=says_no_symbols)

    def unplaced_in_json(out, err):
        got = [r.get("unplaced_samples") for r in json.loads(out)["runs"]]
        return None if got == per_run else f"unplaced_samples {got}, expected {per_run}"
    t.check("stripped binary: detect json", t.detect(*runs), status=0, verify=unplaced_in_json)
    t.check("stripped binary: show", t.show(runs[-1]), status=0,
            stdout_has=[f"no symbols: {per_run[-1]} samples could not be placed",
                        "unplaced (no symbols)"],
            verify=lambda out, err: "a context shown as not fitting the PSG"
            if b"do not fit" in out else None)

    # Its debug information kept in a file of its own: found by the
    # gnu_debuglink, and the samples placed as with the unstripped binary.
    linked = os.path.join(work, "fig3-linked")
    shutil.copy(t.binary, linked)
    subprocess.run([tools["objcopy"], "--only-keep-debug", linked, linked + ".debug"],
                   check=True)
    subprocess.run([tools["strip"], "--strip-all", linked], check=True)
    subprocess.run([tools["objcopy"], f"--add-gnu-debuglink={linked}.debug", linked],
                   check=True)
    _, want, _, _, _ = t.run(t.detect(t.base(1), t.base(2)))
    want_causes = [(c["file"], c["line"]) for c in json.loads(want)["root_causes"]]
    if not want_causes:
        t.failures.append("the unstripped binary's runs give no root cause to compare")

    def same_causes(out, err):
        doc = json.loads(out)
        got = [(c["file"], c["line"]) for c in doc["root_causes"]]
        if b"no symbols" in err or any(r.get("unplaced_samples") for r in doc["runs"]):
            return "samples unplaced although the debug file is linked"
        return None if got == want_causes else f"root causes {got}, expected {want_causes}"
    t.check("stripped binary with a debug link: detect", t.detect(*binary_case("debuglink", linked)),
            status=0, verify=same_causes)

    # A .debug_line section header pointing past the end of the file.
    with open(t.binary, "rb") as f:
        data = bytearray(f.read())
    hdr, _, size = elf_sections(bytes(data))[".debug_line"]
    offset = len(data) + 4096
    struct.pack_into("<Q", data, hdr + 0x18, offset)
    damaged = os.path.join(work, "fig3-damaged")
    with open(damaged, "wb") as f:
        f.write(data)
    os.chmod(damaged, 0o755)
    runs = binary_case("damaged", damaged)
    t.check("binary with .debug_line past its end: detect", t.detect(*runs, fmt="text"), status=0,
            stderr_has=[f"{damaged}: damaged or truncated file: section .debug_line ({size} bytes "
                        f"at offset {offset}) ends past the end of the file ({len(data)} bytes)"],
            verify=lambda out, err: "reported as 'no line tables'" if b"no line tables" in err
            else None)
    t.check("binary with .debug_line past its end: show", t.show(runs[-1]), status=0,
            stdout_has=[f"{damaged}: damaged or truncated file: section .debug_line"])


# An SVG as Graphviz writes it, for the fake dot programs to print: with
# INJECT put inside its graph group.
DOT_SVG = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"
 "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<!-- Generated by graphviz version 2.43.0 (0)
 -->
<svg width="62pt" height="116pt"
 viewBox="0.00 0.00 62.00 116.00" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 112)">
<title>ppg</title>
<g id="node1" class="node">
<title>a</title>
<g id="a_node1"><a xlink:href="#src" xlink:title="fake&#45;dot node">
<ellipse fill="none" stroke="black" cx="27" cy="-90" rx="27" ry="18"/>
<text text-anchor="middle" x="27" y="-86.3" font-family="Times,serif" font-size="14.00">fake&#45;dot</text>
</a></g></g>%s
</g>
</svg>
"""


def ended_soon(pid):
    """True when process PID ends within 5 s (gone, or a zombie); else kills it."""
    for _ in range(500):
        try:
            with open(f"/proc/{pid}/stat") as st:
                if st.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.01)
    os.kill(int(pid), signal.SIGKILL)
    return False


def stage_dot(t):
    work = os.path.join(t.cases, "dot")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    runs = (t.base(1), t.base(2))

    def fake_dot(name, body):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        return path

    def printing(name, inject):
        svg = os.path.join(work, name + ".svg")
        with open(svg, "w") as f:
            f.write(DOT_SVG % inject)
        return fake_dot(name, f"cat > /dev/null\ncat '{svg}'\n")

    def case(name, dot, reason, picture=None, timeout=None, marker=None):
        """PICTURE: text of the picture that must be in the page (None: no picture)."""
        page = os.path.join(work, name + ".html")
        args = [t.scalana, "detect", "--format", "html", "-o", page, *runs]
        if timeout:
            args[2:2] = ["--dot-timeout", str(timeout)]

        def verify(out, err):
            if not os.path.exists(page):
                return "no page written"
            with open(page, encoding="utf-8") as f:
                text = f.read()
            warnings = [l for l in err.decode().splitlines() if "no PPG picture" in l]
            if picture:
                if warnings or "<div id=ppg " not in text or picture not in text:
                    return f"the picture was not inlined: {warnings}"
                return None
            if len(warnings) != 1 or reason not in warnings[0]:
                return f"expected one warning saying {reason!r}, got {warnings}"
            fallback = re.search(r"<p class=warn id=ppg-fallback>([^<]*)</p>", text)
            if not fallback or reason not in html.unescape(fallback.group(1)):
                return f"the page does not say {reason!r} where the picture would be"
            if "<div id=ppg " in text or "fake-dot" in text:
                return "the picture was inlined all the same"
            if marker and marker in text:
                return f"{marker!r} reached the page"
            return None
        t.check(f"dot {name}", args, status=0, verify=verify,
                env=dict(os.environ, SCALANA_DOT=dot))
        return t.last_seconds

    # The control: a well-formed picture is inlined (and so the cases below
    # fail for what they print, not for the template).
    case("graphviz-like", printing("graphviz-like", ""), None, picture="fake-dot")
    if shutil.which("dot"):
        case("graphviz", "dot", None, picture='class="node')
    # It hangs, and so does a child it started that holds its output.
    pids = os.path.join(work, "hang.pids")
    hang = fake_dot("hang", f"sleep 1000 &\necho $! > '{pids}'\necho $$ >> '{pids}'\nwait\n")
    secs = case("hang", hang, "did not finish in 3 s and was killed", timeout=3)
    if secs < 3:
        t.failures.append(f"dot hang: detect returned after {secs:.1f} s, before the 3 s timeout")
    with open(pids) as f:
        for pid in f.read().split():
            if not ended_soon(pid):
                t.failures.append(f"dot hang: its process {pid} outlived the timeout")
    # detect killed while its dot hangs: the dot goes with it.
    pid_file = os.path.join(work, "orphan.pid")
    orphan = fake_dot("orphan", f"echo $$ > '{pid_file}'\nexec sleep 1000\n")
    proc = subprocess.Popen([t.scalana, "detect", "--format", "html", "-o",
                             os.path.join(work, "orphan.html"), *runs],
                            env=dict(os.environ, SCALANA_DOT=orphan),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(3000):
        if os.path.exists(pid_file) and os.path.getsize(pid_file):
            break
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    t.checks += 1
    problem = None
    if not os.path.exists(pid_file):
        problem = "detect never started its dot program"
    else:
        with open(pid_file) as f:
            if not ended_soon(f.read().strip()):
                problem = "the dot program outlived the killed detect"
    print(f"FAIL dot orphan: {problem}" if problem else
          "ok   dot orphan: the dot program ended with the killed detect")
    if problem:
        t.failures.append(f"dot orphan: {problem}")
    marker = "alert('scalana-dot')"
    case("script", printing("script", f"<script>{marker}</script>"),
         "element <script> (not one Graphviz writes)", marker=marker)
    case("onload", printing("onload", f'<g id="x" onload="{marker}"></g>'),
         "an event-handler attribute onload in <g>", marker=marker)
    case("javascript-link", printing("javascript-link",
                                     f'<a xlink:href="&#106;avascript:{marker}"></a>'),
         "a link to something other than the page (xlink:href)", marker=marker)
    case("external-link", printing("external-link", '<a href="https://example.com/x"></a>'),
         "a link to something other than the page (href)", marker="example.com/x")
    case("foreign-object", printing("foreign-object",
                                    f"<foreignObject><p>{marker}</p></foreignObject>"),
         "element <foreignObject>", marker=marker)
    case("not-svg", printing("not-svg", "<p>"), "printed no SVG Graphviz writes")
    case("50MB", fake_dot("50MB", "cat > /dev/null\nhead -c 52428800 /dev/zero | tr '\\0' x\n"),
         "printed more than 8388608 bytes and was killed")
    case("fails", fake_dot("fails", "exit 3\n"), "failed (exit code 3)")
    case("missing", os.path.join(work, "no-such-dot"), "was not found")


STAGES = {"stripped": stage_stripped, "dot": stage_dot}


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
