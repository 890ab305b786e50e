#!/usr/bin/env bash
# digits over two iCEBreakers, split by the planner (`--all-boards`: one board alone is as
# fast), built as linked boards: each stage's bitstream with its board-to-board link on the
# PMOD pins of boards/icebreaker.toml (yosys synth_ice40, nextpnr-ice40, icepack, static
# timing with the multiplies timed), placement seeds tried until one meets the 30 MHz clock.
# About ten minutes on one core; the suite builds two stages of a smaller spec
# (host/tests/flow/bitstream_linked.rs). docs/bench/linked.sh co-simulates the same plan.
#
#   docs/ice40/linked.sh [OUT_DIR]     (default: out/ice40-linked)
#
# Writes docs/ice40/linked-digits-icebreakerx2.json (the bitstream report). Needs yosys,
# nextpnr-ice40, icepack (./test.sh installs them) and jq.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/ice40-linked}
mkdir -p "$out"
cargo build --release -q -p edgeflow
ef=target/release/edgeflow
name=linked-digits-icebreakerx2
"$ef" plan --spec specs/digits.toml --boards icebreakerx2 --all-boards -o "$out/plan.json" --json >/dev/null
# A stage that misses its clock makes the command fail after the report is written: the
# report is kept either way.
"$ef" bitstream --plan "$out/plan.json" --seed 1,2,3,4,5,6 -o "$out/bits" --json >"$out/bits.json" || true
# the report names files under OUT_DIR; the committed copy keeps what does not depend on it
jq 'del(.plan, .stages[].bitstream, .stages[].files)' "$out/bits.json" >"$out/$name.json"
tmp="$(mktemp "docs/ice40/$name.json.XXXXXX")"
cp "$out/$name.json" "$tmp"
chmod 644 "$tmp"
mv "$tmp" "docs/ice40/$name.json"
jq -c '.stages[] | {stage, fits, fmax_mhz, clock_mhz, timing_met}' "docs/ice40/$name.json"
