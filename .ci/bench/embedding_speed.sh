#!/usr/bin/env bash
# Side-by-side speed of `pate label` and the scikit-learn/numpy peer
# (shared/peers/sklearn_pate.py) on embeddings: 100,000 private and
# 1,000,000 public rows whose features are one column emb of type
# fixed_size_list<float32>[dim] (DuckDB's FLOAT[dim], Polars'
# Array(Float32, dim)), 2 classes, 250 teachers, GNMax σ = 40 on every
# public row. The rows are made once by gen.go -embedding, which also
# writes them as .npy files: the peer runs on the same data (its
# --x-private/--y-private/--x-public), and its time is train + vote +
# aggregate + write, data in memory, as in label_speed.sh. pate is timed as
# a whole process reading Parquet and writing Arrow, on gen.go's file and
# on the same rows rewritten by DuckDB as FLOAT[dim] (which reads back as a
# list column: another writer's list layout). Runs alternate; medians.
#
#   bash .ci/bench/embedding_speed.sh [runs] [dim]
#
# Files go under $PATE_BENCH_DIR (default /tmp/pate-embed-DIM; 1M x 384 is
# 1.5 GB of Parquet and 1.5 GB of .npy). Needs Debian's python3-sklearn for
# the peer, and node with @duckdb/node-api for the DuckDB file (installed
# as layouts.sh does, under $PATE_JS_DIR, default /tmp/pate-layouts/js;
# without node the DuckDB file is skipped). Time on a quiet machine only.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
d=${2:-384}
dir=${PATE_BENCH_DIR:-/tmp/pate-embed-$d}
js=${PATE_JS_DIR:-/tmp/pate-layouts/js}
peer=${PATE_PEER:-../shared/peers/sklearn_pate.py}
mkdir -p "$dir"
if [ ! -f "$dir/public.parquet" ] || [ ! -f "$dir/x_public.npy" ]; then
  go run .ci/bench/gen.go -dir "$dir" -private 100000 -public 1000000 -features "$d" -classes 2 -embedding
fi
files=(gen)
if command -v node >/dev/null; then
  if [ ! -d "$js/node_modules/@duckdb/node-api" ]; then
    npm install --prefix "$js" --no-audit --no-fund --no-package-lock --loglevel=error @duckdb/node-api@1.5.6-r.1 >/dev/null
  fi
  cp .ci/bench/embedding.mjs "$js/"
  if [ ! -f "$dir/duckdb.parquet" ]; then
    node "$js/embedding.mjs" "$dir/public.parquet" "$dir/duckdb.parquet" "$d"
  fi
  files+=(duckdb)
else
  echo "no node: the DuckDB-written file is skipped" >&2
fi
ln -sf public.parquet "$dir/gen.parquet"
go build -o "$dir/pate" .

declare -A secs kb
peer_s=()
# Each run starts after a pause: the peer's 5 GB are still being given
# back when it exits (on a VM, free-page reporting to the host takes
# guest CPU for a while), and a run started too soon pays for it. On the
# 2-core VM of the acceptance runs, the same pate run after a process that
# touched and freed 5 GB took 2.07-2.42 s 3 s later and 1.92-2.05 s 10 s
# later (1.91-1.98 s on a quiet machine).
pause=${PATE_BENCH_PAUSE:-10}
# Each pate run's inputs are read into the page cache before the pause: the
# peer's time leaves out loading its data, and on a machine that pages out
# cold file pages (the acceptance VM's DAMON pages out what was not read
# for 60 s; a round of this script is about a minute) a pate run otherwise
# read 400 MB of its 1.5 GB from disk.
for i in $(seq "$runs"); do
  for f in "${files[@]}"; do
    cat "$dir/$f.parquet" "$dir/private.parquet" > /dev/null
    sleep "$pause"
    out=$( { /usr/bin/time -f 'TIME %e %M' "$dir/pate" label --private "$dir/private.parquet" --label label \
      --public "$dir/$f.parquet" --classes 0,1 --mechanism gnmax --sigma 40 --delta 1e-5 --keep "" --teachers-only \
      -o "$dir/out.arrow" --quiet; } 2>&1 ) || { echo "pate failed on $f.parquet: $out" >&2; exit 1; }
    read -r _ s m < <(echo "$out" | grep '^TIME' | tail -1)
    secs[$f]="${secs[$f]:-} $s"
    kb[$f]="${kb[$f]:-} $m"
  done
  sleep "$pause"
  peer_s+=("$(/usr/bin/python3 "$peer" --features "$d" --naive-rows 0 --out "$dir/peer.npy" \
    --x-private "$dir/x_private.npy" --y-private "$dir/y_private.npy" --x-public "$dir/x_public.npy" |
    /usr/bin/python3 -c 'import json,sys; s=json.load(sys.stdin)["seconds"]; print(s["train"]+s["vote"]+s["aggregate"]+s["write"])')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mq=$(median "${peer_s[@]}")
echo "dim=$d runs=$runs; 1,000,000 public rows; medians"
echo "peer (train+vote+aggregate+write, data in memory): ${peer_s[*]} s; median $mq s = $(echo "1000000 / $mq" | bc) rows/s"
for f in "${files[@]}"; do
  mp=$(median ${secs[$f]}); mk=$(median ${kb[$f]})
  echo "pate on $f.parquet (whole process, Parquet in, Arrow out): ${secs[$f]# } s; median $mp s = $(echo "1000000 / $mp" | bc) rows/s, peak RSS $((mk / 1024)) MB; speed-up (peer time / pate time): $(echo "scale=2; $mq / $mp" | bc)"
done
