#!/usr/bin/env bash
# Peak RSS of `pate label` on a short and a long public file of the same
# shape, runs alternating, medians printed: the memory issues' criteria
# (the peak must not grow with the number of public rows).
#
#   bash .ci/bench/label_memory.sh speed [runs]    # 64 features, 1M vs 4M public rows, all columns kept
#   bash .ci/bench/label_memory.sh student [runs]  # 14 features, 1M vs 10M public rows, --student logreg
#
# Files are generated once by .ci/bench/gen.go under $PATE_BENCH_DIR (default
# /tmp); the 10M-row file takes about 1.1 GB.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-speed}
runs=${2:-5}
base=${PATE_BENCH_DIR:-/tmp}
case "$mode" in
speed) d=64 short=1000000 long=4000000
  args=(--classes 0,1 --mechanism gnmax --sigma 40 --delta 1e-5 --teachers-only) ;;
student) d=14 short=1000000 long=10000000
  args=(--max-queries 2000 --epsilon 2 --delta 1e-5 --student logreg --select first) ;;
*) echo "usage: $0 speed|student [runs]" >&2; exit 2 ;;
esac
for n in $short $long; do
  dir=$base/pate-mem-$d-$n
  if [ ! -f "$dir/public.parquet" ]; then
    go run .ci/bench/gen.go -dir "$dir" -private 100000 -public "$n" -features "$d" -classes 2
  fi
done
bin=$base/pate-mem-bin
go build -o "$bin" .
declare -A rss
for i in $(seq "$runs"); do
  for n in $short $long; do
    dir=$base/pate-mem-$d-$n
    kb=$( { /usr/bin/time -f '%M' "$bin" label --private "$dir/private.parquet" --label label \
      --public "$dir/public.parquet" "${args[@]}" -o "$dir/out.arrow" --quiet --no-ledger; } 2>&1 | tail -1)
    rss[$n]="${rss[$n]:-} $kb"
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ms=$(median ${rss[$short]}); ml=$(median ${rss[$long]})
echo "mode=$mode features=$d runs=$runs (peak RSS, KB)"
echo "$short rows:${rss[$short]}; median $ms"
echo "$long rows:${rss[$long]}; median $ml"
echo "growth: $(echo "scale=1; 100 * ($ml - $ms) / $ms" | bc)%"
