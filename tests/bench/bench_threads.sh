#!/usr/bin/env bash
# Benchmark of issue 12: what a second thread buys, per pipeline, as whole processes under
# /usr/bin/time -v with a warm page cache: --threads 1 against --threads 2 (THREADS="1 2"), the
# median of RUNS wall times and peak RSS. Inputs, generated once into DIR (never the repository):
#   - the whole TinyLlama-1.1B-shaped F16 model (22 layers, 2.2 GB), for quantize;
#   - its Q8_0 version (1.17 GB), for repack to Int8;
#   - the 4-layer F16 model (614 MB), for GGUF-lite's q4 scheme;
#   - the main job's Q4_K_M model (667 MB), for gguf:headpack:bump (with OLD=BUILD_DIR, also
#     the ckhost of another build, to compare with the previous version);
# and the Q8_0 quantization once more with a small --max-memory (BUDGET, default 64M).
#
#   tests/bench/bench_threads.sh [BUILD_DIR]   (default: build; RUNS=3 DIR=/tmp/ckhost-bench)
set -euo pipefail
. "$(dirname "$0")/timing.sh"
bench_setup threads "$@"

f16_22=$dir/tinyllama-22l-f16.gguf
f16_4=$dir/tinyllama-4l-f16.gguf
q8=$dir/tinyllama-q8_0.gguf
q4km=$dir/tinyllama-q4_k_m.gguf
[ -f "$f16_22" ] || "$build/tests/bench/make_f16_bench_model" "$f16_22" 22
[ -f "$f16_4" ] || "$build/tests/bench/make_f16_bench_model" "$f16_4"
[ -f "$q8" ] || "$build/tests/bench/make_repack_bench_model" "$q8" q8_0
[ -f "$q4km" ] || "$build/tests/bench/make_bench_model" "$q4km"

# measure LABEL BINARY MODEL PIPELINE OUTPUT [ckhost options...]: prints one line, and leaves
# the median wall time in $last.
last=0
measure() {
    local label=$1 bin=$2 model=$3 pipeline=$4 output=$5; shift 5
    cat "$model" > /dev/null
    "$bin" --quiet --force --pipeline "$pipeline" -i "$model" -o "$output" "$@"  # warm-up
    for i in $(seq "$runs"); do
        /usr/bin/time -v -o "$timings/run.$i" \
            "$bin" --quiet --force --pipeline "$pipeline" -i "$model" -o "$output" "$@"
    done
    local w r
    w=$(for i in $(seq "$runs"); do wall "$timings/run.$i"; done | median)
    r=$(for i in $(seq "$runs"); do rss "$timings/run.$i"; done | median)
    last=$w
    printf '  %-18s %7.2f s  %8.1f MB/s of input  %7.1f MiB peak RSS\n' "$label" "$w" \
        "$(echo "$(stat -c %s "$model") / $w / 1000000" | bc -l)" "$(echo "$r / 1024" | bc -l)"
}

# bench MODEL PIPELINE OUTPUT: every thread count, then the ratio of the last to the first.
bench() {
    local model=$1 pipeline=$2 output=$3 first=
    echo "$pipeline  (input $(basename "$model"), $(stat -c %s "$model") bytes)"
    for t in $threads; do
        measure "--threads $t" "$ckhost" "$model" "$pipeline" "$output" --threads "$t"
        [ -n "$first" ] || first=$last
    done
    printf '  time ratio (last / first): %.2f\n' "$(echo "$last / $first" | bc -l)"
}

echo "build: $build; $(nproc) CPUs; runs: $runs (medians), page cache warm"
bench "$f16_22" 'gguf:quantize[to=q8_0]:gguf' "$work/q8_0.gguf"
bench "$f16_22" 'gguf:quantize[to=q4_0]:gguf' "$work/q4_0.gguf"
bench "$q8" 'gguf:repack[to=int8]:safetensors' "$work/int8.safetensors"
bench "$f16_4" 'gguf:gguflite[scheme=q4]' "$work/q4.glft"
bench "$q4km" 'gguf:headpack:bump' "$work/bump/"
# The memory budget: the Q8_0 quantization again with the most threads and a small
# --max-memory (BUDGET, default 64M): peak RSS stays at about the budget plus one tensor.
budget=${BUDGET:-64M}
echo "gguf:quantize[to=q8_0]:gguf with --max-memory $budget"
for t in $threads; do :; done
measure "--threads $t" "$ckhost" "$f16_22" 'gguf:quantize[to=q8_0]:gguf' "$work/q8_0.gguf" \
    --threads "$t" --max-memory "$budget"
if [ -n "${OLD:-}" ]; then
    echo "gguf:headpack:bump with the ckhost of $OLD"
    measure "old build" "$OLD/bin/ckhost" "$q4km" 'gguf:headpack:bump' "$work/bump-old/"
fi
