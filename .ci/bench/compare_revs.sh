#!/usr/bin/env bash
# Side-by-side wall time of pate at two revisions on label_speed.sh's
# workload (100,000 private rows, 1,000,000 public rows, 64 features, 250
# teachers, GNMax σ = 40 on every public row). Runs alternate so both see the
# same machine load; medians, their ratio and the median of the pairs'
# ratios are reported. Use it to check
# that a change makes nothing slower.
#
#   bash .ci/bench/compare_revs.sh OLD_REV [NEW_REV (default: the work tree)] [runs] [features]
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: compare_revs.sh OLD_REV [NEW_REV] [runs] [features]}
new=${2:-}
runs=${3:-7}
d=${4:-64}
dir=${PATE_BENCH_DIR:-/tmp/pate-bench-$d}
work=$(mktemp -d)
cleanup() {
  for w in "$work"/src-*; do [ -d "$w" ] && git worktree remove --force "$w" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT
if [ ! -f "$dir/public.parquet" ]; then
  go run .ci/bench/gen.go -dir "$dir" -private 100000 -public 1000000 -features "$d" -classes 2
fi
build() { # rev out
  if [ -z "$1" ]; then
    go build -o "$2" .
  else
    git worktree add -q --detach "$work/src-$(basename "$2")" "$1"
    (cd "$work/src-$(basename "$2")" && go build -o "$2" .)
  fi
}
build "$old" "$work/old"
build "$new" "$work/new"
declare -A t
for i in $(seq "$runs"); do
  for side in old new; do
    # Every public row a query: a revision with the default plan needs
    # --teachers-only for the workload of one without it.
    only=()
    # (The help is read whole first: grep -q closing the pipe early would
    # fail the pipeline under pipefail, and silently change the workload.)
    help=$("$work/$side" label --help 2>&1 || true)
    if grep -q -- --teachers-only <<<"$help"; then only=(--teachers-only); fi
    s=$(date +%s.%N)
    PATE_LEDGER="$work/ledger-$side-$i" "$work/$side" label --private "$dir/private.parquet" --label label \
      --public "$dir/public.parquet" --classes 0,1 --mechanism gnmax --sigma 40 --delta 1e-5 --keep "" "${only[@]}" \
      -o "$work/out-$side.arrow" --quiet 2>/dev/null
    e=$(date +%s.%N)
    t[$side]+="$(echo "$e - $s" | bc -l) "
  done
done
median() { printf '%s\n' $@ | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mo=$(median ${t[old]}); mn=$(median ${t[new]})
echo "old ($old): ${t[old]}; median $mo s"
echo "new (${new:-work tree}): ${t[new]}; median $mn s"
echo "new/old: $(echo "scale=3; $mn / $mo" | bc) (ratio of the medians)"
# Each run of new follows one of old: the median of the pairs' ratios
# cancels a drift of the machine's speed, which the medians do not.
read -ra o <<<"${t[old]}"
read -ra n <<<"${t[new]}"
pairs=()
for i in "${!o[@]}"; do pairs+=("$(echo "scale=4; ${n[$i]} / ${o[$i]}" | bc -l)"); done
echo "new/old, median of the $runs pairs' ratios: $(median "${pairs[@]}")"
