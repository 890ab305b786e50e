#!/usr/bin/env bash
# Every results table of the docs, generated from the JSON (or criterion text) that a command
# wrote, so that no number is typed by hand.
#
# Usage: docs/tables.sh KIND FILE [ARG]     print one Markdown table
#        docs/tables.sh update DOC.md       regenerate every block of DOC.md that starts with
#                                           <!-- generated: KIND FILE [ARG] --> and ends with
#                                           <!-- end generated -->
# Kinds (FILE is the output of the command in brackets):
#   backends FILE       every backend of a bench run            [edgeflow bench --json]
#   projections FILE [BOARDS]  board projections of a bench run (only BOARDS, comma-separated)
#   machine FILE        the machine a bench ran on              [edgeflow bench --json]
#   summary FILE BOARD  training samples/s of every backend and of BOARD at each clock
#   resident FILE [BOARDS]  end to end with the data set resident on each board [edgeflow bench --json]
#   accuracy FILE [BOARDS]  seconds of training to the test accuracy asked [edgeflow bench --to-accuracy X --json]
#   threads FILE        the reference on 1 … all cores' threads [docs/bench/threads.sh]
#   sweep FILE          µs per training sample along a sweep    [edgeflow bench --sweep --json]
#   calibration FILE    cost model against synthesis            [docs/calibration/reproduce.sh]
#   plan FILE           planner against the baselines           [docs/plan-table.sh]
#   linked FILE         linked boards in co-simulation against their plan [docs/bench/linked.sh]
#   synth FILE          resources of one synthesis              [edgeflow synth --json]
#   train FILE          accuracy after training                 [edgeflow train --json]
#   criterion FILE      reference-model micro-benchmarks        [cargo bench, docs/bench/reproduce.sh]
# Needs jq.
set -euo pipefail
cd "$(dirname "$0")/.."

# Shared jq number formats: 3 significant digits with k/M/G, ratios as 1.23× or 1.2e-3×.
JQ_DEFS='
  def sig: if . >= 100 then round elif . >= 10 then (. * 10 | round) / 10 else (. * 100 | round) / 100 end | tostring;
  def si: if . == null then "–" elif . >= 1e9 then "\(. / 1e9 | sig) G" elif . >= 1e6 then "\(. / 1e6 | sig) M"
          elif . >= 1e3 then "\(. / 1e3 | sig) k" else (. | sig) end;
  def x: if . == null then "–" elif . >= 0.01 then "\((. * 100 | round) / 100)×"
         else (log10 | floor) as $e | "\((. / pow(10; $e) * 10 | round) / 10)e\($e)×" end;
  def commas: if . < 1000 then tostring
    else ((. / 1000 | floor | commas) + "," + ("00" + (. % 1000 | tostring))[-3:]) end;
  def rate: .train_samples_per_second_cpu // .train_samples_per_second;
  def best_float: [.backends[] | select(.backend == "float" or .backend == "sparse-f32") | rate] | max;
  def dense: [.backends[] | select(.backend == "dense") | rate][0];
  # a board row to show: every board when $only is empty, else those it names
  def picked($only): ($only | length) == 0 or (.board as $b | $only | index($b));
  def dur: if . == null then "–" elif . >= 1 then "\(. | sig) s" elif . >= 1e-3 then "\(. * 1e3 | sig) ms"
           else "\(. * 1e6 | sig) µs" end;
  def exact: if .bit_exact == true then "yes" elif .bit_exact == false then "NO" else "–" end;
'

