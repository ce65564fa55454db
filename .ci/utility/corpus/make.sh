#!/usr/bin/env bash
# Builds the benchmark corpus: 41 real classification sets from Debian's R
# data packages (mlbench, AER, carData, dslabs, MASS, rpart, HSAUR3,
# survival, vcd, ade4, pscl, TH.data and R's datasets),
# each split 2/3 sensitive, 1/3 public with the public truth, as the
# mlbench sets are (NAME_private.parquet with `class`,
# NAME_public.parquet, NAME_public_truth.parquet). Installs what it needs
# (Debian/Ubuntu, as root: apt-get; npm for DuckDB's Node client), writes
# DIR/corpus_summary.csv (rows, classes, features, minority share, nulls of
# each set) and DIR/READY when complete. DIR is the corpus's own folder:
# the script replaces every NAME_{private,public,public_truth}.parquet in it.
#
#   bash .ci/utility/corpus/make.sh [DIR]
#   go run ./.ci/utility -data DIR -corpus -eps 0.5,1,2,4 -seeds 1 -json out.json
#   go run ./.ci/utility/corpus/check out.json
#
# The sets, their sources and licences are in README.md beside this script.
# Held out for independent checks, never used here: R's modeldata, kernlab,
# ggplot2, forcats, mlmRev, laeken, spData, survey, psychTools, plm,
# spatstat.data.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/tmp/pate-corpus}
pkgs=(r-base-core r-cran-mlbench r-cran-aer r-cran-cardata r-cran-dslabs r-cran-mass
  r-cran-rpart r-cran-hsaur3 r-cran-survival r-cran-vcd r-cran-ade4
  r-cran-pscl r-cran-th.data)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  if [[ $(id -u) != 0 ]]; then sudo=sudo; fi
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
command -v npm >/dev/null || { echo "make.sh: needs node and npm" >&2; exit 1; }
mkdir -p "$dir" && cd "$dir"
rm -f READY ./*_private.parquet ./*_public.parquet ./*_public_truth.parquet
Rscript "$here/export.R"
npm install --prefix "$dir/js" --no-audit --no-fund --no-package-lock --loglevel=error @duckdb/node-api@1.5.6-r.1 >/dev/null
cp "$here/conv.mjs" "$dir/js/conv.mjs"
node "$dir/js/conv.mjs"
for s in $(cat sets.txt); do rm -f "${s}"_private.csv "${s}"_public.csv "${s}"_public_truth.csv "$s.types"; done
n=$(ls ./*_public_truth.parquet | wc -l)
echo "$n sets in $dir"
date -u +%FT%TZ > READY
