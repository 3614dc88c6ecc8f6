"""What the benchmarks' programs print: one `name value` pair per line."""
import subprocess
import sys


def run_figures(cmd, env):
    """Runs CMD under ENV; returns its `name value` lines as {name: float}.
    Exits with the command's error output when it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    out = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out
