#!/usr/bin/env bash
# The reference model trained on 1 … all cores' threads (reference/examples/train_threads: random
# data, best of nine runs), next to what the machine gives two independent one-thread runs at
# once: the most any split of the work could reach here. Writes docs/bench/threads.json.
# Usage: docs/bench/threads.sh [SPEC] [SAMPLES]   (default specs/dey-mnist.toml, 20000)
set -euo pipefail
cd "$(dirname "$0")/../.."
spec=${1:-specs/dey-mnist.toml}
n=${2:-20000}
cargo build --release -p edgeflow-reference --example train_threads
run=target/release/examples/train_threads
cores=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$run "$spec" "$n" $(seq 1 "$cores") >"$tmp/threads.jsonl"
# every core running its own one-thread copy
for c in $(seq 1 "$cores"); do $run "$spec" "$n" 1 >"$tmp/copy-$c.jsonl" & done
wait
jq -s '{threads: .[0], copies: .[1]}' <(jq -s . "$tmp/threads.jsonl") <(cat "$tmp"/copy-*.jsonl | jq -s .) \
  | jq --arg cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" --argjson cores "$cores" \
    '. + {cpu: $cpu, logical_cpus: $cores}' >docs/bench/threads.json.tmp
mv docs/bench/threads.json.tmp docs/bench/threads.json
jq -r '.threads[] | "\(.threads) threads: \(.samples_per_second | round) samples/s, \(.state_sha256[:16])"' docs/bench/threads.json
jq -r '"independent copies: \([.copies[].samples_per_second] | add | round) samples/s together"' docs/bench/threads.json
