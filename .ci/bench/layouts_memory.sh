#!/usr/bin/env bash
# Peak RSS of `pate label` on the public file of the layout benchmark
# (layouts.sh) at 1M and at 4M rows, per layout: the rule is peak RSS at 4M
# <= 1.10x that at 1M for every layout. Runs alternate (1M, 4M, next
# layout, ...), medians are printed, with the 1M peak against gen.go's
# layout (the rule there: <= 1.3x).
#
#   bash .ci/bench/layouts_memory.sh [runs] [layout...]
#
# Missing files are written first by layouts.sh (4M rows: 2 GB a layout, so
# the default is a subset that covers the shapes: row groups of 64k, 123k,
# 262k, 1M and 10k rows, one page or several per chunk, v1 and v2 pages,
# snappy, zstd, gzip and none, dictionary and PLAIN, REQUIRED and OPTIONAL).
# Peak RSS does not depend on the machine's load, unlike time.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
shift || true
layouts=("$@")
if [ ${#layouts[@]} -eq 0 ]; then
  layouts=(gen duckdb-default polars-default duckdb-rg1m duckdb-v2 duckdb-zstd polars-zstd duckdb-gzip polars-gzip
    duckdb-rg1m-zstd duckdb-rg10k polars-rg1m gen-dictionary)
fi
base=${PATE_BENCH_DIR:-/tmp/pate-layouts}
gen=()
for l in "${layouts[@]}"; do [ "$l" = gen ] || gen+=("$l"); done
if [ ${#gen[@]} -gt 0 ]; then
  for rows in 1000000 4000000; do
    PATE_LAYOUT_ROWS=$rows bash .ci/bench/layouts.sh 0 "${gen[@]}"
  done
fi
bin=$base/pate-memory
go build -o "$bin" .
peak() { # rows layout: peak RSS in KB
  local dir=$base/$1
  { /usr/bin/time -f 'RSS %M' "$bin" label --private "$dir/private.parquet" --label label \
    --public "$dir/layouts/$2.parquet" --classes 0,1 --mechanism gnmax --sigma 40 --delta 1e-5 --keep "" --teachers-only \
    -o "$dir/out-memory.arrow" --quiet --no-ledger; } 2>&1 | awk '/^RSS / {print $2}'
}
declare -A kb
all=(gen ${gen[@]+"${gen[@]}"})
for i in $(seq "$runs"); do
  for l in "${all[@]}"; do
    for rows in 1000000 4000000; do
      m=$(peak $rows "$l")
      [ -n "$m" ] || { echo "$l at $rows rows: pate failed" >&2; exit 1; }
      kb[$l,$rows]="${kb[$l,$rows]:-} $m"
    done
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
g=$(median ${kb[gen,1000000]})
echo "peak RSS, medians of $runs; 4M/1M <= 1.10 and 1M/gen <= 1.30"
printf '%-20s %9s %9s %8s %8s\n' layout "1M MB" "4M MB" "4M/1M" "1M/gen"
for l in "${all[@]}"; do
  a=$(median ${kb[$l,1000000]}); b=$(median ${kb[$l,4000000]})
  printf '%-20s %9.0f %9.0f %8.2f %8.2f\n' "$l" "$(echo "$a / 1024" | bc -l)" "$(echo "$b / 1024" | bc -l)" \
    "$(echo "$b / $a" | bc -l)" "$(echo "$a / $g" | bc -l)"
done
