#!/bin/sh
# Hardware cost of FF's product rule (`ff_products`, docs/design.md step 2): yosys
# synthesis of the same network with products rounded (the default) and saturated, on the
# iCE40 UP5K and the XC7A100T, and the block cycle from `edgeflow spec check`. Writes
# ff-products-cost.json next to this script (OUT=FILE writes elsewhere).
# Usage: docs/bench/ff-products-cost.sh [SPEC ...]   (default: specs/tiny.toml specs/digits.toml)
set -eu
cd "$(dirname "$0")/../.."
cargo build --release -p edgeflow
bin=./target/release/edgeflow
out=${OUT:-docs/bench/ff-products-cost.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- specs/tiny.toml specs/digits.toml
rows=""
for spec in "$@"; do
  name=$(basename "$spec" .toml)
  for rule in rounded saturated; do
    # ReLU hidden layers: the activation whose products leave the range
    sed -e 's/^activation *=.*/activation = "relu"/' -e "/^ff_products/d" "$spec" |
      awk -v r="$rule" '/^\[/ && !done { print "ff_products = \"" r "\""; done=1 } { print }' \
      > "$tmp/$name-$rule.toml"
    block=$($bin spec check --spec "$tmp/$name-$rule.toml" --json | jq '.derived.block_cycle_clocks')
    for target in ice40-up5k xc7a100t; do
      echo "synth $name $rule $target" >&2
      $bin synth -q --spec "$tmp/$name-$rule.toml" --target "$target" --json > "$tmp/r.json"
      row=$(jq -c --arg s "$name" --arg r "$rule" --arg t "$target" --argjson b "$block" \
        '{spec: $s, ff_products: $r, target: $t, block_cycle_clocks: $b,
          used: ([.table.rows[] | {(.resource): .used}] | add), cells: .table.cells}' "$tmp/r.json")
      rows="$rows${rows:+,}$row"
    done
  done
done
echo "[$rows]" | jq . > "$out.tmp" && mv "$out.tmp" "$out"
jq -r '.[] | "\(.spec)\t\(.ff_products)\t\(.target)\tblock cycle \(.block_cycle_clocks)\t\(.used | tostring)"' "$out"
