#!/usr/bin/env bash
# The MPI runtime's cost on one machine (docs/hardware.md, "Across hosts with MPI"):
#  1. the link alone: round trips of boundary vectors between two ranks (host/examples/mpi_link.rs),
#     giving a latency and a bandwidth for the planner's link model -> docs/bench/mpi-link-BTL.json
#  2. the runtime: per-sample training time of the same plan in one process (one thread per
#     stage) and under mpirun (one rank per stage) -> docs/bench/mpi-overhead-BTL.json
# Each is repeated (REPEAT, default 5): on a shared machine the spread is part of the answer.
# Loopback only: Open MPI's TCP transport on lo, or shared memory (vader), as BTL says.
#
# Usage: docs/bench/mpi-overhead.sh [BTL]     BTL: tcp (default) or vader
set -euo pipefail
cd "$(dirname "$0")/../.."
btl=${1:-tcp}
repeat=${REPEAT:-5}
cargo build --release -q -p edgeflow --features mpi --bins --examples
bin=target/release/edgeflow
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mca=(--oversubscribe --mca btl "self,$btl" --mca oob_tcp_if_include lo)
[[ $btl == tcp ]] && mca+=(--mca btl_tcp_if_include lo)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for i in $(seq "$repeat"); do
  mpirun "${mca[@]}" -np 2 target/release/examples/mpi_link 2000 > "$tmp/link$i.json"
done
jq -s --arg btl "$btl" '{btl: $btl, runs: .}' "$tmp"/link*.json > "docs/bench/mpi-link-$btl.json"

# dey-mnist split over two boards: a small network, so the exchange is a visible share
"$bin" plan --spec specs/dey-mnist.toml --boards icebreakerx2 -o "$tmp/plan.json" > /dev/null
args=(train --plan "$tmp/plan.json" --backend reference --epochs 3 --json)
for i in $(seq "$repeat"); do
  "$bin" "${args[@]}" > "$tmp/one$i.json"
  mpirun "${mca[@]}" -np 2 "$bin" "${args[@]}" > "$tmp/mpi$i.json" 2> /dev/null
done
jq -s --arg btl "$btl" --argjson n "$repeat" '
  def us: 1e6 / .samples_per_second;
  . as $all
  | [range($n) | {one: ($all[2 * .] | us), mpi: ($all[2 * . + 1] | us),
                  same_bits: ($all[2 * .].state_sha256 == $all[2 * . + 1].state_sha256)}]
  | {btl: $btl, spec: "dey-mnist", plan: "icebreakerx2", epochs: 3,
     us_per_sample: ., overhead_us_per_sample: [.[] | .mpi - .one]}' \
  $(for i in $(seq "$repeat"); do echo "$tmp/one$i.json" "$tmp/mpi$i.json"; done) \
  > "docs/bench/mpi-overhead-$btl.json"
jq -c '{latency_us: [.runs[].latency_us], mbps: [.runs[].mbps]}' "docs/bench/mpi-link-$btl.json"
jq -c '{overhead_us_per_sample, same_bits: [.us_per_sample[].same_bits]}' "docs/bench/mpi-overhead-$btl.json"
