#!/usr/bin/env bash
# ckhost export-lora against a llama-export-lora binary on this machine, byte for byte, on
# inputs made here (make_export_lora_inputs.py): every rank path of the merge kernel (ranks 4 to
# 128: tiled, in order with and without a fused tail, 64 fused lanes then the rest), F16, F32,
# BF16 and Q8_0 base weights, token_embd, several adapters with scales in command-line order.
# llama-export-lora's sums follow its build's CPU kernels: expect identical files from a build
# for AVX-512 (as the lora README's reference), not from an AVX2 or ARM one. Not a CTest test:
# it needs llama.cpp's binary.
#
#   tests/lora/check_llama_export_lora.sh CKHOST LLAMA_EXPORT_LORA
set -euo pipefail
ckhost=$1
llama=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$(dirname "$0")/make_export_lora_inputs.py" "$dir"
cd "$dir"
status=0
check() {
    "$llama" -m base.gguf "$@" -o ref.gguf -t 2 > /dev/null 2>&1
    "$ckhost" -q export-lora -m base.gguf "$@" -o ck.gguf -t 2 --force
    if cmp -s ref.gguf ck.gguf; then echo "same: $*"; else echo "DIFFERENT: $*"; status=1; fi
}
for r in 4 6 8 12 16 20 32 48 64 72 100 128; do
    for t in f32 f16; do check --lora "r$r.$t.gguf"; done
done
check --lora r16.f32.gguf,r6.f16.gguf
check --lora-scaled r72.f32.gguf:0.3,r32.f16.gguf:-1.7
check --lora r8.f32.gguf --lora-scaled r100.f16.gguf:2.5
check --lora-scaled r4.f16.gguf:0.1 --lora r128.f32.gguf
exit $status
