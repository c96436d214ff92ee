#!/usr/bin/env bash
# Benchmark of issue 32: `ckhost compare` of a 2.2 GB F16 model (the TinyLlama-1.1B shape, all 22
# layers, make_f16_bench_model) with its Q4_K_M (made by `ckhost quantize`), against reading
# both files once (`cat A B > /dev/null`), the page cache warm (both files read once first):
# median wall time and peak RSS of RUNS runs each under /usr/bin/time -v, on THREADS threads
# (default 2), without and with --report. The goal: within 1.5x of cat, and a peak RSS under
# 64 MiB per thread. The models are generated once into DIR, never the repository.
#
#   tests/bench/bench_compare.sh [BUILD_DIR]   (default: build; RUNS=3 THREADS=2 DIR=/tmp/ckhost-bench)
set -euo pipefail
. "$(dirname "$0")/timing.sh"
THREADS=${THREADS:-2}
bench_setup compare "$@"

model=$dir/tinyllama-22l-f16.gguf
quant=$dir/tinyllama-22l-q4_k_m.gguf
[ -f "$model" ] || "$build/tests/bench/make_f16_bench_model" "$model" 22
[ -f "$quant" ] || "$ckhost" quantize --quiet "$model" "$quant" Q4_K_M

# cpu FILE: user + system seconds of a /usr/bin/time -v report. On a machine shared with other
# work the wall time includes the time the process waited for a CPU; this is what it used.
cpu() { awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$1"; }

# time_runs NAME COMMAND...: runs COMMAND RUNS times; prints "wall rss_kib cpu" medians.
time_runs() {
    local name=$1
    shift
    for i in $(seq "$runs"); do /usr/bin/time -v -o "$timings/$name.$i" "$@" > /dev/null 2>&1; done
    echo "$(for i in $(seq "$runs"); do wall "$timings/$name.$i"; done | median)" \
        "$(for i in $(seq "$runs"); do rss "$timings/$name.$i"; done | median)" \
        "$(for i in $(seq "$runs"); do cpu "$timings/$name.$i"; done | median)"
}

bytes=$(($(stat -c %s "$model") + $(stat -c %s "$quant")))
echo "build: $build; $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg); runs: $runs" \
    "(medians), page cache warm"
echo "A: $model ($(stat -c %s "$model") bytes), B: $quant ($(stat -c %s "$quant") bytes)"
cat "$model" "$quant" > /dev/null
read -r cw cr cc < <(time_runs cat cat "$model" "$quant")
printf '%-30s %6.2f s wall %6.2f s CPU %6.1f MiB  (%.2f GB/s)\n' "cat A B > /dev/null" "$cw" "$cc" \
    "$(echo "$cr / 1024" | bc -l)" "$(echo "$bytes / $cw / 1000000000" | bc -l)"
for t in $THREADS; do
    read -r w r c < <(time_runs "compare$t" "$ckhost" compare --quiet --threads "$t" "$model" "$quant")
    printf '%-30s %6.2f s wall %6.2f s CPU %6.1f MiB  (%.2fx cat, %.1f MiB per thread)\n' \
        "compare --threads $t" "$w" "$c" "$(echo "$r / 1024" | bc -l)" "$(echo "$w / $cw" | bc -l)" \
        "$(echo "$r / 1024 / $t" | bc -l)"
    read -r w r c < <(time_runs "report$t" "$ckhost" compare --quiet --threads "$t" --force \
        --report "$work/report.html" "$model" "$quant")
    printf '%-30s %6.2f s wall %6.2f s CPU %6.1f MiB  (%.2fx cat)\n' \
        "compare --threads $t --report" "$w" "$c" "$(echo "$r / 1024" | bc -l)" \
        "$(echo "$w / $cw" | bc -l)"
done
