#!/usr/bin/env bash
# The ScalAna demo: builds examples/cg with one rank's injected delay, shows
# its Program Structure Graph, profiles it at 1, 2, 4 and 8 ranks and prints
# the root-cause report, which should name the loop marked ROOT CAUSE in
# examples/cg/cg.c.
#   scripts/demo.sh BUILD_DIR      (BUILD_DIR holds bin/scalana and the wrappers)
# Everything it writes goes to BUILD_DIR/demo.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 BUILD_DIR   (a configured and built ScalAna build directory)" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$build/bin
work=$build/demo
step="starting"
trap 'echo "demo: FAILED while $step" >&2' ERR

for tool in scalana scalana-cc scalana-psg scalana-prof scalana-detect; do
  if [ ! -x "$bin/$tool" ]; then
    echo "demo: $bin/$tool is missing: build first (cmake --build $build)" >&2
    exit 1
  fi
done

# Open MPI: we may run as root, and 4 and 8 ranks share this machine's cores;
# waiting ranks must yield the CPU to the ranks that compute.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

step="building examples/cg with scalana-cc"
echo "== demo: $step"
mkdir -p "$work"
cd "$work"
rm -f cg
make -f "$root/examples/cg/Makefile" SCALANA_BIN="$bin/"

step="reading the Program Structure Graph"
echo "== demo: $step (scalana psg ./cg)"
"$bin/scalana" psg ./cg | tail -n 1

runs=()
for np in 1 2 4 8; do
  step="profiling at $np ranks"
  echo "== demo: $step: mpirun -np $np scalana prof -o runs/cg-np$np -- ./cg --inject"
  rm -rf "runs/cg-np$np"
  mpirun --oversubscribe --allow-run-as-root -np "$np" \
    "$bin/scalana" prof -o "runs/cg-np$np" -- ./cg --inject
  runs+=("runs/cg-np$np")
done

step="detecting the root causes"
echo "== demo: $step (scalana detect ${runs[*]})"
# A weak-scaling experiment (the work per rank is the same at every scale):
# the default --scaling auto infers it from the computation time per rank.
"$bin/scalana" detect "${runs[@]}"
echo "== demo: done; the root cause injected is examples/cg/cg.c:$(grep -n '// ROOT CAUSE' "$root/examples/cg/cg.c" | cut -d: -f1)"
