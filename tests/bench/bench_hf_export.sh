#!/usr/bin/env bash
# Benchmark of issue 31: a 2.2 GB Q4_K_M GGUF back to a Hugging Face checkpoint in BF16
# (`gguf:hf`: every tensor dequantized, Q/K rows unpermuted, written as safetensors shards of
# 5 GB), against `cp` of one file as large as everything the export wrote, on the same disk, in
# the same run (durable ckhost against cp + sync, --no-sync against cp alone); whole processes under /usr/bin/time -v, page cache warm, median of RUNS wall
# times and peak RSS, for each thread count in THREADS. Input: make_bench_model's Llama 3.2
# 3B-shaped Q4_K_M model (synthetic blocks, untied output), generated once into DIR, never the
# repository.
#
#   tests/bench/bench_hf_export.sh [BUILD_DIR]   (default: build; RUNS=3 THREADS="1 2" DIR=/tmp/ckhost-bench)
set -euo pipefail
. "$(dirname "$0")/timing.sh"
bench_setup hf-export "$@"

model=$dir/llama-3b-q4_k_m.gguf
[ -f "$model" ] || "$build/tests/bench/make_bench_model" "$model" 3b
size=$(stat -c %s "$model")

# time_runs NAME COMMAND...: runs COMMAND RUNS times (removing the output folder before each);
# prints "wall rss_kib" medians.
time_runs() {
    local name=$1
    shift
    for i in $(seq "$runs"); do
        rm -rf "$work/out" "$work/copy"
        sync
        /usr/bin/time -v -o "$timings/$name.$i" "$@" > /dev/null 2>&1
    done
    echo "$(for i in $(seq "$runs"); do wall "$timings/$name.$i"; done | median)" \
        "$(for i in $(seq "$runs"); do rss "$timings/$name.$i"; done | median)"
}

echo "build: $build; $(nproc) CPUs; runs: $runs (medians), page cache warm; input $size bytes"
# ckhost makes its outputs durable (fsync before the rename) unless --no-sync; cp does not, so
# each is compared with its like: ckhost with cp then sync, ckhost --no-sync with cp alone.
for t in $threads; do
    cat "$model" > /dev/null
    read -r w r < <(time_runs ck "$ckhost" --quiet --threads "$t" --pipeline gguf:hf \
        -i "$model" -o "$work/out")
    ck_out=$(du -cb "$work/out" | tail -1 | cut -f1)
    read -r nw nr < <(time_runs cknosync "$ckhost" --quiet --no-sync --threads "$t" \
        --pipeline gguf:hf -i "$model" -o "$work/out")
    # The baselines: one file of the export's size, written by cp from the page cache.
    head -c "$ck_out" /dev/zero > "$work/source"
    cat "$work/source" > /dev/null
    read -r cw cr < <(time_runs cp cp "$work/source" "$work/copy")
    read -r sw sr < <(time_runs cpsync sh -c "cp '$work/source' '$work/copy' && sync")
    rm -f "$work/source"
    printf 'gguf:hf --threads %s: %s bytes written, peak RSS %.1f MiB (--no-sync %.1f MiB)\n' \
        "$t" "$ck_out" "$(echo "$r / 1024" | bc -l)" "$(echo "$nr / 1024" | bc -l)"
    printf '  durable   %7.2f s   cp + sync %7.2f s   ratio %.2f\n' "$w" "$sw" \
        "$(echo "$w / $sw" | bc -l)"
    printf '  --no-sync %7.2f s   cp        %7.2f s   ratio %.2f\n' "$nw" "$cw" \
        "$(echo "$nw / $cw" | bc -l)"
done
