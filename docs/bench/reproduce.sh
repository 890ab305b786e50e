#!/usr/bin/env bash
# Regenerates every benchmark number and plot of docs/results.md and the README (docs/bench/),
# then the tables generated from them (docs/tables.sh update).
# Usage: docs/bench/reproduce.sh   (from anywhere; takes a few minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=docs/bench
cargo build --release -p edgeflow
ef=target/release/edgeflow
# every backend against the CPU baselines, with board projections
# dey-mnist also at the XC7A100T's synthesis Fmax (pre-route estimate of `edgeflow synth
# --spec specs/dey-mnist.toml --target xc7a100t --json`, kept in docs/calibration)
for s in dey-mnist digits; do
  report=()
  [[ $s == dey-mnist ]] && report=(--synth-report docs/calibration/dey-mnist-xc7a100t.synth.json)
  $ef bench --spec specs/$s.toml "${report[@]}" --threads 1 -o $out/$s.json --plot $out/$s.svg --plot $out/$s.png | tee $out/$s.txt
done
# seconds of training until 95 % test accuracy on digits, per backend and board projection
$ef bench --spec specs/digits.toml --backends reference,float,sparse-f32,dense,dense-minibatch,opencl \
  --to-accuracy 0.95 -o $out/digits-accuracy.json | tee $out/digits-accuracy.txt
# the reference model on every thread count, against independent runs on every core
docs/bench/threads.sh
# cost per training sample as the network grows
for w in width density z; do
  $ef bench --spec specs/dey-mnist.toml --sweep $w --samples 1000 \
    -o $out/sweep-$w.json --plot $out/sweep-$w.svg --plot $out/sweep-$w.png | tee $out/sweep-$w.txt
done
# training curve, and its final figures as JSON
$ef train --spec specs/digits.toml --epochs 30 --plot $out/digits-curve.svg
$ef train --spec specs/digits.toml --epochs 30 --plot $out/digits-curve.png --json >$out/digits-curve.json
# the planner against the baselines (docs/bench/plan.json)
bash docs/plan-table.sh
# reference-model micro-benchmarks (criterion, thread CPU time): FF/UP/BP passes, streams,
# pattern generator (SKIP_CRITERION=1 leaves them out)
[[ ${SKIP_CRITERION:-0} == 1 ]] || cargo bench -p edgeflow-reference --bench reference 2>&1 | grep -E "^(reference|pattern)|thrpt|time:" | grep -v "%" | tee $out/criterion.txt
# the planner on its largest instance, 64 junctions on 16 different boards
[[ ${SKIP_CRITERION:-0} == 1 ]] || cargo bench -p edgeflow-planner --bench plan 2>&1 | grep -E "^plan|time:" | grep -v "%" | tee $out/criterion-planner.txt
# every generated table of the docs
docs/tables.sh update docs/results.md docs/hardware.md README.md