table() {
  local kind="$1" file="$2" arg="${3:-}"
  case "$kind" in
  backends)
    jq -r "$JQ_DEFS"'
      best_float as $bf | dense as $dense |
      "| backend | samples | train samples/s (wall) | train samples/s (thread CPU) | infer samples/s | train edge-ops/s | vs sparse float | vs dense | bit-exact |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---|",
      (.backends[] | select(.available) |
        "| \(.backend) | \(.samples) | \(.train_samples_per_second | si) | \(.train_samples_per_second_cpu | si) | \(.infer_samples_per_second | si) | \((.train_edge_ops_per_second_cpu // .train_edge_ops_per_second) | si) | \(rate / $bf | x) | \(rate / $dense | x) | \(exact) |")' "$file"
    ;;
  projections)
    jq -r --arg boards "$arg" "$JQ_DEFS"'
      best_float as $bf | ($boards | split(",")) as $only |
      "| board | clock | clock from | clocks/sample | clocks from | samples/s | vs sparse float | vs dense | vs reference |",
      "|---|---:|---|---:|---|---:|---:|---:|---:|",
      (.projections[] | select(picked($only)) |
        "| \(.board) | \(.clock_mhz | sig) MHz | \(.clock_source) | \(.clocks_per_sample * 1000 | round / 1000) | \(.clocks_source) | \(.samples_per_second | si) | \(.samples_per_second / $bf | x) | \(.speedup_vs_dense | x) | \(.speedup_vs_reference | x) |")' "$file"
    ;;
  machine)
    jq -r '.machine |
      "| CPU | logical CPUs | clock | memory | OS | load average (1, 5, 15 min) |",
      "|---|---:|---:|---:|---|---|",
      "| \(.cpu) | \(.logical_cpus) | \(.cpu_mhz | round) MHz | \(.memory_gib) GiB | \(.os) | \(.load_average | map(tostring) | join(", ")) |"' "$file"
    ;;
  summary)
    jq -r --arg board "$arg" "$JQ_DEFS"'
      best_float as $bf |
      "| runs on | training samples/s | vs fastest sparse float on one core | bit-exact |",
      "|---|---:|---:|---|",
      (.backends[] | select(.available) |
        "| \(.backend)\(if .kind == "float" then " (CPU baseline)" else "" end) | \(rate | si) | \(rate / $bf | x) | \(exact) |"),
      (.projections[] | select(.board == $board and (.clocks_source | startswith("spec"))) |
        "| \(.board) at \(.clock_mhz | sig) MHz (projected, \(.clocks_per_sample) clocks/sample; clock: \(.clock_source | sub(": .*"; "") | sub(", [0-9.]+ MHz$"; ""))) | \(.samples_per_second | si) | \(.samples_per_second / $bf | x) | – |")' "$file"
    ;;
  resident)
    jq -r --arg boards "$arg" "$JQ_DEFS"'
      best_float as $bf | ($boards | split(",")) as $only |
      "| board | clock | UART | training samples × epochs | upload | epochs on chip | clocks/sample (block cycle, record feed) | end to end samples/s | vs sparse float |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      (.resident_projections[] | select(picked($only)) |
        if .fits then
          "| \(.board) | \(.clock_mhz | sig) MHz | \(.baud / 1e6 | sig) Mbaud | \(.train_samples) × \(.epochs) | \(.clocks.upload_clocks / .clock_mhz / 1e6 | dur) | \(.clocks.train_clocks / .clock_mhz / 1e6 | dur) | \(.block_cycle_clocks), \(.record_feed_clocks) | \(.end_to_end_samples_per_second | si) | \(.end_to_end_samples_per_second / $bf | x) |"
        else
          "| \(.board) | \(.clock_mhz | sig) MHz | – | does not fit: \(.resident_capacity_samples) records of \(.record_words) words | – | – | – | – | – |"
        end)' "$file"
    ;;
  accuracy)
    jq -r --arg boards "$arg" "$JQ_DEFS"'
      .to_accuracy as $t | ($boards | split(",")) as $only |
      "| trains on | epochs | samples | seconds to \($t.target * 100 | round) % test accuracy | how |",
      "|---|---:|---:|---:|---|",
      ($t.backends[] | select(.available) |
        "| \(.backend)\(if .kind == "float" then " (CPU baseline)" else "" end) | \(.epochs // "–") | \(.samples // "–") | \(if .reached then (.seconds | dur) else "not reached in \($t.max_epochs) epochs" end) | \(if .method == "trained" then "trained here" else "the reference'"'"'s samples at its measured rate" end) |"),
      ($t.projections[] | select(picked($only)) |
        "| \(.board) at \(.clock_mhz | sig) MHz (projected) | – | \(.samples) | \(if .reached then (.seconds | dur) else "–" end) | the reference'"'"'s samples at \(.samples_per_second | si) samples/s |")' "$file"
    ;;
  threads)
    jq -r "$JQ_DEFS"'
      .threads[0].samples_per_second as $one |
      "| \(.threads[0].spec) trained on | samples/s | × one thread | state SHA-256 |",
      "|---|---:|---:|---|",
      (.threads[] | "| \(.threads) thread\(if .threads > 1 then "s" else "" end) | \(.samples_per_second | si) | \(.samples_per_second / $one | x) | `\(.state_sha256[:16])…` |"),
      "| \(.copies | length) independent one-thread runs at once (the most this machine gives) | \([.copies[].samples_per_second] | add | si) | \([.copies[].samples_per_second] | add / $one | x) | – |"' "$file"
    ;;
  sweep)
    jq -r "$JQ_DEFS"'
      (.points[0].backends | map(select(.available) | .backend)) as $bs |
      (.points[0].projections | map(select(.board == "nexys4-ddr")) | map("\(.board) @ \(.clock_mhz | sig) MHz")) as $ps |
      "| point | layers | fan-out | z | edges | multipliers | clocks | " + ($bs + $ps | join(" | ")) + " |",
      "|---|---|---|---|---:|---:|---:|" + ([$bs[], $ps[]] | map("---:") | join("|")) + "|",
      (.points[] |
        "| \(.label) | \(.layers | map(tostring) | join(", ")) | \(.fan_out | map(tostring) | join(", ")) | \(.z | map(tostring) | join(", ")) | \(.edges) | \(.multipliers) | \(.block_cycle_clocks) | " +
        ([(.backends[] | select(.available) | (1e6 / rate * 100 | round / 100 | tostring)),
          (.projections[] | select(.board == "nexys4-ddr") | (1e6 / .samples_per_second * 100 | round / 100 | tostring))] | join(" | ")) + " |")' "$file"
    ;;
  calibration)
    # the networks alone, then the board tops with the model's verdict and synthesis' own;
    # logic is packed logic cells (LC) on the iCE40, LUTs elsewhere
    jq -r '
      def cell: "\(.predicted) / \(.synthesized // "-")" +
        (if .ratio then " (\((.ratio * 100 | round) / 100)×)" else "" end);
      def says: if . == true then "fits" elif . == false then "does not fit" else "near the limit" end;
      "| spec | z | target | logic pred / synth | FF pred / synth | DSP pred / synth | BRAM pred / synth |",
      "|---|---|---|---|---|---|---|",
      (.[] | select(.top | not) | "| \(.spec) | \(.z | map(tostring) | join(","))\(if (.lut_multipliers // 0) > 0 then " (\(.lut_multipliers) multipliers in logic)" else "" end) | \(.target) (\(.rows[0].resource)) | " +
        ([.rows[] | cell] | join(" | ")) + " |"),
      "",
      "| spec | z | board top | logic pred / synth | the model says | synthesis says |",
      "|---|---|---|---|---|---|",
      (.[] | select(.top) | "| \(.spec) | \(.z | map(tostring) | join(",")) | \(.board) (\(.rows[0].resource)) | \(.rows[0] | cell) | \(.fits | says) | \(.real_fits | says) |")' "$file"
    ;;
  plan)
    jq -r "$JQ_DEFS"'
      def n: if . == null then "does not fit" else (floor | commas) end;
      def base($name): ([.baselines[] | select(.name == $name) | .figures.samples_per_second][0]) | n;
      "| spec | boards | planner | equal junction counts | parameter-balanced | lower bound | gap |",
      "|---|---|---:|---:|---:|---:|---:|",
      (.[] | .spec as $s | .boards as $b |
        if .plan == null then "| `\($s)` | \($b) | does not fit | | | | |"
        else .plan | "| `\($s)` | \($b) | \(.samples_per_second | n) | \(base("equal junction counts")) | \(base("parameter-balanced")) | \(.lower_bound.samples_per_second | n) | \(.gap * 100 | round)% |"
        end)' "$file"
    ;;
  linked)
    jq -r "$JQ_DEFS"'
      "| spec | boards | link | planned samples/s | measured | measured / planned | samples | bit-exact |",
      "|---|---|---|---:|---:|---:|---:|---|",
      (.[] | .sim as $r |
        "| `\(.spec)` | \(.boards) | \($r.link_width) pins | \($r.predicted_samples_per_second | floor | commas) | \($r.steady_samples_per_second | floor | commas) | \($r.measured_over_predicted * 1000 | round | "\(. / 1000 | floor).\(("00" + (. % 1000 | tostring))[-3:])")× | \($r.samples) | \($r | exact) |")' "$file"
    ;;
  synth)
    jq -r '
      "| resource | used | available | used % |",
      "|---|---:|---:|---:|",
      (.table.rows[] | "| \(.resource) (\(.kind)) | \(.used | round) | \(.available) | \(.percent * 10 | round / 10) % |"),
      (if .fmax_mhz then "| Fmax (\(.fmax_kind)) | \(.fmax_mhz * 100 | round / 100) MHz | | |" else empty end)' "$file"
    ;;
  train)
    jq -r '
      "| spec | backend | epochs | train accuracy | test accuracy | state SHA-256 |",
      "|---|---|---:|---:|---:|---|",
      "| \(.spec) | \(.backend) | \(.history | length) | \(.train_accuracy * 10000 | round / 100) % | \(.test_accuracy * 10000 | round / 100) % | `\(.state_sha256[:16])…` |"' "$file"
    ;;
  criterion)
    # criterion prints a benchmark's name, then its time and throughput lines; the middle
    # figure of each bracket is the estimate.
    echo "| benchmark | time | throughput |"
    echo "|---|---:|---:|"
    awk '
      /^[a-z]/ { name = $1; for (i = 2; i <= NF && $i != "time:"; i++) name = name " " $i }
      /time:/ { split($0, t, "[][]"); split(t[2], tv, " "); time = tv[3] " " tv[4] }
      /thrpt:/ { split($0, r, "[][]"); split(r[2], rv, " "); printf "| %s | %s | %s |\n", name, time, rv[3] " " rv[4] }
    ' "$file"
    ;;
  *)
    echo "docs/tables.sh: unknown kind '$kind' (see the usage at the top of the script)" >&2
    exit 2
    ;;
  esac
}

# The document being rewritten; a failing table leaves the document as it was.
tmp=""
trap 'rm -f "$tmp"' EXIT

update() {
  local doc="$1"
  tmp="$(mktemp "$doc.XXXXXX")"
  local skipping=0
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $line =~ ^\<!--\ generated:\ (.*)\ --\>$ ]]; then
      printf '%s\n' "$line"
      # shellcheck disable=SC2086
      table ${BASH_REMATCH[1]}
      skipping=1
    elif [[ $line == "<!-- end generated -->" ]]; then
      printf '%s\n' "$line"
      skipping=0
    elif [ $skipping = 0 ]; then
      printf '%s\n' "$line"
    fi
  done <"$doc" >"$tmp"
  if [ $skipping = 1 ]; then
    rm -f "$tmp"
    echo "docs/tables.sh: $doc: a generated block has no <!-- end generated -->" >&2
    exit 1
  fi
  chmod --reference="$doc" "$tmp"
  mv "$tmp" "$doc"
  tmp=""
}

case "${1:-}" in
update) shift; for d in "$@"; do update "$d"; done ;;
"" | -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
*) table "$@" ;;
esac
