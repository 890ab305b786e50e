#!/usr/bin/env bash
# Calibration of the planner's cost model (planner/src/cost.rs) against yosys: synthesize a
# set of specs at several z with `edgeflow synth --json` (the network alone, into runs/; on
# the iCE40 nextpnr's packer also counts the logic cells), and tiny and digits inside every
# board's board top with `edgeflow synth --board` (into boards/), ask the model with
# `edgeflow cost --synth-report`, and write every pair to docs/calibration/calibration.json
# and a Markdown table to docs/calibration/calibration.md. host/tests/calibration.rs holds
# the model to these runs and checks that they are of today's Verilog. Rerun after any datapath change; then
# `edgeflow cost --fit docs/calibration/runs --board icebreaker` (and nexys4-ddr) prints the
# refitted `[fit]` table for the board files, and `COST_ONLY=1` reruns the comparison.
#
# Usage: [JOBS=N] [COST_ONLY=1 | RESUME=1] docs/calibration/reproduce.sh [CASE-FILTER]
#        (CASE-FILTER: a substring of "spec@z:target" or "spec@z:top:board"; COST_ONLY: reuse
#        the synthesis reports; RESUME: reuse those that record which Verilog they are of)
# Needs yosys and jq. Takes minutes per case on a loaded 2-core machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cargo build --release -q -p edgeflow
ef="$root/target/release/edgeflow"
runs="$here/runs"
boards="$here/boards"
mkdir -p "$runs" "$boards"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# spec file | z (comma-separated, empty: the spec's own) | yosys target, or `top` for the
# board's board top | board of the model [| DSP budget: the spec's dsp_multipliers, the
# rest of the multipliers built from logic]
cases=(
  "specs/tiny.toml||ice40-up5k|icebreaker"
  "specs/tiny.toml|1,1|ice40-up5k|icebreaker"
  "specs/digits.toml|1,1|ice40-up5k|icebreaker"
  "specs/digits.toml||ice40-up5k|icebreaker"
  "docs/calibration/specs/small-a.toml||ice40-up5k|icebreaker"
  "docs/calibration/specs/small-b.toml||ice40-up5k|icebreaker"
  "docs/calibration/specs/small-c.toml||ice40-up5k|icebreaker"
  "docs/calibration/specs/small-d.toml||ice40-up5k|icebreaker"
  "specs/tiny.toml||ecp5-85k|ulx3s-85f"
  "docs/calibration/specs/small-a.toml||ecp5-85k|ulx3s-85f"
  "docs/calibration/specs/small-b.toml||ecp5-85k|ulx3s-85f"
  "docs/calibration/specs/small-c.toml||ecp5-85k|ulx3s-85f"
  "docs/calibration/specs/small-d.toml||ecp5-85k|ulx3s-85f"
  "specs/dey-mnist.toml|32,16|ecp5-85k|ulx3s-85f"
  "specs/tiny.toml||ecp5-85k|ulx3s-85f|0"
  "docs/calibration/specs/small-a.toml||ecp5-85k|ulx3s-85f|0"
  "docs/calibration/specs/small-d.toml||ecp5-85k|ulx3s-85f|0"
  "specs/tiny.toml||xc7a100t|nexys4-ddr"
  "docs/calibration/specs/small-a.toml||xc7a100t|nexys4-ddr"
  "docs/calibration/specs/small-b.toml||xc7a100t|nexys4-ddr"
  "docs/calibration/specs/small-c.toml||xc7a100t|nexys4-ddr"
  "docs/calibration/specs/small-d.toml||xc7a100t|nexys4-ddr"
  "specs/dey-mnist.toml|32,16|xc7a100t|nexys4-ddr"
  "specs/tiny.toml||top|icebreaker"
  "specs/tiny.toml|1,1|top|icebreaker"
  "specs/tiny.toml|2,2|top|icebreaker"
  "specs/digits.toml||top|icebreaker"
  "specs/tiny.toml||top|alchitry-cu"
  "specs/digits.toml||top|alchitry-cu"
  "specs/tiny.toml||top|nexys4-ddr"
  "specs/digits.toml||top|nexys4-ddr"
  "specs/tiny.toml||top|ulx3s-12f"
  "specs/digits.toml||top|ulx3s-12f"
  "specs/tiny.toml||top|ulx3s-45f"
  "specs/digits.toml||top|ulx3s-45f"
  "specs/tiny.toml||top|ulx3s-85f"
  "specs/digits.toml||top|ulx3s-85f"
)

