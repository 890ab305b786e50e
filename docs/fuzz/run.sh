#!/usr/bin/env bash
# Long fuzz run of every target: ./docs/fuzz/run.sh [EXECS] (default 1000000 per target).
# Prints executions, seconds, panics and hangs per target and writes docs/fuzz/fuzz.json.
# Runs under a 4 GiB address-space limit so a trusted size cannot take the machine's memory.
set -euo pipefail
cd "$(dirname "$0")/../.."
execs="${1:-1000000}"
seed="${FUZZ_SEED:-1}"
out=docs/fuzz/fuzz.json
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cargo build --release -q -p edgeflow-fuzz
# The host's targets (model file, serial replies) live in the edgeflow binary's tests.
cargo test --release -q -p edgeflow --bin edgeflow --no-run

ulimit -v $((4 * 1024 * 1024))
status=0
./target/release/edgeflow-fuzz "$execs" --seed "$seed" --json "$tmp/lib.jsonl" || status=$?
EDGEFLOW_FUZZ_EXECS="$execs" EDGEFLOW_FUZZ_SEED="$seed" EDGEFLOW_FUZZ_JSON="$tmp/host.jsonl" \
    cargo test --release -q -p edgeflow --bin edgeflow fuzz_long -- --ignored --nocapture || status=$?

{
    echo "{"
    echo "  \"executions_per_target\": $execs,"
    echo "  \"seed\": $seed,"
    echo "  \"targets\": ["
    cat "$tmp"/*.jsonl 2>/dev/null | sed 's/^/    /; $!s/$/,/'
    echo "  ]"
    echo "}"
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
exit "$status"
