#!/usr/bin/env bash
# The planner against the baselines: `edgeflow plan --json` on a fixed set of specs and board
# chains, with the board files as they are, collected in docs/bench/plan.json (a plan of null:
# the network fits on none of the chain's boards). docs/tables.sh renders the table from it;
# rerun after a recalibration.
# Usage: docs/plan-table.sh   (needs jq)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p edgeflow
ef=target/release/edgeflow
rows=(
  "digits|icebreaker,alchitry-cu"
  "digits|icebreakerx2"
  "dey-mnist|icebreaker,nexys4-ddr,alchitry-cu"
  "dey-mnist|nexys4-ddrx2,opencl-devicex2"
  "mnist-large|nexys4-ddrx4"
  "mnist-large|ulx3s-85fx4"
  "mnist-large|opencl-devicex4"
  "mnist-large|nexys4-ddr,icebreaker,nexys4-ddr,alchitry-cu"
  "mnist-large|nexys4-ddrx3,opencl-devicex3"
)
out=docs/bench/plan.json
tmp="$(mktemp "$out.XXXXXX")"
for r in "${rows[@]}"; do
  IFS='|' read -r spec boards <<<"$r"
  plan=$("$ef" plan --spec "specs/$spec.toml" --boards "$boards" --json 2>/dev/null) || plan=null
  # the planning time varies from run to run; the table does not use it
  jq -n --arg spec "$spec" --arg boards "$boards" --argjson plan "$plan" \
    '{spec: $spec, boards: $boards, plan: ($plan | if . == null then null else del(.planning_seconds, .planning_ms) end)}'
done | jq -s . >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
docs/tables.sh plan "$out"
