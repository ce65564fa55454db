#!/usr/bin/env bash
# Wall time and peak RSS of `pate label` on the public file of the speed
# benchmark (label_speed.sh: 1M rows x 64 float64, 100k sensitive rows)
# written in other writers' layouts, as ratios to gen.go's own file. Runs
# interleave (every layout once, then again), medians are printed.
#
#   bash .ci/bench/layouts.sh [runs] [layout...]
#
# Layouts: gen (gen.go's own), gen-dictionary and gen-rg1m (gen.go with
# pyarrow's defaults: dictionary encoding, or plain, in 1M-row groups; its
# columns are REQUIRED, DuckDB's and Polars' OPTIONAL) and those of
# layouts.mjs (DuckDB and Polars from npm: defaults, zstd, gzip, 1M-row and
# 10k-row, 2k-row and 1k-row groups, PARQUET_VERSION v2, Polars' sinkParquet,
# statistics, 8 KB pages, ...; and the Rust writer, arrow-rs, through
# parquet-wasm: its defaults, v2 pages, zstd, LZ4).
# Targets: every layout <= 1.3x gen's time (gzip <= 2x) and <= 1.3x its
# peak RSS. PATE_LAYOUT_ROWS=4000000 writes and times 4M-row files instead
# (for the rule: peak RSS at 4M <= 1.10x that at 1M). Files go under
# $PATE_BENCH_DIR (default /tmp/pate-layouts); needs node and npm, and the
# npm registry or a warm npm cache. Time on a quiet machine only. With 0
# runs it only writes the files (layouts_memory.sh does so).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
shift || true
rows=${PATE_LAYOUT_ROWS:-1000000}
base=${PATE_BENCH_DIR:-/tmp/pate-layouts}
dir=$base/$rows
js=$base/js
mkdir -p "$dir" "$js"
if [ ! -f "$dir/public.parquet" ]; then
  go run .ci/bench/gen.go -dir "$dir" -private 100000 -public "$rows" -features 64 -classes 2
fi
if [ ! -d "$js/node_modules/nodejs-polars" ] || [ ! -d "$js/node_modules/@duckdb/node-api" ] ||
  [ ! -d "$js/node_modules/parquet-wasm" ]; then
  # Pinned versions: a new release must not change what is measured.
  npm install --prefix "$js" --no-audit --no-fund --no-package-lock --loglevel=error \
    @duckdb/node-api@1.5.6-r.1 nodejs-polars@0.26.1 nodejs-polars-linux-x64-gnu@0.26.1 parquet-wasm@0.8.0 >/dev/null
fi
cp .ci/bench/layouts.mjs "$js/"
layouts=("$@")
if [ ${#layouts[@]} -eq 0 ]; then
  layouts=(duckdb-default polars-default duckdb-zstd polars-zstd duckdb-rg1m duckdb-gzip polars-gzip duckdb-v2
    duckdb-v2-zstd duckdb-uncompressed duckdb-lz4 duckdb-brotli polars-lz4 polars-brotli
    duckdb-rg1m-zstd duckdb-rg1m-gzip duckdb-rg10k duckdb-v2-gzip polars-sink polars-rg1m polars-nostats
    polars-stats-full gen-dictionary gen-rg1m duckdb-rg1m-v2 duckdb-rg1m-v2-uncompressed duckdb-rg1m-lz4 duckdb-rg2k polars-snappy
    polars-uncompressed polars-page8k polars-rg10k polars-rg1k arrowrs-default arrowrs-v2 arrowrs-zstd arrowrs-lz4
    arrowrs-rg2k)
fi
mkdir -p "$dir/layouts"
for l in "${layouts[@]}"; do
  case "$l" in
  gen-dictionary) flags=(-dictionary -row-group 1048576) ;;
  gen-rg1m) flags=(-row-group 1048576) ;;
  *) continue ;;
  esac
  [ -f "$dir/layouts/$l.parquet" ] && continue
  # Same seed and private rows as public.parquet: the same values.
  go run .ci/bench/gen.go -dir "$dir/$l.d" -private 100000 -public "$rows" -features 64 -classes 2 "${flags[@]}"
  mv "$dir/$l.d/public.parquet" "$dir/layouts/$l.parquet"
  rm -r "$dir/$l.d"
done
node "$js/layouts.mjs" "$dir/public.parquet" "$dir/layouts" "${layouts[@]}"  # prints the row groups
ln -sf ../public.parquet "$dir/layouts/gen.parquet"
[ "$runs" -eq 0 ] && exit 0
bin=$base/pate
go build -o "$bin" .

all=(gen "${layouts[@]}")
declare -A secs kb fail
for i in $(seq "$runs"); do
  for l in "${all[@]}"; do
    out=$( { /usr/bin/time -f 'TIME %e %M' "$bin" label --private "$dir/private.parquet" --label label \
      --public "$dir/layouts/$l.parquet" --classes 0,1 --mechanism gnmax --sigma 40 --delta 1e-5 --keep "" --teachers-only \
      -o "$dir/out.arrow" --quiet --no-ledger; } 2>&1 ) || { fail[$l]=$(echo "$out" | grep -v '^TIME' | head -1); continue; }
    read -r _ s m < <(echo "$out" | grep '^TIME' | tail -1)
    secs[$l]="${secs[$l]:-} $s"
    kb[$l]="${kb[$l]:-} $m"
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
g_s=$(median ${secs[gen]}); g_kb=$(median ${kb[gen]})
echo "rows=$rows runs=$runs; medians; ratios to gen.go's layout"
printf '%-20s %8s %8s %9s %9s\n' layout seconds "time x" "RSS MB" "RSS x"
for l in "${all[@]}"; do
  if [ -n "${fail[$l]:-}" ]; then
    printf '%-20s FAILED: %s\n' "$l" "${fail[$l]}"
    continue
  fi
  s=$(median ${secs[$l]}); m=$(median ${kb[$l]})
  printf '%-20s %8.2f %8.2f %9.0f %9.2f\n' "$l" "$s" "$(echo "$s / $g_s" | bc -l)" \
    "$(echo "$m / 1024" | bc -l)" "$(echo "$m / $g_kb" | bc -l)"
done
