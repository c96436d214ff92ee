#!/usr/bin/env bash
# Issue 29's benchmark: today's shapes as generated 2.5 GB BF16 Hugging Face checkpoints
# (make_hf_checkpoint.py: a Llama-3.2-1B, rope_scaling llama3 and tied embeddings, in one file;
# a Qwen3-30B-A3B layout at hidden 1024, 3 layers of 128 experts, in two shards that split a
# layer's experts), each through
#   cp -r                                the yardstick: the checkpoint's bytes copied
#   dd bs=4M of the same size            the floor for writing that many bytes through write(),
#                                        which ckhost and the converter use and cp does not
#                                        (it copies inside the kernel, copy_file_range)
#   ckhost hf:gguf                       BF16 kept
#   ckhost hf:dequant[to=f16]:gguf       what --outtype f16 makes
#   convert_hf_to_gguf.py --outtype bf16 and f16   llama.cpp's converter, from its source tree
# with a warm page cache; wall time (median of RUNS runs; the converter CONVERTER_RUNS, as it
# takes minutes), its ratio to cp's, and the largest peak RSS (/usr/bin/time -v). ckhost runs
# with --no-sync, as cp and the converter do not fsync either. ckhost's outputs are compared
# with the converter's (cmp) and the table says whether they are identical. A command that
# fails is reported as such and the rest goes on.
#
#   tests/bench/bench_hf_arch.sh [BUILD_DIR]
#
# RUNS (3), CONVERTER_RUNS (1), SHAPES ("llama32-1b qwen3moe"), DIR (/tmp/ckhost-bench: the
# generated checkpoints, never in the repository; removed at the end unless KEEP=1),
# LLAMA_CPP_SRC (/tmp/llama.cpp/src: convert_hf_to_gguf.py, conversion/ and gguf-py/; the
# converter's rows are skipped when it is absent), HF_ARCH (../shared/testdata/hf-arch: config
# keys and tokenizers), PYTHON (/usr/bin/python3, with python3-torch, python3-numpy,
# python3-sentencepiece: run_convert_hf.py supplies a transformers stand-in).
set -euo pipefail
source "$(dirname "$0")/timing.sh"
bench_setup hf-arch "${1:-}"
converter_runs=${CONVERTER_RUNS:-1}
shapes=${SHAPES:-llama32-1b qwen3moe}
llama_src=${LLAMA_CPP_SRC:-/tmp/llama.cpp/src}
hf_arch=${HF_ARCH:-$root/../shared/testdata/hf-arch}
python=${PYTHON:-/usr/bin/python3}
models=()
trap 'rm -rf "$timings" "$work"; [ "${KEEP:-0}" = 1 ] || rm -rf "${models[@]}"' EXIT
table=$timings/table

# measure SHAPE NAME RUNS OUTPUT COMMAND...: times COMMAND RUNS times, keeping OUTPUT (a file or
# folder COMMAND writes) from the last run; appends "shape name secs kib status" to the table.
measure() {
    local shape=$1 name=$2 count=$3 output=$4
    shift 4
    local status=ok
    for ((r = 0; r < count; ++r)); do
        rm -rf "$output"
        cat "$model"/*.safetensors > /dev/null  # warm the page cache
        if ! /usr/bin/time -v -o "$timings/run.$r" "$@" > "$timings/log" 2>&1; then
            status="failed (exit $(awk -F': ' '/Exit status/ { print $2 }' "$timings/run.$r")):"
            status+=" $(grep -v '^\s*$' "$timings/log" | tail -1 | cut -c1-100)"
            echo "$shape $name: $status" >&2
            count=$((r + 1))
            break
        fi
    done
    local secs kib
    secs=$(for ((r = 0; r < count; ++r)); do wall "$timings/run.$r"; done | median)
    kib=$(for ((r = 0; r < count; ++r)); do rss "$timings/run.$r"; done | sort -n | tail -1)
    printf '%s\t%s\t%s\t%s\t%s\n' "$shape" "$name" "$secs" "$kib" "$status" >> "$table"
}

# same SHAPE NAME A B: notes in the table whether ckhost's output A is the converter's B.
same() {
    local verdict="identical to the converter's"
    [ -f "$3" ] && [ -f "$4" ] || return 0
    cmp -s "$3" "$4" || verdict="differs from the converter's"
    printf '%s\t%s\t-\t-\t%s\n' "$1" "$2" "$verdict" >> "$table"
}

bench_shape() {  # SHAPE
    local shape=$1
    model=$dir/$shape
    models+=("$model")
    [ -f "$model/config.json" ] || "$python" "$root/tests/bench/make_hf_checkpoint.py" "$model" \
        "$shape" "$hf_arch"
    local out=$work/$shape
    measure "$shape" "cp -r" "$runs" "$out.copy" cp -r "$model" "$out.copy"
    rm -rf "$out.copy"
    local blocks
    blocks=$(($(cat "$model"/*.safetensors | wc -c) / 4194304 + 1))
    measure "$shape" "dd if=/dev/zero bs=4M count=$blocks" "$runs" "$out.zeros" dd if=/dev/zero \
        of="$out.zeros" bs=4M count="$blocks" status=none
    rm -f "$out.zeros"
    if [ -f "$llama_src/convert_hf_to_gguf.py" ]; then
        for type in bf16 f16; do
            measure "$shape" "convert_hf_to_gguf.py --outtype $type" "$converter_runs" \
                "$out.conv.$type.gguf" "$python" "$root/tests/bench/run_convert_hf.py" \
                "$llama_src" "$model" --outtype "$type" --outfile "$out.conv.$type.gguf"
        done
    fi
    measure "$shape" "hf:gguf" "$runs" "$out.bf16.gguf" "$ckhost" --quiet --no-sync \
        --pipeline hf:gguf -i "$model" -o "$out.bf16.gguf"
    same "$shape" "hf:gguf" "$out.bf16.gguf" "$out.conv.bf16.gguf"
    measure "$shape" "hf:dequant[to=f16]:gguf" "$runs" "$out.f16.gguf" "$ckhost" --quiet \
        --no-sync --pipeline 'hf:dequant[to=f16]:gguf' -i "$model" -o "$out.f16.gguf"
    same "$shape" "hf:dequant[to=f16]:gguf" "$out.f16.gguf" "$out.conv.f16.gguf"
    rm -f "$out".*
}

print_table() {
    printf '%-11s %-37s %8s %7s %11s  %s\n' shape command "wall s" "x cp" "peak MiB" status
    awk -F'\t' '$2 == "cp -r" { cp[$1] = $3 }
        { if ($3 == "-") printf "%-11s %-37s %8s %7s %11s  %s\n", $1, $2, "", "", "", $5;
          else printf "%-11s %-37s %8.2f %7.2f %11.1f  %s\n", $1, $2, $3,
                      (cp[$1] > 0 ? $3 / cp[$1] : 0), $4 / 1024, $5 }' "$table"
}

echo "runs: $runs (converter: $converter_runs), $(nproc) cores, checkpoints in $dir"
for shape in $shapes; do bench_shape "$shape"; done
print_table
