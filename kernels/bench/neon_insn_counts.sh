#!/usr/bin/env bash
# Instructions per block of each NEON kernel against the scalar kernel, counted under qemu-aarch64
# (issue 34): NEON throughput cannot be timed under emulation, so this is the honest proxy. qemu
# runs the ARM64 build's kernel_probe one instruction per translation block (-singlestep) and logs
# every block it executes (-d exec,nochain): one log line per guest instruction. Each kernel runs
# on BLOCKS blocks, and the program runs again making the same input without the kernel (dry);
# the difference over BLOCKS is the kernel's instructions per block.
#   kernels/bench/neon_insn_counts.sh [BUILD_DIR]   (default build-aarch64, from test-cross.sh)
# F16 and BF16 "blocks" are single values (ggml block size 1).
# Needs qemu-aarch64 and the sysroot test-cross.sh unpacks (QEMU_LD_PREFIX).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-aarch64}
probe=$build/kernels/bench/kernel_probe
[ -x "$probe" ] || { echo "neon_insn_counts: no $probe (run scripts/test-cross.sh aarch64)" >&2; exit 1; }
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-${CKHOST_CROSS_CACHE:-$HOME/.cache/ckhost}/sysroot-arm64}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Guest instructions of one run.
count() {
  qemu-aarch64 -singlestep -d exec,nochain -D "$log" "$probe" "$@" > /dev/null
  grep -c '^Trace' "$log"
}

# KIND TYPE BLOCKS: instructions per block, scalar and neon.
per_block() {
  local kind=$1 type=$2 blocks=$3 isa base full
  local out=()
  for isa in scalar neon; do
    base=$(count "$kind" "$type" "$isa" "$blocks" dry)
    full=$(count "$kind" "$type" "$isa" "$blocks")
    out+=("$(echo "($full - $base) / $blocks" | bc -l)")
  done
  printf '| %s | %s | %.1f | %.1f | %.2f |\n' "$kind" "$type" "${out[0]}" "${out[1]}" \
    "$(echo "${out[1]} / ${out[0]}" | bc -l)"
}

echo "| kernel | type | scalar insns/block | neon insns/block | neon / scalar |"
echo "|---|---|---|---|---|"
for t in f16 bf16; do per_block dequant "$t" 4096; done
for t in q8_0 q4_0 iq4_nl iq4_xs q4_K q5_K q6_K; do per_block dequant "$t" 64; done
for t in f16 bf16; do per_block narrow "$t" 4096; done
# The quantizers with a NEON variant (decision 0065: the others run the scalar code on ARM64).
for t in q2_K q4_K q5_K; do per_block quantize "$t" 8; done
for t in q2_K q4_K q5_K; do per_block weighted "$t" 8; done
