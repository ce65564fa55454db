#!/usr/bin/env bash
# Side-by-side speed of `pate label` and the scikit-learn/numpy peer
# (shared/peers/sklearn_pate.py) on the same workload: 100,000 private rows,
# 1,000,000 public rows, 64 features, 2 classes, 250 teachers, GNMax σ = 40 on
# every public row. The peer's data is in memory and its time excludes data
# generation and interpreter start; pate is timed as a whole process reading
# both Parquet files, training, voting, drawing exact noise and writing Arrow.
# Runs alternate so both see the same machine load; medians are reported.
#
#   bash .ci/bench/label_speed.sh [runs] [features]
# Needs Debian's python3-sklearn for the peer.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
d=${2:-64}
dir=${PATE_BENCH_DIR:-/tmp/pate-bench-$d}
peer=${PATE_PEER:-../shared/peers/sklearn_pate.py}
if [ ! -f "$dir/public.parquet" ]; then
  go run .ci/bench/gen.go -dir "$dir" -private 100000 -public 1000000 -features "$d" -classes 2
fi
go build -o "$dir/pate" .
pate_s=(); peer_s=()
for i in $(seq "$runs"); do
  s=$(date +%s.%N)
  "$dir/pate" label --private "$dir/private.parquet" --label label --public "$dir/public.parquet" \
    --classes 0,1 --mechanism gnmax --sigma 40 --delta 1e-5 --keep "" --teachers-only -o "$dir/out.arrow" --quiet
  e=$(date +%s.%N)
  pate_s+=("$(echo "$e - $s" | bc -l)")
  peer_s+=("$(/usr/bin/python3 "$peer" --features "$d" --naive-rows 0 --out "$dir/peer.npy" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"]["train"] + json.load(open("/dev/null")) if False else (lambda d: d["seconds"]["train"]+d["seconds"]["vote"]+d["seconds"]["aggregate"]+d["seconds"]["write"])(json.load(sys.stdin)))')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mp=$(median "${pate_s[@]}"); mq=$(median "${peer_s[@]}")
echo "features=$d runs=$runs"
echo "pate (whole process, Parquet in, Arrow out): ${pate_s[*]} s; median $mp s = $(echo "1000000 / $mp" | bc) rows/s"
echo "peer (train+vote+aggregate+write, data in memory): ${peer_s[*]} s; median $mq s = $(echo "1000000 / $mq" | bc) rows/s"
echo "speed-up (peer time / pate time): $(echo "scale=2; $mq / $mp" | bc)"
