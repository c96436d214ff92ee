#!/usr/bin/env bash
# Benchmark of bump v4 (issue 18), whole process, page cache warm, medians:
#  1. `gguf:bump[version=4]` on the ~667 MB TinyLlama-shaped Q4_K_M model (make_bench_model):
#     the copying path, next to `openssl dgst -sha256` of the same input. Target <= 1.25x.
#     Measured twice: as users run it (each output fsynced before its rename) and with
#     --no-sync, which is what the target meant when it was set (before outputs were durable).
#  2. the same on the ~614 MB 4-layer F16 model (make_f16_bench_model): the dequantizing path
#     (every weight widened to F32 and padded), next to the reference converter
#     convert_gguf_to_bump_v4.py when REFERENCE points at it (python3 + numpy; its sibling
#     scripts convert_gguf_to_bump.py, convert_hf_to_bump.py and q4_k_quantize.py beside it).
# Peak RSS target <= 64 MiB for ckhost in both. Models and outputs go to /tmp, never the
# repository.
#
#   tests/bench/bench_bump_v4.sh [BUILD_DIR]    (default: build, configured with
#                                                -DCKHOST_BUILD_BENCH=ON)
#   RUNS=3 DIR=/tmp/ckhost-bench REFERENCE=/tmp/ckref/convert_gguf_to_bump_v4.py PYTHON=python3
set -euo pipefail
. "$(dirname "$0")/timing.sh"
bench_setup bump-v4 "${1:-}"
q4=$dir/tinyllama-q4_k_m.gguf
f16=$dir/tinyllama-4l-f16.gguf
reference=${REFERENCE:-}
[ -f "$q4" ] || "$build/tests/bench/make_bench_model" "$q4"
[ -f "$f16" ] || "$build/tests/bench/make_f16_bench_model" "$f16"

# run NAME COMMAND...: one measured run into $timings/NAME.i, outputs removed before it.
measure() {
    local name=$1 i=$2
    shift 2
    rm -rf "$work/out"
    mkdir -p "$work/out"
    sync
    sleep 1
    /usr/bin/time -v -o "$timings/$name.$i" "$@" > /dev/null
}
report() {
    local name=$1
    printf '%-28s %7.2f s  %7.1f MiB peak RSS   (runs: %s)\n' "$name" \
        "$(for i in $(seq "$runs"); do wall "$timings/$name.$i"; done | median)" \
        "$(echo "$(for i in $(seq "$runs"); do rss "$timings/$name.$i"; done | median) / 1024" | bc -l)" \
        "$(for i in $(seq "$runs"); do printf '%s ' "$(wall "$timings/$name.$i")"; done)"
}
ratio() {
    echo "$(for i in $(seq "$runs"); do wall "$timings/$1.$i"; done | median) / $(for i in $(seq "$runs"); do wall "$timings/$2.$i"; done | median)" | bc -l
}

cat "$q4" "$f16" > /dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
    measure ckhost-q4 "$i" "$ckhost" --pipeline 'gguf:bump[version=4]' -i "$q4" -o "$work/out/" --quiet
    measure ckhost-q4-nosync "$i" "$ckhost" --pipeline 'gguf:bump[version=4]' -i "$q4" -o "$work/out/" \
        --quiet --no-sync
    measure openssl-q4 "$i" openssl dgst -sha256 "$q4"
    measure ckhost-f16 "$i" "$ckhost" --pipeline 'gguf:bump[version=4]' -i "$f16" -o "$work/out/" --quiet
    if [ -n "$reference" ]; then
        measure reference-f16 "$i" sh -c 'cd "$1" && "$4" "$2" --gguf "$3" --output weights.bump \
            --config-out config.json --manifest-out weights_manifest.json --map-out weights_map.json' \
            sh "$work/out" "$reference" "$f16" "${PYTHON:-python3}"
    fi
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Q4_K_M input: $q4 ($(stat -c %s "$q4") bytes); F16 input: $f16 ($(stat -c %s "$f16") bytes)"
report ckhost-q4
report openssl-q4
report ckhost-q4-nosync
printf 'ratio ckhost / openssl (Q4_K_M):   %6.2f   (target <= 1.25)\n' "$(ratio ckhost-q4 openssl-q4)"
printf 'the same with --no-sync:           %6.2f   (the fsyncs of a durable output left out)\n' \
    "$(ratio ckhost-q4-nosync openssl-q4)"
report ckhost-f16
if [ -n "$reference" ]; then
    report reference-f16
    printf 'ratio ckhost / reference (F16):    %6.3f\n' "$(ratio ckhost-f16 reference-f16)"
fi
echo "RSS target for ckhost: <= 64 MiB"
