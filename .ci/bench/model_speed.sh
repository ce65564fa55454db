#!/usr/bin/env bash
# The default's non-PATE mechanisms against the vote kernel, side by side:
# on a 1,000,000-row public file, the default command (which picks
# cell-histogram or dp-logreg, a model of the sensitive rows that labels
# every public row) and `--mechanism gnmax --teachers-only` (250 teachers,
# the vote kernel on every row) on the same files, alternated, with the
# medians of wall time and user CPU time and their ratio default/gnmax (the
# target is ≤ 3). Two workloads:
#
#   letter  letter's sensitive rows (mlbench, 26 classes: the default picks
#           cell-histogram), the public file letter's public rows repeated
#           to 1M (repeat.go): every row 150 times;
#   letter-distinct  the same with each integer moved by ±1 with
#           probability 0.1 (repeat.go -int-step 0.1): most rows distinct;
#   wide    gen.go's 64 features, 2 classes, 5,000 sensitive rows (the
#           default picks dp-logreg).
#
# With PATE_OLD=/path/to/an/old/pate binary, each run of the default is also
# made with it (A B A B …) and the ratio new/old printed: the before/after
# of a change.
#
#   bash .ci/bench/model_speed.sh [runs=3] [letter] [letter-distinct] [wide]
#
# Needs letter's files from .ci/utility/mlbench/make.sh in $PATE_DATASETS
# (default /tmp/pate-datasets); files go under $PATE_BENCH_DIR (default
# /tmp/pate-model-speed, 550 MB). Time on a quiet machine; the CPU columns
# move less with the load than the wall ones.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
shift || true
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(letter letter-distinct wide)
data=${PATE_DATASETS:-/tmp/pate-datasets}
dir=${PATE_BENCH_DIR:-/tmp/pate-model-speed}
mkdir -p "$dir"
go build -o "$dir/pate" .
old=${PATE_OLD:-}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# timed NAME BIN ARGS...: one run, appending "wall user" to $dir/NAME.txt.
timed() {
  local name=$1 bin=$2
  shift 2
  /usr/bin/time -f '%e %U' -o "$dir/t.txt" "$bin" label "$@" --epsilon 1 --delta 1e-5 --keep "" \
    -o "$dir/out.arrow" --quiet --no-ledger
  cat "$dir/t.txt" >> "$dir/$name.txt"
}

for w in "${workloads[@]}"; do
  case $w in
  letter)
    if [ ! -f "$dir/letter_1m.parquet" ]; then
      go run .ci/bench/repeat.go -in "$data/letter_public.parquet" -rows 1000000 -out "$dir/letter_1m.parquet"
    fi
    args=(--private "$data/letter_private.parquet" --label class --public "$dir/letter_1m.parquet")
    ;;
  letter-distinct)
    if [ ! -f "$dir/letter_1m_distinct.parquet" ]; then
      go run .ci/bench/repeat.go -in "$data/letter_public.parquet" -rows 1000000 -int-step 0.1 -out "$dir/letter_1m_distinct.parquet"
    fi
    args=(--private "$data/letter_private.parquet" --label class --public "$dir/letter_1m_distinct.parquet")
    ;;
  wide)
    if [ ! -f "$dir/wide/public.parquet" ]; then
      go run .ci/bench/gen.go -dir "$dir/wide" -private 5000 -public 1000000 -features 64
    fi
    args=(--private "$dir/wide/private.parquet" --label label --public "$dir/wide/public.parquet")
    ;;
  *)
    echo "unknown workload $w" >&2
    exit 2
    ;;
  esac
  rm -f "$dir"/default.txt "$dir"/gnmax.txt "$dir"/old.txt
  for ((i = 0; i < runs; i++)); do
    timed default "$dir/pate" "${args[@]}" --seed $((i + 1))
    timed gnmax "$dir/pate" "${args[@]}" --seed $((i + 1)) --mechanism gnmax --sigma 40 --teachers-only
    if [ -n "$old" ]; then
      timed old "$old" "${args[@]}" --seed $((i + 1))
    fi
  done
  dw=$(cut -d' ' -f1 "$dir/default.txt" | median)
  du=$(cut -d' ' -f2 "$dir/default.txt" | median)
  gw=$(cut -d' ' -f1 "$dir/gnmax.txt" | median)
  gu=$(cut -d' ' -f2 "$dir/gnmax.txt" | median)
  printf '%s: default %.2f s wall (%.2f s user), gnmax --teachers-only %.2f s (%.2f s); default/gnmax %.2f wall, %.2f user\n' \
    "$w" "$dw" "$du" "$gw" "$gu" "$(echo "$dw / $gw" | bc -l)" "$(echo "$du / $gu" | bc -l)"
  if [ -n "$old" ]; then
    ow=$(cut -d' ' -f1 "$dir/old.txt" | median)
    ou=$(cut -d' ' -f2 "$dir/old.txt" | median)
    printf '%s: old default %.2f s wall (%.2f s user); new/old %.3f wall, %.3f user\n' \
      "$w" "$ow" "$ou" "$(echo "$dw / $ow" | bc -l)" "$(echo "$du / $ou" | bc -l)"
  fi
done
