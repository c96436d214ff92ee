#!/usr/bin/env bash
# Benchmark of issue 14: splitting a ~1.17 GB model into a llama-gguf-split set
# (`gguf:gguf[split_max_size=...]`), merging the set back (`gguf:gguf` from a shard), and
# opening the set against opening the merged file (`ckhost inspect`, a whole process), page
# cache warm. The floor is `cp` of the same bytes; targets: split and merge within 1.25x of
# `cp`, peak RSS under 64 MiB; opening a set at most 1.2x opening the merged file. With
# LLAMA_GGUF_SPLIT=/path/to/llama-gguf-split (a peer, never needed) it is timed alongside.
#
#   tests/bench/bench_split.sh [BUILD_DIR]          (default: build)
#   RUNS=3 OPENS=20 SIZE=400M DIR=/tmp/ckhost-bench
set -euo pipefail
. "$(dirname "$0")/timing.sh"
bench_setup split "$@"
opens=${OPENS:-20}
size=${SIZE:-400M}
model=$dir/tinyllama-q8_0.gguf
[ -f "$model" ] || "$build/tests/bench/make_repack_bench_model" "$model" q8_0
cat "$model" > /dev/null
bytes=$(stat -c %s "$model")
echo "input: $model ($bytes bytes)"

# Every run starts alike: the outputs of the previous one removed and all dirty pages written
# back (untimed). Otherwise a run pays for the writeback of the one before, or for unlinking
# its 1 GB output, and timings of the same command vary threefold.
clean() { rm -rf "$work/out"; mkdir -p "$work/out"; sync; }

# timed NAME COMMAND...: runs COMMAND $runs times under /usr/bin/time -v (after one warm-up),
# each from a clean state; prints the median wall time and peak RSS, and the ratio to cp (the
# first command timed).
cp_wall=
timed() {
    local name=$1; shift
    clean; "$@" > /dev/null 2>&1
    for i in $(seq "$runs"); do
        clean
        /usr/bin/time -v -o "$timings/$name.$i" "$@" > /dev/null 2>&1
    done
    local w r
    w=$(for i in $(seq "$runs"); do wall "$timings/$name.$i"; done | median)
    r=$(for i in $(seq "$runs"); do rss "$timings/$name.$i"; done | median)
    [ -n "$cp_wall" ] || cp_wall=$w
    printf '%-52s %6.2f s  %5.2fx cp  %7.1f MiB peak RSS\n' "$name" "$w" \
        "$(echo "$w / $cp_wall" | bc -l)" "$(echo "$r / 1024" | bc -l)"
}

timed "cp (the same bytes, the same disk)" cp "$model" "$work/out/copy.gguf"
timed "cat > file (read and write in user space)" sh -c "cat '$model' > '$work/out/copy.gguf'"

timed "ckhost gguf:gguf[split_max_size=$size]" \
    "$ckhost" --quiet --pipeline "gguf:gguf[split_max_size=$size]" -i "$model" \
    -o "$work/out/m.gguf"
# The set to merge, kept outside out/.
mkdir -p "$work/set"
"$ckhost" --quiet --force --pipeline "gguf:gguf[split_max_size=$size]" -i "$model" \
    -o "$work/set/m.gguf"
first=$(ls "$work"/set/m-00001-of-*.gguf)
echo "  set: $(ls "$work/set" | wc -l) files"
timed "ckhost gguf:gguf (merge the set)" \
    "$ckhost" --quiet --pipeline gguf:gguf -i "$first" -o "$work/out/merged.gguf"
"$ckhost" --quiet --force --pipeline gguf:gguf -i "$first" -o "$work/merged.gguf"

if [ -n "${LLAMA_GGUF_SPLIT:-}" ]; then
    export LD_LIBRARY_PATH=$(dirname "$LLAMA_GGUF_SPLIT")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    mkdir -p "$work/llama"
    timed "llama-gguf-split --split --split-max-size $size" \
        "$LLAMA_GGUF_SPLIT" --split --split-max-size "$size" "$model" "$work/out/m"
    "$LLAMA_GGUF_SPLIT" --split --split-max-size "$size" "$model" "$work/llama/m" > /dev/null
    for f in "$work"/llama/m-*.gguf; do
        cmp -s "$f" "$work/set/$(basename "$f")" && echo "  $(basename "$f"): identical" ||
            echo "  $(basename "$f"): DIFFERS"
    done
    timed "llama-gguf-split --merge" \
        "$LLAMA_GGUF_SPLIT" --merge "$first" "$work/out/merged.gguf"
    "$LLAMA_GGUF_SPLIT" --merge "$first" "$work/llama-merged.gguf" > /dev/null 2>&1
    cmp -s "$work/merged.gguf" "$work/llama-merged.gguf" && echo "  merged files: identical" ||
        echo "  merged files: DIFFER"
fi

# Opening: `ckhost inspect` as a whole process, median of OPENS runs each.
open_ms() {
    for i in $(seq "$opens"); do
        local t0 t1
        t0=$(date +%s%N); "$ckhost" inspect "$1" > /dev/null; t1=$(date +%s%N)
        echo "($t1 - $t0) / 1000000" | bc -l
    done | median
}
set_ms=$(open_ms "$first")
merged_ms=$(open_ms "$work/merged.gguf")
printf 'ckhost inspect: set %.2f ms, merged file %.2f ms: %.2fx\n' "$set_ms" "$merged_ms" \
    "$(echo "$set_ms / $merged_ms" | bc -l)"
