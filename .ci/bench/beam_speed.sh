#!/usr/bin/env bash
# Throughput of the Beam pipeline (label/beam, local prism runner) against
# pate predict on the same rows: generates a public file (.ci/bench/gen.go),
# saves a labeler with a logreg student, cuts the file into shards
# (.ci/bench/split.go), then alternates RUNS runs of each, checks that the
# union of the shards' outputs equals predict's output row for row, and
# prints every time and the medians.
#
#   bash .ci/bench/beam_speed.sh [RUNS] [ROWS] [SHARDS]     (default 5 4000000 32)
#
# It needs about 3 GB in $PATE_BENCH_DIR (default /tmp/pate-beam-bench;
# /dev/shm keeps the disk out of the figures); remove it afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5} rows=${2:-4000000} shards=${3:-32}
dir=${PATE_BENCH_DIR:-/tmp/pate-beam-bench}
mkdir -p "$dir"
go build -o "$dir/pate" .
(cd label/beam && go build -o "$dir/pate-beam" ./cmd/pate-beam)
if [ ! -f "$dir/shards/part-00000.parquet" ] || [ "$(cat "$dir/rows" 2>/dev/null)" != "$rows $shards" ]; then
  rm -rf "$dir/shards"
  go run .ci/bench/gen.go -dir "$dir" -private 100000 -public "$rows" -features 14 -classes 2
  go run .ci/bench/split.go -in "$dir/public.parquet" -n "$shards" -dir "$dir/shards"
  "$dir/pate" label -q --no-ledger --seed 1 --private "$dir/private.parquet" --label label --public "$dir/public.parquet" \
    --epsilon 2 --delta 1e-5 --max-queries 2000 --student logreg --save-labeler "$dir/bench.labeler" -o "$dir/labelled.arrow"
  echo "$rows $shards" > "$dir/rows"
fi
# t times a command into $last; a failing command stops the script (a full
# disk once made every later run "fast").
t() {
  local s e
  s=$(date +%s.%N)
  if ! "$@" >/dev/null 2>"$dir/err"; then cat "$dir/err" >&2; echo "failed: $*" >&2; exit 1; fi
  e=$(date +%s.%N)
  last=$(echo "$e - $s" | bc)
}
p=() b=()
for i in $(seq "$runs"); do
  rm -rf "$dir/out" "$dir/predict.arrow" && mkdir "$dir/out"
  t "$dir/pate-beam" --labeler "$dir/bench.labeler" --input "$dir/shards" --output_dir "$dir/out"; b+=("$last")
  t "$dir/pate" predict --labeler "$dir/bench.labeler" --public "$dir/public.parquet" -o "$dir/predict.arrow"; p+=("$last")
  echo "run $i: beam ${b[-1]} s, predict ${p[-1]} s"
done
go run .ci/bench/same_rows.go "$dir/predict.arrow" $(ls "$dir"/out/part-*.arrow)
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mb=$(med "${b[@]}") mp=$(med "${p[@]}")
echo "medians over $runs runs, $rows rows in $shards shards: beam $mb s ($(echo "$rows / $mb" | bc) rows/s), predict $mp s ($(echo "$rows / $mp" | bc) rows/s), ratio $(echo "scale=2; $mb / $mp" | bc)"
