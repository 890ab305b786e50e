#!/usr/bin/env bash
# Calibration of the planner's cost model (planner/src/cost.rs) against yosys: synthesize a
# set of specs at several z with `edgeflow synth --json`, ask the model with `edgeflow cost
# --synth`, and write every pair to docs/calibration/calibration.json and a Markdown table
# to docs/calibration/calibration.md. Rerun after any datapath change; then
# `edgeflow cost --fit docs/calibration/runs --board icebreaker` (and nexys4-ddr) prints the
# refitted `[fit]` table for the board files, and `COST_ONLY=1` reruns the comparison.
#
# Usage: [JOBS=N] [COST_ONLY=1] docs/calibration/reproduce.sh [CASE-FILTER]
#        (CASE-FILTER: a substring of "spec@z:target"; COST_ONLY: reuse the synthesis reports)
# Needs yosys and jq. Takes minutes per case on a loaded 2-core machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
cargo build --release -q -p edgeflow
ef="$root/target/release/edgeflow"
runs="$here/runs"
mkdir -p "$runs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# spec file | z (comma-separated, empty: the spec's own) | yosys target | board of the model
cases=(
  "specs/tiny.toml||ice40-up5k|icebreaker"
  "specs/digits.toml|1,1|ice40-up5k|icebreaker"
  "specs/digits.toml||ice40-up5k|icebreaker"
  "specs/digits.toml|4,2|ice40-up5k|icebreaker"
  "docs/calibration/specs/small-a.toml||ice40-up5k|icebreaker"
  "docs/calibration/specs/small-b.toml||ice40-up5k|icebreaker"
  "specs/tiny.toml||xc7a100t|nexys4-ddr"
  "specs/digits.toml||xc7a100t|nexys4-ddr"
  "docs/calibration/specs/small-a.toml||xc7a100t|nexys4-ddr"
  "docs/calibration/specs/small-b.toml||xc7a100t|nexys4-ddr"
)

one_case() {
  local out="$1" spec="$2" target="$3" board="$4" id="$5"
  local start=$(date +%s)
  # COST_ONLY=1: keep the synthesis reports, recompute the model's side (after a refit)
  if [ -n "${COST_ONLY:-}" ] && [ -s "$out.synth.json" ]; then
    "$ef" cost --spec "$spec" --board "$board" --synth-report "$out.synth.json" --json >"$out.cost.json"
    return
  fi
  "$ef" synth --spec "$spec" --target "$target" --json >"$out.synth.json" 2>"$out.synth.err" ||
    echo "$id: edgeflow synth failed or the design does not fit: $(tail -1 "$out.synth.err")" >&2
  echo "$id: $(( $(date +%s) - start )) s" >&2
  "$ef" cost --spec "$spec" --board "$board" --synth-report "$out.synth.json" --json >"$out.cost.json"
}

# JOBS cases at a time (default 1)
jobs_max="${JOBS:-1}"
for c in "${cases[@]}"; do
  IFS='|' read -r spec z target board <<<"$c"
  name="$(basename "$spec" .toml)"
  if [ -n "$z" ]; then
    tag="$name@z${z//,/-}"
    # the same spec with its z line replaced
    sed "s/^z = \[[^]]*\]/z = [$z]/" "$spec" >"$work/$tag.toml"
    spec="$work/$tag.toml"
  else
    tag="$name"
  fi
  id="$tag:$target"
  if [ -n "${1:-}" ] && [[ "$id" != *"$1"* ]]; then continue; fi
  echo "== $id" >&2
  one_case "$runs/$tag-$target" "$spec" "$target" "$board" "$id" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done
done
wait

# every case: spec, z, target, and per resource predicted / synthesized / ratio
jq -s '[.[] | {spec, z, board, target, rows}]' "$runs"/*.cost.json >"$here/calibration.json"
docs/tables.sh calibration "$here/calibration.json" >"$here/calibration.md"
cat "$here/calibration.md"
# the calibration table of docs/results.md
docs/tables.sh update docs/results.md docs/hardware.md
