#!/usr/bin/env bash
# Linked boards against their plan: for each spec and chain, `edgeflow plan` (with the row's
# flags: digits and dey-mnist are split over both boards, though one alone is as fast or
# faster) and then
# `edgeflow sim --plan P --engine verilator --linked --json` (every board its Verilog and its
# own links, clocks 300 ppm apart), collected in docs/bench/linked.json. docs/tables.sh
# renders the table from it.
# Usage: docs/bench/linked.sh [SAMPLES]   (default 200; needs verilator and jq)
set -euo pipefail
cd "$(dirname "$0")/../.."
samples="${1:-200}"
cargo build --release -q -p edgeflow
ef=target/release/edgeflow
rows=(
  "digits|icebreakerx2|--all-boards"
  "dey-mnist|ulx3s-85fx2|--all-boards"
)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out=docs/bench/linked.json
for r in "${rows[@]}"; do
  IFS='|' read -r spec boards flags <<<"$r"
  # shellcheck disable=SC2086
  "$ef" plan --spec "specs/$spec.toml" --boards "$boards" $flags -o "$work/$spec.json" --json >/dev/null
  sim=$("$ef" sim --plan "$work/$spec.json" --engine verilator --linked --samples "$samples" --json)
  # the plan's path is a temporary one; the build time varies from run to run
  jq -n --arg spec "$spec" --arg boards "$boards" --argjson sim "$sim" \
    '{spec: $spec, boards: $boards, sim: ($sim | del(.plan, .build_seconds))}'
done | jq -s . >"$work/linked.json"
chmod 644 "$work/linked.json"
mv "$work/linked.json" "$out"
docs/tables.sh linked "$out"
