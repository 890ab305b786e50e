#!/usr/bin/env bash
# Resident training on the ULX3S 85F with the data set in its SDRAM, co-simulated: the board
# top itself (PLL model, UART bit by bit, SDRAM controller) under Verilator, rust-hdl's
# simulated SDRAM chip on its pins. The network is specs/dey-mnist-ulx3s.toml (1,024 inputs)
# with 1-bit inputs; the data are 12,500 digits drawn 32 x 32 (each pixel 4 x 4, shifted by up
# to two pixels each way), 10,000 of them for training. Also the one-core sparse-f32 rate of
# the same network on the same data, for comparison, and the same resident top placed and
# routed at the run's clock (its post-route Fmax). About an hour; not part of CI.
#
#   [SEEDS=1,2,...] docs/resident/ulx3s.sh [OUT_DIR] [EPOCHS] [FREQ]
#
# Defaults: out/resident, 10 epochs, the board's clock; the UART runs at the fastest rate the
# clock divides to, and the bitstream is built for that rate. SEEDS: nextpnr's placement
# seeds, tried in order until one meets the clock (default 1).
#
# Writes OUT_DIR/digits32.csv, OUT_DIR/dey-mnist-ulx3s-1bit.toml, OUT_DIR/ulx3s-resident.json
# (`edgeflow train --resident --json`), OUT_DIR/reference.json (the reference model's run,
# same state_sha256 expected), OUT_DIR/cpu.json (`edgeflow bench --backends sparse-f32`) and
# OUT_DIR/bitstream.json (`edgeflow bitstream --resident --json`) and OUT_DIR/summary.json,
# which docs/bench/resident-ulx3s.json keeps.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/resident}
epochs=${2:-10}
freq=()
[[ -n ${3:-} ]] && freq=(--freq "$3")
mkdir -p "$out"
cargo build --release -p edgeflow
ef=target/release/edgeflow

python3 - "$out/digits32.csv" <<'PY'
import gzip, sys
import numpy as np
rows = np.loadtxt(gzip.open("data/digits.csv.gz"), delimiter=",", dtype=np.int64)
rng = np.random.default_rng(1)
with open(sys.argv[1] + ".part", "w") as f:
    for i in range(12500):
        r = rows[i % len(rows)]
        img = np.kron(r[:64].reshape(8, 8), np.ones((4, 4), dtype=np.int64))
        dy, dx = rng.integers(-2, 3, size=2)
        img = np.roll(np.roll(img, dy, axis=0), dx, axis=1)
        if dy > 0: img[:dy, :] = 0
        if dy < 0: img[dy:, :] = 0
        if dx > 0: img[:, :dx] = 0
        if dx < 0: img[:, dx:] = 0
        f.write(",".join(map(str, img.reshape(-1))) + f",{r[64]}\n")
PY
mv "$out/digits32.csv.part" "$out/digits32.csv"

spec="$out/dey-mnist-ulx3s-1bit.toml"
sed -e 's/^name = "dey-mnist"/name = "dey-mnist-ulx3s-1bit"/' \
    -e 's/^dsp_multipliers = 0 .*/&\ninput_bits = 1/' specs/dey-mnist-ulx3s.toml > "$spec"
grep -q '^input_bits = 1' "$spec"

"$ef" train --spec "$spec" --data "$out/digits32.csv" --board ulx3s-85f --resident \
  --epochs "$epochs" --backend verilator "${freq[@]}" --json > "$out/ulx3s-resident.json"
"$ef" train --spec "$spec" --data "$out/digits32.csv" --epochs "$epochs" --json > "$out/reference.json"
"$ef" bench --spec "$spec" --data "$out/digits32.csv" --backends sparse-f32 --samples 2000 \
  --repeat 3 --json > "$out/cpu.json"
# a missed clock still writes the report; a design that does not build keeps its error
# the top the co-simulation ran: its clock and UART rate
if ! "$ef" bitstream --spec "$spec" --board ulx3s-85f --resident "${freq[@]}" \
  --baud "$(jq .baud "$out/ulx3s-resident.json")" --seed "${SEEDS:-1}" \
  -o "$out" --json > "$out/bitstream.json" 2> "$out/bitstream.log"; then
  [[ -s $out/bitstream.json ]] || jq -n --rawfile e "$out/bitstream.log" \
    '{error: ($e | split("\n") | map(select(startswith("error"))) | join(" "))}' > "$out/bitstream.json"
fi
# the summary docs/bench/resident-ulx3s.json keeps
jq -n --slurpfile r "$out/ulx3s-resident.json" --slurpfile c "$out/reference.json" \
  --slurpfile b "$out/cpu.json" --slurpfile s "$out/bitstream.json" \
  '{resident: $r[0],
    reference_state_sha256: $c[0].state_sha256,
    bit_exact: ($r[0].state_sha256 == $c[0].state_sha256),
    on_chip_samples_per_second: ($r[0].train_samples * $r[0].epochs
      / ($r[0].train_clocks / ($r[0].clock_mhz * 1e6))),
    cpu_sparse_f32: ($b[0].backends[] | select(.backend == "sparse-f32")),
    bitstream: ($s[0] | if .error then {error} else {clock_mhz, baud, fmax_mhz, fmax_kind,
      timing_met, seed, resources: .resources.rows} end),
    machine: $b[0].machine}' > "$out/summary.json"
cat "$out/summary.json"
