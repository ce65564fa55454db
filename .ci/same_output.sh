#!/usr/bin/env bash
# Checks that a change leaves pate's behaviour the same: builds pate at a
# given revision (default: the main branch) and from the work tree, runs the
# README's commands with fixed seeds through both, and compares every output
# file and report byte for byte, and the exit codes.
#
#   bash .ci/same_output.sh [REV]
#
# Use it for changes meant to move code without changing what it does. A
# change that alters outputs on purpose (a new noise stream, a new default)
# shows up here as a difference: say so in its commit.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-main}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old-src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git worktree add -q --detach "$work/old-src" "$rev"
(cd "$work/old-src" && go build -o "$work/pate-old" .)
go build -o "$work/pate-new" .

adult=(--private testdata/adult_train.parquet --label income --public testdata/adult_public.parquet)
# name | arguments (each run gets its own ledger directory, so seeds may repeat)
cases=(
  "readme-first|label -q ${adult[*]} --epsilon 2 --delta 1e-5 --seed 7 -o OUT.arrow --report OUT.json"
  "stream|label -q ${adult[*]} --epsilon 1 --delta 1e-6 --seed 3 -o - --report OUT.json"
  "student|label -q ${adult[*]} --epsilon 1 --delta 1e-5 --seed 5 --student logreg --select uncertain --max-queries 600 -o OUT.arrow --report OUT.json"
  "multilabel|label -q ${adult[*]} --label sex --keep age,education --epsilon 2 --delta 1e-5 --seed 9 -o OUT.arrow --report OUT.json"
  "gnmax|label -q ${adult[*]} --mechanism gnmax --epsilon 2 --delta 1e-5 --seed 11 -o OUT.arrow --report OUT.json"
  "lnmax|label -q ${adult[*]} --mechanism lnmax --epsilon 2 --delta 1e-5 --seed 13 --max-queries 500 -o OUT.arrow --report OUT.json"
  "svt|label -q ${adult[*]} --mechanism svt --epsilon 2 --delta 1e-5 --seed 15 -o OUT.arrow --report OUT.json"
  "classes|label -q ${adult[*]} --classes 0,1 --epsilon 2 --delta 1e-5 --seed 17 -o OUT.arrow --report OUT.json"
  "aggregate|aggregate -q --votes testdata/votes/adult_250_teachers.parquet --teachers 250 --public testdata/adult_public.parquet --mechanism confident-gnmax --threshold 300 --sigma1 200 --sigma2 40 --max-queries 1500 --delta 1e-5 --seed 19 -o OUT.arrow --report OUT.json"
  "analyze|analyze --votes testdata/votes/mnist_250_teachers.parquet --threshold 200 --sigma1 150 --sigma2 40 --queries 640 --delta 1e-5 --conversion classic"
  "plan|plan --epsilon 2 --delta 1e-5 --queries 1500 --mechanism gnmax"
  "replicate|replicate --json --private testdata/breast_cancer.parquet --label label --public testdata/breast_cancer.parquet --truth label --features mean_radius,mean_texture,worst_radius --teachers 10 --epsilon 2 --delta 1e-5 --classes 0,1 --repeats 2 --replicable --seed 21"
)

fail=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  args=${c#*|}
  for side in old new; do
    d="$work/$side/$name"
    mkdir -p "$d"
    # Both sides run as the same path with the same output paths, since a
    # report records its command line.
    rm -rf "$work/run" && mkdir -p "$work/run/bin"
    cp "$work/pate-$side" "$work/run/bin/pate"
    a=${args//OUT/$work/run/out}
    set +e
    eval PATE_LEDGER="$d/ledger" "$work/run/bin/pate" "$a" >"$d/stdout" 2>"$d/stderr"
    echo $? >"$d/code"
    set -e
    for f in out.arrow out.json; do
      if [[ -e $work/run/$f ]]; then mv "$work/run/$f" "$d/$f"; fi
    done
  done
  diffs=()
  for f in code stdout out.arrow out.json; do
    o="$work/old/$name/$f" n="$work/new/$name/$f"
    if [[ -e $o || -e $n ]] && ! cmp -s "$o" "$n"; then
      diffs+=("$f")
    fi
  done
  if ((${#diffs[@]})); then
    printf '%-12s DIFFERENT: %s\n' "$name" "${diffs[*]}"
    fail=1
  else
    printf '%-12s same (exit %s)\n' "$name" "$(cat "$work/new/$name/code")"
  fi
done
exit $fail
