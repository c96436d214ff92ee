#!/usr/bin/env bash
# Benchmark of ckhost batch through Slurm (issue 17): COUNT (24) conversions of the tiny llama
# (PIPELINE, gguf:headpack:bump) as a 2-task job array on a one-node cluster started here
# (tests/slurm/slurm_cluster.sh; root, Debian's slurm packages), against the same list run by
# `ckhost batch --jobs 2` directly. Both convert everything (--force), 2 at a time, one thread
# each, outputs not fsync'ed (--no-sync: the scheduler is measured, not the disk). Median of
# RUNS (3), alternating. The scheduler's overhead per job is (array wall - direct wall) / COUNT;
# the array's wall time is split into submit-to-last-report (the scheduler and the tasks) and
# sbatch --wait's polling after it.
#
#   tests/bench/bench_slurm.sh [BUILD_DIR]     (default: build)
#   RUNS=3 COUNT=24 MODEL=/work/shared/testdata/tiny-llama-q4_k_m.gguf
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${RUNS:-3}
count=${COUNT:-24}
pipeline=${PIPELINE:-gguf:headpack:bump}
model=${MODEL:-$root/../shared/testdata/tiny-llama-q4_k_m.gguf}
ckhost=$build/bin/ckhost
. "$root/tests/slurm/slurm_cluster.sh"
. "$root/tests/bench/timing.sh"
why=$(slurm_cluster_missing)
if [ -n "$why" ]; then echo "cannot start a Slurm cluster: $why" >&2; exit 2; fi
[ -f "$model" ] || { echo "no model at $model (MODEL=...)" >&2; exit 2; }

tmp=$(mktemp -d /tmp/ckhost-bench-slurm.XXXXXX)
trap 'slurm_cluster_stop; rm -rf "$tmp"' EXIT
slurm_cluster_start "$tmp/cluster"
mkdir -p "$tmp/models"
for i in $(seq "$count"); do
    cp "$model" "$tmp/models/m$i.gguf"
    echo "$pipeline $tmp/models/m$i.gguf $tmp/out/m$i/"
done > "$tmp/jobs.txt"
export CKHOST=$ckhost

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }
direct() {
    local a b
    a=$(now)
    "$ckhost" batch "$tmp/jobs.txt" --jobs 2 --threads 2 --force --no-sync --quiet > /dev/null
    b=$(now)
    sub "$a" "$b"
}
# The array: wall time of submit.sh (sbatch --wait, batch-report), and the time from the
# submission to the last shard report's rename (mtime), which excludes sbatch's polling.
array() {
    local a b last
    a=$(now)
    SHARDS=2 CPUS=1 "$root/examples/batch/slurm/submit.sh" "$tmp/jobs.txt" "$tmp/reports" \
        --output=/dev/null -- --force --no-sync --quiet > /dev/null 2>&1
    b=$(now)
    last=$(stat -c %.Y "$tmp"/reports/shard-*.json | sort -g | tail -1)
    echo "$(sub "$a" "$b") $(sub "$a" "$last")"
}

direct > /dev/null  # warm the page cache
d=() w=() r=()
for _ in $(seq "$runs"); do
    d+=("$(direct)")
    read -r wall reported < <(array)
    w+=("$wall")
    r+=("$reported")
done
md=$(printf '%s\n' "${d[@]}" | median)
mw=$(printf '%s\n' "${w[@]}" | median)
mr=$(printf '%s\n' "${r[@]}" | median)
echo "$count x $pipeline on $(basename "$model") ($(stat -c %s "$model") bytes), $(nproc) CPUs, $runs runs, medians"
echo "ckhost batch --jobs 2 (s):              ${d[*]}"
echo "Slurm 2-task array, submit.sh wall (s): ${w[*]}"
echo "  submission to last report (s):        ${r[*]}"
printf 'direct %.2f s; array %.2f s wall, %.2f s to the last report\n' "$md" "$mw" "$mr"
printf 'scheduler overhead per job: %.3f s wall (%.3f s without sbatch --wait polling)\n' \
    "$(awk -v a="$mw" -v b="$md" -v n="$count" 'BEGIN { print (a - b) / n }')" \
    "$(awk -v a="$mr" -v b="$md" -v n="$count" 'BEGIN { print (a - b) / n }')"