one_case() {
  local out="$1" spec="$2" target="$3" board="$4" id="$5"
  local start=$(date +%s)
  # COST_ONLY=1: keep the synthesis reports, recompute the model's side (after a refit);
  # RESUME=1: keep the reports of today's Verilog (those with a verilog_key), run the rest
  if { [ -n "${COST_ONLY:-}" ] || { [ -n "${RESUME:-}" ] && jq -e .verilog_key "$out.synth.json" >/dev/null 2>&1; }; } &&
    [ -s "$out.synth.json" ]; then
    "$ef" cost --spec "$spec" --board "$board" --synth-report "$out.synth.json" --json >"$out.cost.json"
    return
  fi
  local what=(--target "$target")
  if [ "$target" = top ]; then what=(--board "$board"); fi
  "$ef" synth --spec "$spec" "${what[@]}" --json >"$out.synth.json" 2>"$out.synth.err" ||
    echo "$id: edgeflow synth failed or the design does not fit: $(tail -1 "$out.synth.err")" >&2
  echo "$id: $(( $(date +%s) - start )) s" >&2
  "$ef" cost --spec "$spec" --board "$board" --synth-report "$out.synth.json" --json >"$out.cost.json"
}

# JOBS cases at a time (default 1)
jobs_max="${JOBS:-1}"
for c in "${cases[@]}"; do
  IFS='|' read -r spec z target board dsp <<<"$c"
  name="$(basename "$spec" .toml)"
  tag="$name"
  if [ -n "$z" ]; then tag="$tag@z${z//,/-}"; fi
  if [ -n "$dsp" ]; then tag="$tag@dsp$dsp"; fi
  if [ "$tag" != "$name" ]; then
    # the same spec with its z line replaced and the DSP budget after its name
    cp "$spec" "$work/$tag.toml"
    if [ -n "$z" ]; then sed -i "s/^z = \[[^]]*\]/z = [$z]/" "$work/$tag.toml"; fi
    if [ -n "$dsp" ]; then sed -i "/^name = /a dsp_multipliers = $dsp" "$work/$tag.toml"; fi
    spec="$work/$tag.toml"
  fi
  id="$tag:$target"
  if [ "$target" = top ]; then
    id="$tag:top:$board"
    out="$boards/$tag-$board"
  else
    out="$runs/$tag-$target"
  fi
  if [ -n "${1:-}" ] && [[ "$id" != *"$1"* ]]; then continue; fi
  echo "== $id" >&2
  one_case "$out" "$spec" "$target" "$board" "$id" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done
done
wait

# every case: spec, z, target, and per resource predicted / synthesized / ratio
# (board tops: with what synthesis says, nothing over the part, next to the model's verdict)
for f in "$boards"/*.cost.json; do
  jq -s '.[0] + {top: true, real_fits: ([.[1].table.rows[] | .used <= .available] | all)}' \
    "$f" "${f%.cost.json}.synth.json"
done | jq -s '[.[] | {spec, z, board, target, top, rows, fits, real_fits}]' >"$work/boards.json"
jq -s '[.[] | {spec, z, lut_multipliers: .usage.lut_multipliers, board, target, rows}]' "$runs"/*.cost.json |
  jq -s '.[0] + .[1]' - "$work/boards.json" >"$here/calibration.json"
docs/tables.sh calibration "$here/calibration.json" >"$here/calibration.md"
cat "$here/calibration.md"
# the calibration table of docs/results.md
docs/tables.sh update docs/results.md docs/hardware.md
