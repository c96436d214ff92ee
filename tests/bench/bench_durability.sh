#!/usr/bin/env bash
# The cost of durability (issue 15): every output is fsync'ed before its rename and its
# directory after, unless --no-sync. Two jobs, each with and without --no-sync, writing to a
# tmpfs (SHM, default /dev/shm: fsync costs nothing there) and to a disk (DISK, default /tmp;
# the script prints each file system's type), as whole processes with a warm page cache: RUNS
# pairs of runs (sync, no-sync, in alternating order), their medians and the median of the
# pairs' ratios sync / no-sync:
#   - the main job, gguf:headpack:bump, on the TinyLlama-shaped Q4_K_M model (667 MB);
#   - a plain copy, gguf:gguf, of the Q8_0 model (1.17 GB).
# Inputs are generated into DIR when missing (never the repository). Before each measured run
# the previous output is removed and `sync` flushes everything, so that no run pays for the
# write-back of another: with --no-sync the data reaches the disk after ckhost exits.
#
#   tests/bench/bench_durability.sh [BUILD_DIR]   (default: build; RUNS=5 DIR=/tmp/ckhost-bench
#                                                  SHM=/dev/shm DISK=/tmp)
set -euo pipefail
. "$(dirname "$0")/timing.sh"
bench_setup durability "$@"
runs=${RUNS:-5}

q4km=$dir/tinyllama-q4_k_m.gguf
q8=$dir/tinyllama-q8_0.gguf
[ -f "$q4km" ] || "$build/tests/bench/make_bench_model" "$q4km"
[ -f "$q8" ] || "$build/tests/bench/make_repack_bench_model" "$q8" q8_0

shm=$(mktemp -d "${SHM:-/dev/shm}/ckhost-durability.XXXXXX")
disk=$(mktemp -d "${DISK:-/tmp}/ckhost-durability.XXXXXX")
trap 'rm -rf "$timings" "$work" "$shm" "$disk"' EXIT

# run LABEL.I MODEL PIPELINE OUTPUT [options]: one measured run, after removing the previous
# output and flushing everything to disk.
run() {
    local label=$1 model=$2 pipeline=$3 output=$4; shift 4
    rm -rf "$output"
    sync
    sleep 1
    /usr/bin/time -v -o "$timings/$label" \
        "$ckhost" --quiet --force --pipeline "$pipeline" -i "$model" -o "$output" "$@"
}

# measure MODEL PIPELINE OUTPUT: RUNS pairs of runs, with and without --no-sync, the pair's
# order alternating, so that a machine whose load drifts affects both alike. Leaves the
# medians in $synced and $unsynced and the median of the pairs' ratios in $ratio.
measure() {
    local model=$1 pipeline=$2 output=$3
    cat "$model" > /dev/null
    "$ckhost" --quiet --force --pipeline "$pipeline" -i "$model" -o "$output"  # warm-up
    for i in $(seq "$runs"); do
        if [ $((i % 2)) = 1 ]; then
            run "sync.$i" "$model" "$pipeline" "$output"
            run "nosync.$i" "$model" "$pipeline" "$output" --no-sync
        else
            run "nosync.$i" "$model" "$pipeline" "$output" --no-sync
            run "sync.$i" "$model" "$pipeline" "$output"
        fi
    done
    rm -rf "$output"
    synced=$(for i in $(seq "$runs"); do wall "$timings/sync.$i"; done | median)
    unsynced=$(for i in $(seq "$runs"); do wall "$timings/nosync.$i"; done | median)
    ratio=$(for i in $(seq "$runs"); do
        echo "$(wall "$timings/sync.$i") / $(wall "$timings/nosync.$i")" | bc -l; done | median)
    printf '      sync runs (s):      %s\n' "$(for i in $(seq "$runs"); do printf '%s ' "$(wall "$timings/sync.$i")"; done)" >&2
    printf '      --no-sync runs (s): %s\n' "$(for i in $(seq "$runs"); do printf '%s ' "$(wall "$timings/nosync.$i")"; done)" >&2
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tmpfs: $shm ($(stat -f -c %T "$shm")), disk: $disk ($(stat -f -c %T "$disk"))"
echo "runs: $runs pairs, page cache warm, medians; ratio: the median of the pairs' sync / no-sync"
printf '%-52s %-6s %9s %13s %7s\n' "job" "where" "sync (s)" "--no-sync (s)" "ratio"
for job in "gguf:headpack:bump|$q4km|out/" "gguf:gguf|$q8|copy.gguf"; do
    IFS='|' read -r pipeline model output <<< "$job"
    size=$(( $(stat -c %s "$model") / 1000000 ))
    for where in tmpfs disk; do
        base=$shm
        [ "$where" = disk ] && base=$disk
        measure "$model" "$pipeline" "$base/$output"
        printf '%-52s %-6s %9.2f %13.2f %7.2f\n' "$pipeline ($(basename "$model"), $size MB)" \
            "$where" "$synced" "$unsynced" "$ratio"
    done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
