#!/bin/sh
# Regenerates quality.json, quality.md and the chart quality.svg/.png: the learning-quality grid on the
# bundled digits, bit-exact reference model against float, 30 epochs. Extra arguments go to
# `edgeflow quality`; OUT=DIR writes elsewhere, e.g. the grid with a spec option changed:
#   OUT=/tmp/nearest docs/quality/run.sh --set rounding=nearest
set -eu
cd "$(dirname "$0")/../.."
cargo build --release -p edgeflow
./target/release/edgeflow quality --epochs 30 -o "${OUT:-docs/quality}" "$@"
