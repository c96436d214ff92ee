#!/usr/bin/env bash
# Benchmark of `ckhost batch` (issue 7): 8 conversions of the shipped micro-llama sample with
# `--jobs 2` against `--jobs 1`, whole batch wall time, page cache warm, median of RUNS runs
# (alternating the two so that load drifts hit both). Target: ratio at most 0.6 on two cores.
#
#   tests/bench/bench_batch.sh [BUILD_DIR]            (default: build)
#   RUNS=9 PIPELINE=gguf:headpack:bump JOBS=8 OUT=/tmp/ckhost-bench/batch
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${RUNS:-9}
pipeline=${PIPELINE:-gguf:headpack:bump}
count=${JOBS:-8}
out=${OUT:-/tmp/ckhost-bench/batch}
model=$root/examples/micro-llama-q4_k_m.gguf
ckhost=$build/bin/ckhost

case "$out" in "$root"/*) echo "refusing to write inside the repository" >&2; exit 2 ;; esac
rm -rf "$out"
mkdir -p "$out"
# Each job has its own copy of the input, as a real batch has its own models.
for i in $(seq "$count"); do
    cp "$model" "$out/model-$i.gguf"
    echo "$pipeline $out/model-$i.gguf $out/result-$i/"
done > "$out/jobs.txt"

. "$(dirname "$0")/timing.sh"
seconds() {  # wall seconds of a command
    local start end
    start=$(date +%s.%N)
    "$@" > /dev/null
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", b - a }'
}
run() { seconds "$ckhost" batch "$out/jobs.txt" --jobs "$1" --force --quiet; }

run 2 > /dev/null  # warm the page cache and the outputs' directories
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
serial=() parallel=()
for _ in $(seq "$runs"); do
    serial+=("$(run 1)")
    parallel+=("$(run 2)")
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

s=$(printf '%s\n' "${serial[@]}" | median)
p=$(printf '%s\n' "${parallel[@]}" | median)
one=$(seconds "$ckhost" --pipeline "$pipeline" -i "$model" -o "$out/single/" --force --quiet)
echo "batch:   $count x $pipeline on $(basename "$model") ($(stat -c %s "$model") bytes), $runs runs, medians"
echo "--jobs 1 runs (s): ${serial[*]}"
echo "--jobs 2 runs (s): ${parallel[*]}"
printf 'one conversion alone: %s s\n' "$one"
printf -- '--jobs 1: %.3f s   --jobs 2: %.3f s   ratio %.2f (target <= 0.60)\n' "$s" "$p" \
    "$(awk -v p="$p" -v s="$s" 'BEGIN { print p / s }')"
