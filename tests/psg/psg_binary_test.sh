#!/usr/bin/env bash
# `scalana psg` on real binaries: builds Inputs/sites.c with scalana-cc and
# compares the printed graph with Inputs/*.expected (paths cut to basenames,
# the header's psg id and the root's end line dropped), then checks the errors a user can meet.
# usage: psg_binary_test.sh SCALANA_CC SCALANA_PSG SOURCE_DIR WORK_DIR [SCALANA_FC]
set -u
cc=$1 psg=$2 src=$3 work=$4 fc=${5:-}
mkdir -p "$work" && cd "$work" || exit 1
failures=0 passes=0
check() {  # check NAME EXPECTED_FILE ACTUAL_FILE
  if diff -u "$2" "$3"; then passes=$((passes + 1)); else
    echo "FAIL: $1"; failures=$((failures + 1)); fi
}
expect_error() {  # expect_error NAME EXPECTED_SUBSTRING COMMAND...
  local name=$1 want=$2
  shift 2
  local out
  if out=$("$@" 2>&1); then echo "FAIL: $name: succeeded"; failures=$((failures + 1)); return; fi
  if [[ "$out" != *"$want"* ]]; then
    echo "FAIL: $name: got: $out"; failures=$((failures + 1)); return; fi
  passes=$((passes + 1))
}
# The function's own range is the pass's choice (docs/formats.md), not the
# shape under test: keep only its first line.
normalise() {
  sed -E -e '1s/, psg 0x[0-9a-f]+\)$/)/' -e 's#[^ ]*/(sites\.c|ring\.f90)#\1#g' \
    -e 's/^(Root [^ ]+ [^ ]+:[0-9]+)-[0-9]+$/\1/'
}

"$cc" -O2 -g "$src/Inputs/sites.c" -o sites || { echo "FAIL: scalana-cc sites.c"; exit 1; }
"$psg" ./sites | normalise > default.out
check "default contraction" "$src/Inputs/sites.expected" default.out
"$psg" ./sites --max-loop-depth 1 | normalise > depth1.out
check "--max-loop-depth 1" "$src/Inputs/sites.depth1.expected" depth1.out
"$psg" ./sites --no-contract | normalise > raw.out
# Nothing to contract at the default depth but the nested loops: same shape.
check "--no-contract" "$src/Inputs/sites.expected" raw.out
"$psg" ./sites --format json -o sites.json
if python3 -c 'import json,sys; d=json.load(open("sites.json")); sys.exit(0 if d["summary"]["vertices_before"]==13 and d["vertices"][d["root"]]["label"]=="main" else 1)'; then
  passes=$((passes + 1)); else echo "FAIL: json"; failures=$((failures + 1)); fi
if "$psg" ./sites --format dot | head -1 | grep -q '^digraph psg {$'; then
  passes=$((passes + 1)); else echo "FAIL: dot"; failures=$((failures + 1)); fi
# The same id the runtime computes: FNV-1a 64 of the section bytes.
objcopy --dump-section scalana_psg=section.bin sites 2>/dev/null
want=$(python3 -c '
import sys
h = 0xcbf29ce484222325
for b in open("section.bin", "rb").read():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("0x%016x" % h)')
if "$psg" ./sites | head -1 | grep -q "psg $want)"; then passes=$((passes + 1)); else
  echo "FAIL: psg id is not $want"; failures=$((failures + 1)); fi

# Fortran: the program unit _QQmain is shown as main.
if [ -n "$fc" ]; then
  if "$fc" -O2 -g "$src/Inputs/ring.f90" -o ring; then
    "$psg" ./ring | normalise > ring.out
    check "Fortran program" "$src/Inputs/ring.expected" ring.out
  else
    echo "FAIL: scalana-fc ring.f90"; failures=$((failures + 1))
  fi
fi

# Built without the wrappers: with -g its structure is recovered from the
# binary (said on stderr); without, neither a PSG nor lines: an error.
${SCALANA_PLAIN_CC:-clang-19} -g -x c - -o plain-g <<<'int main(int c, char **v) { int s = 0; for (int i = 0; i < c; ++i) s += v[i][0]; return s; }'
if out=$("$psg" ./plain-g 2>&1) && [[ "$out" == *"recovered from the binary"* ]] &&
   [[ "$out" == *"Root main"* ]] && [[ "$out" == *"Loop "* ]]; then
  passes=$((passes + 1))
else
  echo "FAIL: structure from the binary: $out"; failures=$((failures + 1))
fi
# Errors: no PSG and no lines, missing, not ELF, bad option.
${SCALANA_PLAIN_CC:-clang-19} -x c - -o plain <<<'int main(void) { return 0; }'
expect_error "no section" \
  "./plain has no Program Structure Graph (section scalana_psg missing), and no line tables for main to recover its structure from: rebuild it with scalana-cc, scalana-cxx or scalana-fc, or at least with -g" \
  "$psg" ./plain
expect_error "missing file" "scalana psg: ./nonexistent: No such file or directory" "$psg" ./nonexistent
expect_error "not ELF" "not an ELF file" "$psg" "$src/Inputs/sites.c"
expect_error "bad format" "--format" "$psg" ./sites --format svg
expect_error "too large" "raise --max-vertices" "$psg" ./sites --max-vertices 5

echo "psg_binary: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
