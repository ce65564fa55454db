#!/usr/bin/env bash
# More benchmark sets for the utility script, from R's mlbench: letter (26
# classes, 13,333 sensitive rows), satellite (6, 4,290), shuttle (7,
# imbalanced, 38,666) and glass (6, 142). Needs Rscript with
# mlbench (Debian: apt-get install r-cran-mlbench) and npm. Writes them
# beside links to the shared sets in DIR (default /tmp/pate-datasets):
#
#   bash .ci/utility/mlbench/make.sh [DIR] [SHARED]
#   go run ./.ci/utility -data DIR -sets letter,satellite,shuttle -eps 1
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/tmp/pate-datasets}
shared=${2:-$here/../../../../shared/datasets}
mkdir -p "$dir" && cd "$dir"
Rscript "$here/export.R"
npm install --prefix "$dir/js" --no-audit --no-fund --no-package-lock --loglevel=error @duckdb/node-api@1.5.6-r.1 >/dev/null
cp "$here/conv.mjs" "$dir/js/conv.mjs"
(cd "$dir" && node "$dir/js/conv.mjs")
rm -f ./*.csv
if [[ -d $shared ]]; then ln -sf "$shared"/*.parquet "$dir"/; fi
ls "$dir"/*.parquet | wc -l
