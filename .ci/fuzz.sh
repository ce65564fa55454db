#!/usr/bin/env bash
# Fuzzes the readers of untrusted bytes, one target after another.
#
#   bash .ci/fuzz.sh [TIME] [all]
#
# TIME is each target's -fuzztime (default 60s). Without "all" it runs the
# entry points a user's file reaches first (Parquet, IPC file and stream,
# CSV, gzip CSV, a report, a saved labeler); with "all" also the internal
# decoders (page codecs, page streams, list and plain chunks, a saved
# labeler's model, teacher votes, the ledger's identity lists).
#
# -fuzzminimizetime 3s: Go minimizes every new input for up to 60 s by
# default, and these readers' inputs are slow to minimize, so a one-minute
# run with the default executed a few dozen inputs, not thousands.
#
# Not part of .ci/run: with a cold build cache, building the instrumented
# packages makes even `fuzz.sh 5s` take minutes (7.5 on the 2-core machine).
#
# A failure stops the script; the input is under the package's
# testdata/fuzz/<target>/: commit it with the fix, as a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-60s}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

targets=(
  "./io/arrowio FuzzReadParquet"
  "./io/arrowio FuzzReadParquetStreamed"
  "./io/arrowio FuzzReadIPCFile"
  "./io/arrowio FuzzReadIPCStream"
  "./io/arrowio FuzzReadCSV"
  "./io/arrowio FuzzReadGzipCSV"
  "./io/arrowio FuzzReadDeclaredCSV"
  "./label FuzzParseReport"
  "./label/predict FuzzRead"
)
if [[ ${2:-} == all ]]; then
  targets+=(
    "./io/arrowio/internal/arrowfix FuzzLZ4Decode"
    "./io/arrowio/internal/arrowfix FuzzLayoutStream"
    "./io/arrowio/internal/arrowfix FuzzLayoutFile"
    "./io/arrowio/internal/pagecodec FuzzGzip"
    "./io/arrowio/internal/pagecodec FuzzGzipReader"
    "./io/arrowio/internal/pagecodec FuzzZstd"
    "./io/arrowio/internal/pagecodec FuzzZstdReader"
    "./io/arrowio/internal/pagecodec FuzzDecodeZstdInto"
    "./io/arrowio/internal/pagecodec FuzzBrotli"
    "./io/arrowio/internal/pagecodec FuzzSnappy"
    "./io/arrowio/internal/pqread FuzzSnappyStream"
    "./io/arrowio/internal/pqread FuzzSnappyFragments"
    "./io/arrowio/internal/pqread FuzzLZ4Stream"
    "./io/arrowio/internal/pqread FuzzListChunk"
    "./io/arrowio/internal/pqread FuzzPlainChunk"
    "./learners FuzzDecodeModel"
    "./label FuzzAggregateVotes"
    "./label/ledger FuzzListText"
  )
fi

for x in "${targets[@]}"; do
  read -r pkg name <<<"$x"
  echo "fuzz $name ($pkg) for $t"
  if ! go test -run '^$' -fuzz "^$name\$" -fuzztime "$t" -fuzzminimizetime 3s "$pkg" >"$out" 2>&1; then
    cat "$out"
    exit 1
  fi
  grep 'execs:' "$out" | tail -1
done
