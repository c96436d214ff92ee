#!/usr/bin/env bash
# Peak resident memory of the streaming paths (issue 11): every reader and writer must keep a
# few MiB resident whatever the input size. Inputs, generated into /tmp (never the repository):
#   - a TinyLlama-shaped 4-layer F16 GGUF (614 MB; token_embd and output are 131 MB each), and
#     what ckhost makes of it: a safetensors file, an F32 bump file (through dequant[to=f32];
#     1.2 GB, its largest slot 262 MB) and an F16 GGUF-lite file;
#   - the main job's TinyLlama-shaped Q4_K_M GGUF (667 MB).
# Each measured command runs once with a warm page cache under /usr/bin/time -v; the figure is
# its "Maximum resident set size". Target: at most 64 MiB for each.
#
#   tests/bench/bench_rss.sh [BUILD_DIR]        (default: build; DIR=/tmp/ckhost-bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
dir=${DIR:-/tmp/ckhost-bench}
ckhost=$build/bin/ckhost
case "$dir" in "$root"/*) echo "refusing to write models inside the repository" >&2; exit 2 ;; esac
mkdir -p "$dir/rss"
f16=$dir/tinyllama-4l-f16.gguf
q4km=$dir/tinyllama-q4_k_m.gguf
[ -f "$f16" ] || "$build/tests/bench/make_f16_bench_model" "$f16"
[ -f "$q4km" ] || "$build/tests/bench/make_bench_model" "$q4km"

# Inputs for the other readers, made once by this build (not measured).
out=$dir/rss
"$ckhost" --quiet --force --pipeline gguf:safetensors -i "$f16" -o "$out/model.safetensors"
"$ckhost" --quiet --force --pipeline 'gguf:dequant[to=f32]:headpack:bump' -i "$f16" -o "$out/bump/"
"$ckhost" --quiet --force --pipeline 'gguf:gguflite[scheme=f16]' -i "$f16" -o "$out/model.glft"

report=$(mktemp)
trap 'rm -f "$report"' EXIT
measure() {  # NAME INPUT COMMAND...
    local name=$1 input=$2
    shift 2
    cat "$input" > /dev/null  # warm the page cache
    /usr/bin/time -v -o "$report" "$@" > /dev/null
    local kib secs
    kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$report")
    secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
                        for (i = 1; i <= n; ++i) s = s * 60 + p[i]; print s }' "$report")
    printf '%-28s %8.1f MiB peak RSS  %6.2f s  (input %d MB)\n' "$name" "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')" \
        "$secs" "$(( $(stat -c %s "$input") / 1000000 ))"
}

echo "build: $build"
measure "gguf:safetensors" "$f16" \
    "$ckhost" --quiet --force --pipeline gguf:safetensors -i "$f16" -o "$out/copy.safetensors"
measure "safetensors:gguf" "$out/model.safetensors" \
    "$ckhost" --quiet --force --pipeline safetensors:gguf -i "$out/model.safetensors" -o "$out/copy.gguf"
measure "verify weights.bump (F32)" "$out/bump/weights.bump" \
    "$ckhost" verify "$out/bump/weights.bump"
measure "gguflite:gguf (f16 scheme)" "$out/model.glft" \
    "$ckhost" --quiet --force --pipeline gguflite:gguf -i "$out/model.glft" -o "$out/lite.gguf"
measure "gguf:headpack:bump (Q4_K_M)" "$q4km" \
    "$ckhost" --quiet --force --pipeline gguf:headpack:bump -i "$q4km" -o "$out/main/"
rm -f "$out/copy.safetensors" "$out/copy.gguf" "$out/lite.gguf"
