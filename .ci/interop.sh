#!/usr/bin/env bash
# Interop: an independent Arrow implementation (apache-arrow from npm, under
# node) reads pate's Arrow IPC file and stream output; pate reads a Parquet
# file written by an independent writer (hyparquet-writer from npm); DuckDB
# and Polars (from npm) read pate's Parquet output, and pate reads their
# files (FLOAT[N] embeddings, DATE, TIMESTAMP, DECIMAL; Polars IPC strings
# and Categoricals).
# Skipped, saying so, only where node or npm is absent. Needs the npm
# registry (or a warm npm cache); the packages go into a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "interop: SKIPPED: node and npm are not installed (the Arrow/Parquet interop checks need them)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/pate" .
mkdir -p "$tmp/js"
# Pinned versions: a new release must not change what CI checks.
npm install --prefix "$tmp/js" --no-audit --no-fund --no-package-lock --loglevel=error \
	apache-arrow@21.2.0 hyparquet-writer@0.17.0 @duckdb/node-api@1.5.6-r.1 \
	nodejs-polars@0.26.1 nodejs-polars-linux-x64-gnu@0.26.1 >/dev/null
cp .ci/interop.mjs "$tmp/js/"
# Each run its own ledger: the runs reuse one seed so that their outputs can
# be compared, and a ledger refuses a seed's second use.

bc=testdata/breast_cancer.parquet
common=(--private "$bc" --label label --teachers 5 --epsilon 1 --delta 1e-5 --classes 0,1 --seed 7 --quiet)

# 1. pate's IPC file and IPC stream, read by apache-arrow.
PATE_LEDGER="$tmp/ledger1" "$tmp/pate" label -o "$tmp/bc.arrow" --public "$bc" --keep mean_radius,mean_texture "${common[@]}"
PATE_LEDGER="$tmp/ledger2" "$tmp/pate" label -o - --public "$bc" --keep mean_radius,mean_texture "${common[@]}" >"$tmp/bc.arrows"
node "$tmp/js/interop.mjs" read "$tmp/bc.arrow" "$tmp/bc.arrows" 569 mean_radius,mean_texture

# 2. A Parquet file from hyparquet-writer (snappy, several row groups, a
# null), labelled by pate, the result read back by apache-arrow.
node "$tmp/js/interop.mjs" write "$tmp/js.parquet" 1000
PATE_LEDGER="$tmp/ledger3" "$tmp/pate" label -o "$tmp/js.arrow" --public "$tmp/js.parquet" "${common[@]}"
node "$tmp/js/interop.mjs" check-js "$tmp/js.arrow" 1000

# 3. pate's Parquet output (the run of 1. again), read by DuckDB and Polars.
PATE_LEDGER="$tmp/ledger4" "$tmp/pate" label -o "$tmp/bc.parquet" --public "$bc" --keep mean_radius,mean_texture "${common[@]}"
node "$tmp/js/interop.mjs" parquet "$tmp/bc.parquet" "$tmp/bc.arrow" 569

# 4. The column types DuckDB and Polars write, labelled by pate (the second
# output zstd-compressed).
mkdir -p "$tmp/types"
node "$tmp/js/interop.mjs" write-types "$tmp/types"
types=(--label y --teachers 5 --epsilon 2 --delta 1e-5 --classes no,yes --seed 9 --quiet)
PATE_LEDGER="$tmp/ledger5" "$tmp/pate" label -o "$tmp/types/duck.parquet" --private "$tmp/types/duck_private.parquet" --public "$tmp/types/duck_public.parquet" "${types[@]}"
node "$tmp/js/interop.mjs" check-types "$tmp/types/duck.parquet" 200
PATE_LEDGER="$tmp/ledger6" "$tmp/pate" label -o "$tmp/types/polars.parquet" --zstd --private "$tmp/types/polars_private.arrow" --public "$tmp/types/polars_public.arrow" "${types[@]}"
node "$tmp/js/interop.mjs" check-types "$tmp/types/polars.parquet" 200
echo "interop: ok"
