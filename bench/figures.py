"""What the benchmarks' programs print: one `name value` pair per line."""
import subprocess
import sys


def run_figures(cmd, env, allow_failure=False):
    """Runs CMD under ENV; returns its `name value` lines as {name: float}.
    Exits with the command's error output when it fails, unless
    ALLOW_FAILURE (a command that prints its figures either way)."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if p.returncode != 0 and not allow_failure:
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
