#!/usr/bin/env bash
# Neighbour search of --mechanism private-knn at scale: 1,000,000 public rows
# whose features are one 384-float embedding column emb
# (fixed_size_list<float32>[384], DuckDB's FLOAT[384]) labelled against a
# sensitive set of a few thousand rows (default 4,000), 10 classes, ε = 1,
# δ = 1e-6, k = 10, γ = 0.1. Every public row is a query (--teachers-only;
# the default plan would put a few thousand and train a student): a fresh Poisson
# subsample of the sensitive rows (~400 at γ = 0.1), its 10 nearest by
# squared distance in the public encoding (blocked float32 dot products,
# kernel.Dot), the discrete-Gaussian noisy argmax. The public file is
# streamed record batch by record batch: peak memory does not grow with the
# public rows. Reports wall time, rows/s and peak RSS (GNU time) of the whole
# process reading Parquet and writing Arrow (the output keeps the public
# embedding column, 1.5 GB), and its CPU time, which a loaded machine
# does not inflate as much as the wall time.
#
#   bash .ci/bench/knn_speed.sh [sensitive rows] [public rows] [dim]
#
# Files go under $PATE_BENCH_DIR (default /tmp/pate-knn-DIM; 1M x 384 is
# 1.5 GB of Parquet, plus the .npy copies gen.go writes). Time on a quiet
# machine only: the figure is the neighbour search's, which dominates.
set -euo pipefail
cd "$(dirname "$0")/../.."
nsens=${1:-4000}
npub=${2:-1000000}
d=${3:-384}
dir=${PATE_BENCH_DIR:-/tmp/pate-knn-$d}
mkdir -p "$dir"
if [ ! -f "$dir/public.parquet" ] || [ ! -f "$dir/private.parquet" ]; then
  go run .ci/bench/gen.go -dir "$dir" -private "$nsens" -public "$npub" -features "$d" -classes 10 -embedding
fi
go build -o "$dir/pate" .
out="$dir/out.arrow"
/usr/bin/time -f '%e %M %U %S' -o "$dir/time.txt" "$dir/pate" label --private "$dir/private.parquet" --label label \
  --public "$dir/public.parquet" --classes 0,1,2,3,4,5,6,7,8,9 --mechanism private-knn \
  --epsilon 1 --delta 1e-6 --knn-k 10 --sample-rate 0.1 --teachers-only -o "$out" --no-ledger --quiet
read -r secs kb usr sys < "$dir/time.txt"
rows=$(python3 -c "print(int($npub))")
echo "private-knn: $nsens sensitive x $npub public rows, $d-dim embeddings: ${secs} s wall, $(python3 -c "print(f'{$rows/$secs:,.0f}')") rows/s, peak RSS $((kb / 1024)) MiB, CPU ${usr} s user + ${sys} s system"
