#!/bin/sh
# Makes every reference file of this folder again (README.md says what each is).
#
#   LLAMA_QUANTIZE=/path/to/llama-quantize GGUF_PY=/path/to/llama.cpp/gguf-py \
#   HF_ARCH=/path/to/shared/testdata/hf-arch sh make_references.sh
#
# Run in this folder. Needs /usr/bin/python3 with numpy (Debian's python3-numpy).
set -eu
: "${LLAMA_QUANTIZE:?the llama-quantize binary}" "${GGUF_PY:?llama.cpp's gguf-py folder}"
: "${HF_ARCH:?the shared hf-arch folder}"
python="env PYTHONPATH=$GGUF_PY /usr/bin/python3"
quantize() {  # INPUT OUTPUT MIX: one thread, as ../../../shared/testdata/quant/ was made
    "$LLAMA_QUANTIZE" "$1" "$2" "$3" 1 > /dev/null 2>&1
}

for model in llama31 mixtral gemma2 gemma3 phi3 phi3-longrope mistral-nemo; do
    quantize "$HF_ARCH/$model-bf16.bf16.gguf" "$model-bf16.q4_k_m.gguf" Q4_K_M
done
quantize "$HF_ARCH/mixtral-bf16.bf16.gguf" mixtral-bf16.q8_0.gguf Q8_0

# Qwen3's outputs are 8.4 and 10.8 MB (7.8 MB of tokenizer arrays, 2.4 MB per F16 copy of the
# 151936 x 8 embedding): their digests are kept instead.
tmp=$(mktemp -d)
for model in qwen3 qwen3moe; do
    quantize "$HF_ARCH/$model-bf16.bf16.gguf" "$tmp/$model-bf16.q4_k_m.gguf" Q4_K_M
    $python digest_gguf.py "$tmp/$model-bf16.q4_k_m.gguf" > "$model-bf16.q4_k_m.sha256"
done
rm -r "$tmp"

$python make_head72.py head72-bf16.gguf
quantize head72-bf16.gguf head72-bf16.q8_0.gguf Q8_0
quantize head72-bf16.gguf head72-bf16.q4_k_m.gguf Q4_K_M
