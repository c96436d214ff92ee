#!/usr/bin/env bash
# Benchmark of issue 13: llama-quantize's mixtures made by ckhost, as whole processes under
# /usr/bin/time -v with a warm page cache, --threads 1 and 2 (THREADS), median of RUNS wall
# times and peak RSS, on the TinyLlama-1.1B-shaped F16 model (22 layers, 2.2 GB, generated
# once into DIR, never the repository). MIXES chooses the mixtures (default: q4_k_m q6_k q8_0
# q4_0; also measured: q5_k_m q3_k_m q2_k iq4_nl). llama-quantize's figures on this machine, for the ratios (2 threads, same input,
# measured with llama.cpp's llama-quantize built from node-llama-cpp 3.22.1's bundle on
# 2026-11-24): Q4_K_M 36.18 s, Q5_K_M 30.83 s, Q6_K 19.65 s, Q3_K_M 20.04 s, Q2_K 26.10 s,
# IQ4_NL 96.60 s, Q8_0 5.56 s, Q4_0 3.93 s (the issue quoted 54 s for Q4_K_M, 5.26 s and
# 5.60 s); LLAMA_Q4_K_M etc. override them, in seconds.
# The per-type kernel throughput is build/kernels/bench/bench_quantize (Google Benchmark).
#
#   tests/bench/bench_quantize.sh [BUILD_DIR]   (default: build; RUNS=3 DIR=/tmp/ckhost-bench)
set -euo pipefail
. "$(dirname "$0")/timing.sh"
bench_setup quantize "$@"
mixes=${MIXES:-q4_k_m q6_k q8_0 q4_0}

model=$dir/tinyllama-22l-f16.gguf
[ -f "$model" ] || "$build/tests/bench/make_f16_bench_model" "$model" 22
size=$(stat -c %s "$model")
declare -A llama=([q4_k_m]=${LLAMA_Q4_K_M:-36.18} [q5_k_m]=${LLAMA_Q5_K_M:-30.83}
    [q6_k]=${LLAMA_Q6_K:-19.65} [q3_k_m]=${LLAMA_Q3_K_M:-20.04} [q2_k]=${LLAMA_Q2_K:-26.10}
    [iq4_nl]=${LLAMA_IQ4_NL:-96.60} [q8_0]=${LLAMA_Q8_0:-5.56} [q4_0]=${LLAMA_Q4_0:-3.93})

echo "build: $build; $(nproc) CPUs; runs: $runs (medians), page cache warm; input $size bytes"
for mix in $mixes; do
    pipeline="gguf:quantize[mix=$mix]:gguf"
    echo "$pipeline"
    for t in $threads; do
        cat "$model" > /dev/null
        for i in $(seq "$runs"); do
            /usr/bin/time -v -o "$timings/run.$i" "$ckhost" --quiet --force --threads "$t" \
                --pipeline "$pipeline" -i "$model" -o "$work/out.gguf"
        done
        w=$(for i in $(seq "$runs"); do wall "$timings/run.$i"; done | median)
        r=$(for i in $(seq "$runs"); do rss "$timings/run.$i"; done | median)
        line=$(printf '  --threads %-3s %8.2f s  %7.1f MB/s of F16 input  %7.1f MiB peak RSS' \
            "$t" "$w" "$(echo "$size / $w / 1000000" | bc -l)" "$(echo "$r / 1024" | bc -l)")
        if [ "$t" = 2 ] && [ -n "${llama[$mix]:-}" ]; then
            line+=$(printf '  (llama-quantize %s s: ratio %.2f)' "${llama[$mix]}" \
                "$(echo "$w / ${llama[$mix]}" | bc -l)")
        fi
        echo "$line"
    done
done
