#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what is missing,
# configures and builds, then runs the requested job.
#   scripts/bootstrap.sh demo   build, then profile the bundled example at
#                               1, 2, 4 and 8 ranks, detect and print the report
#   scripts/bootstrap.sh test   build, install the exports' official readers
#                               (tests/requirements.txt) into BUILD/venv, then
#                               run the whole test suite
set -euo pipefail

job=${1:-}
case "$job" in
  demo|test) ;;
  *) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
build=${SCALANA_BUILD_DIR:-$root/build}
jobs=$(nproc)

packages=(build-essential cmake ninja-build pkg-config git
  llvm-19-dev llvm-19-tools clang-19 flang-19 libclang-rt-19-dev
  libopenmpi-dev openmpi-bin libpapi-dev papi-tools libunwind-dev
  nlohmann-json3-dev libcli11-dev libgtest-dev librapidcheck-dev zlib1g-dev python3 file
  libomp-19-dev graphviz chromium python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

echo "== configuring and building in $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSCALANA_READERS_VENV="$build/venv" >/dev/null
cmake --build "$build" -j "$jobs"

# The exports' official readers (Extra-P, Hatchet, Thicket, pycubexr) for the
# report.export.*.official tests: a venv of Debian's Python with
# tests/requirements.txt exactly as pinned. --no-deps because that file lists
# every package they import (and leaves out Extra-P's GUI); --only-binary so
# nothing is compiled here. Made again only when the pins change.
readers_venv() {
  local venv="$build/venv" req="$root/tests/requirements.txt"
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/scalana-requirements.txt"; then
    echo "== official readers: $venv is up to date"
    return
  fi
  echo "== official readers: installing tests/requirements.txt into $venv"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --no-deps --only-binary :all: --no-input \
    --disable-pip-version-check --progress-bar off -r "$req"
  cp "$req" "$venv/scalana-requirements.txt"
}

# Open MPI refuses to run as root and to start more ranks than cores unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

case "$job" in
  test) readers_venv
        ctest --test-dir "$build" --output-on-failure -j "$jobs" ;;
  demo) "$root/scripts/demo.sh" "$build" ;;
esac
