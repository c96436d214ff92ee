#!/usr/bin/env bash
# Benchmark of issue 30: quantizing with an importance matrix, ckhost against llama-quantize in
# the same run, as whole processes under /usr/bin/time -v with a warm page cache, 2 threads
# (THREADS), median of RUNS wall times and peak RSS. Input: the TinyLlama-1.1B-shaped F16 model
# cut to 6 layers (790.7 MB) and a synthetic GGUF importance matrix of its shape
# (make_bench_imatrix), generated once into DIR, never the repository. MIXES chooses the
# mixtures (default: IQ2_XXS IQ3_XXS IQ4_XS Q4_K_M Q2_K_S). llama-quantize is LLAMA_QUANTIZE
# (default /tmp/llama.cpp/build/bin/llama-quantize: llama.cpp built from the npm package
# node-llama-cpp 3.22.1's bundle); without it only ckhost's figures are printed. Each ckhost
# output is compared with llama-quantize's (cmp) when both ran.
#
#   tests/bench/bench_imatrix.sh [BUILD_DIR]   (default: build; RUNS=3 THREADS=2 DIR=/tmp/ckhost-bench)
set -euo pipefail
. "$(dirname "$0")/timing.sh"
THREADS=${THREADS:-2}
bench_setup imatrix "$@"
mixes=${MIXES:-IQ2_XXS IQ3_XXS IQ4_XS Q4_K_M Q2_K_S}
llama_quantize=${LLAMA_QUANTIZE:-/tmp/llama.cpp/build/bin/llama-quantize}

model=$dir/tinyllama-6l-f16.gguf
imatrix=$dir/tinyllama-6l.imatrix.gguf
[ -f "$model" ] || "$build/tests/bench/make_f16_bench_model" "$model" 6
[ -f "$imatrix" ] || "$build/tests/bench/make_bench_imatrix" "$imatrix" 6
size=$(stat -c %s "$model")

# time_runs NAME COMMAND...: runs COMMAND RUNS times; prints "wall rss_kib" medians.
time_runs() {
    local name=$1
    shift
    for i in $(seq "$runs"); do /usr/bin/time -v -o "$timings/$name.$i" "$@" > /dev/null 2>&1; done
    echo "$(for i in $(seq "$runs"); do wall "$timings/$name.$i"; done | median)" \
        "$(for i in $(seq "$runs"); do rss "$timings/$name.$i"; done | median)"
}

echo "build: $build; $(nproc) CPUs; runs: $runs (medians), page cache warm; input $size bytes"
[ -x "$llama_quantize" ] || echo "(no llama-quantize at $llama_quantize: ckhost only)"
for mix in $mixes; do
    for t in $THREADS; do
        cat "$model" "$imatrix" > /dev/null
        read -r w r < <(time_runs ck "$ckhost" quantize --quiet --force --threads "$t" \
            --imatrix "$imatrix" "$model" "$work/ck.gguf" "$mix")
        line=$(printf '%-8s --threads %s  ckhost %7.2f s %6.1f MiB' "$mix" "$t" "$w" \
            "$(echo "$r / 1024" | bc -l)")
        if [ -x "$llama_quantize" ]; then
            read -r lw lr < <(time_runs llama "$llama_quantize" --imatrix "$imatrix" "$model" \
                "$work/llama.gguf" "$mix" "$t")
            same=$(cmp -s "$work/ck.gguf" "$work/llama.gguf" && echo identical || echo DIFFERENT)
            line+=$(printf '  llama-quantize %7.2f s %6.1f MiB  ratio %.3f  (%s)' "$lw" \
                "$(echo "$lr / 1024" | bc -l)" "$(echo "$w / $lw" | bc -l)" "$same")
        fi
        echo "$line"
    done
done
