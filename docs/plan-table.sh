#!/usr/bin/env bash
# The README's "planner against the baselines" table: predicted training samples/s of the
# planner, equal junction counts and parameter-balanced groups, and the lower bound, from
# `edgeflow plan --json` with the board files as they are. Rerun after a recalibration.
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
  "mnist-large|opencl-devicex4"
  "mnist-large|nexys4-ddr,icebreaker,nexys4-ddr,alchitry-cu"
  "mnist-large|nexys4-ddrx3,opencl-devicex3"
)
echo "| spec | boards | planner | equal junction counts | parameter-balanced | lower bound | gap |"
echo "|---|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
  IFS='|' read -r spec boards <<<"$r"
  if ! out=$("$ef" plan --spec "specs/$spec.toml" --boards "$boards" --json 2>/dev/null); then
    echo "| \`$spec\` | $boards | does not fit | | | | |"
    continue
  fi
  jq -r --arg spec "$spec" --arg boards "$boards" '
    def commas: if . < 1000 then tostring
      else ((. / 1000 | floor | commas) + "," + ("00" + (. % 1000 | tostring))[-3:]) end;
    def n: if . == null then "does not fit" else (floor | commas) end;
    def base($name): ([.baselines[] | select(.name == $name) | .figures.samples_per_second][0]) | n;
    "| `\($spec)` | \($boards) | \(.samples_per_second | n) | \(base("equal junction counts")) | \(base("parameter-balanced")) | \(.lower_bound.samples_per_second | n) | \(.gap * 100 | round)% |"' <<<"$out"
done
