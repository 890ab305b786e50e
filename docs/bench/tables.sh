#!/usr/bin/env bash
# The README's Markdown tables from an `edgeflow bench --json` file: every backend, then every
# board projection. Usage: docs/bench/tables.sh docs/bench/dey-mnist.json   (needs jq)
set -euo pipefail
jq -r '
  def sig: if . >= 100 then round elif . >= 10 then (. * 10 | round) / 10 else (. * 100 | round) / 100 end | tostring;
  def si: if . == null then "–" elif . >= 1e9 then "\(. / 1e9 | sig) G" elif . >= 1e6 then "\(. / 1e6 | sig) M"
          elif . >= 1e3 then "\(. / 1e3 | sig) k" else (. | sig) end;
  def x: if . == null then "–" elif . >= 0.01 then "\((. * 100 | round) / 100)×"
         else (log10 | floor) as $e | "\((. / pow(10; $e) * 10 | round) / 10)e\($e)×" end;
  def best_float: [.backends[] | select(.backend == "float" or .backend == "sparse-f32") | .train_samples_per_second_cpu // .train_samples_per_second] | max;
  best_float as $bf |
  ([.backends[] | select(.backend == "dense") | .train_samples_per_second_cpu // .train_samples_per_second][0]) as $dense |
  "| backend | samples | train samples/s (wall) | train samples/s (thread CPU) | infer samples/s | train edge-ops/s (thread CPU if measured) | vs sparse float | vs dense | bit-exact |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---|",
  (.backends[] | select(.available) |
    "| \(.backend) | \(.samples) | \(.train_samples_per_second | si) | \(.train_samples_per_second_cpu | si) | \(.infer_samples_per_second | si) | \((.train_edge_ops_per_second_cpu // .train_edge_ops_per_second) | si) | \(((.train_samples_per_second_cpu // .train_samples_per_second) / $bf) | x) | \(((.train_samples_per_second_cpu // .train_samples_per_second) / $dense) | x) | \(if .bit_exact == true then "yes" elif .bit_exact == false then "NO" else "–" end) |"),
  "",
  "| board | clock | clock from | clocks/sample | from | samples/s | vs sparse float | vs dense | vs reference |",
  "|---|---:|---|---:|---|---:|---:|---:|---:|",
  (.projections[] |
    "| \(.board) | \(.clock_mhz | sig) MHz | \(.clock_source) | \(.clocks_per_sample * 1000 | round / 1000) | \(.clocks_source) | \(.samples_per_second | si) | \(.samples_per_second / $bf | x) | \(.speedup_vs_dense | x) | \(.speedup_vs_reference | x) |")
' "$1"
