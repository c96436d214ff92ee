#!/usr/bin/env bash
# Benchmark of issue 33: a rank-16 LoRA adapter on every linear layer merged into a 2.2 GB F16
# model (make_f16_bench_model's TinyLlama-1.1B shape, 22 layers; make_lora_bench_adapter's
# adapter), whole processes under /usr/bin/time -v, page cache warm, median of RUNS wall times
# and peak RSS, for each thread count in THREADS:
#   - ckhost export-lora against llama-export-lora (LLAMA_EXPORT_LORA, default the llama.cpp
#     bundle's build in /tmp/llama.cpp/build/bin; skipped when absent), same threads;
#   - gguf:lora[...]:gguf against gguf:gguf (the same pipeline without the merge: a copy);
#   - gguf:lora[...]:quantize[mix=q4_k_m]:gguf against gguf:quantize[mix=q4_k_m]:gguf.
# Outputs are written with --no-sync (llama-export-lora does not sync either).
#
#   tests/bench/bench_lora.sh [BUILD_DIR]   (default: build; RUNS=3 THREADS="2" DIR=/tmp/ckhost-bench)
set -euo pipefail
THREADS=${THREADS:-2}
. "$(dirname "$0")/timing.sh"
bench_setup lora "$@"

model=$dir/tinyllama-22l-f16.gguf
adapter=$dir/tinyllama-22l-lora-r16.gguf
[ -f "$model" ] || "$build/tests/bench/make_f16_bench_model" "$model" 22
[ -f "$adapter" ] || "$build/tests/bench/make_lora_bench_adapter" "$model" "$adapter" 16
llama=${LLAMA_EXPORT_LORA:-/tmp/llama.cpp/build/bin/llama-export-lora}

# time_runs NAME COMMAND...: runs COMMAND RUNS times (removing the output before each); prints
# "wall rss_kib" medians.
time_runs() {
    local name=$1
    shift
    for i in $(seq "$runs"); do
        rm -f "$work/out.gguf"
        /usr/bin/time -v -o "$timings/$name.$i" "$@" > /dev/null 2>&1
    done
    echo "$(for i in $(seq "$runs"); do wall "$timings/$name.$i"; done | median)" \
        "$(for i in $(seq "$runs"); do rss "$timings/$name.$i"; done | median)"
}

report() {  # NAME WALL RSS [BASELINE_WALL]
    printf '  %-44s %7.2f s  peak RSS %7.1f MiB' "$1" "$2" "$(echo "$3 / 1024" | bc -l)"
    [ -n "${4:-}" ] && printf '  ratio %.2f' "$(echo "$2 / $4" | bc -l)"
    echo
}

echo "build: $build; $(nproc) CPUs; runs: $runs (medians), page cache warm"
echo "model $(stat -c %s "$model") bytes; adapter $(stat -c %s "$adapter") bytes (rank 16, 154 pairs)"
ck=("$ckhost" --quiet --no-sync)
for t in $threads; do
    cat "$model" "$adapter" > /dev/null
    echo "--threads $t"
    read -r cw cr < <(time_runs copy "${ck[@]}" --threads "$t" --pipeline gguf:gguf \
        -i "$model" -o "$work/out.gguf")
    report "gguf:gguf (no merge)" "$cw" "$cr"
    read -r lw lr < <(time_runs lora "${ck[@]}" --threads "$t" \
        --pipeline "gguf:lora[adapter=$adapter]:gguf" -i "$model" -o "$work/out.gguf")
    report "gguf:lora[adapter=...]:gguf" "$lw" "$lr" "$cw"
    read -r ew er < <(time_runs export "${ck[@]}" export-lora -m "$model" --lora "$adapter" \
        -o "$work/out.gguf" -t "$t")
    report "ckhost export-lora" "$ew" "$er"
    if [ -x "$llama" ]; then
        read -r xw xr < <(time_runs llama "$llama" -m "$model" --lora "$adapter" \
            -o "$work/out.gguf" -t "$t")
        report "llama-export-lora" "$xw" "$xr"
        printf '  ckhost export-lora / llama-export-lora: %.2f\n' "$(echo "$ew / $xw" | bc -l)"
    fi
    read -r qw qr < <(time_runs quant "${ck[@]}" --threads "$t" \
        --pipeline "gguf:quantize[mix=q4_k_m]:gguf" -i "$model" -o "$work/out.gguf")
    report "gguf:quantize[mix=q4_k_m]:gguf" "$qw" "$qr"
    read -r mw mr < <(time_runs lquant "${ck[@]}" --threads "$t" \
        --pipeline "gguf:lora[adapter=$adapter]:quantize[mix=q4_k_m]:gguf" -i "$model" \
        -o "$work/out.gguf")
    report "gguf:lora[...]:quantize[mix=q4_k_m]:gguf" "$mw" "$mr" "$qw"
done
