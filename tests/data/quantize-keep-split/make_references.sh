#!/bin/sh
# Makes SHA256SUMS again with llama.cpp's own tools (README.md says which build):
#   LLAMA_QUANTIZE=.../build/bin/llama-quantize LLAMA_GGUF_SPLIT=.../build/bin/llama-gguf-split \
#   SHARED=.../shared/testdata sh make_references.sh
set -eu
: "${LLAMA_QUANTIZE:?the llama-quantize binary}" "${LLAMA_GGUF_SPLIT:?the llama-gguf-split binary}"
: "${SHARED:?the shared testdata folder}"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
model="$SHARED/micro-llama-f16.gguf"
split() { "$LLAMA_GGUF_SPLIT" --split --split-max-tensors 10 "$@" >/dev/null 2>&1; }
quantize() { "$LLAMA_QUANTIZE" --keep-split "$@" >/dev/null 2>&1; }

mkdir split no-tensor-first reversed q4_k_m iq2_xxs override one-file
split "$model" split/in
split --no-tensor-first-split "$model" no-tensor-first/in
python3 "$here/reverse_layers.py" "$model" reversed/rev.gguf
split reversed/rev.gguf reversed/in

quantize split/in-00001-of-00003.gguf q4_k_m/out.gguf Q4_K_M 1
# llama-quantize records --imatrix as given (quantize.imatrix.file): a bare name, run beside it.
cp "$SHARED/imatrix/micro-llama-f16.imatrix.gguf" iq2_xxs/
(cd iq2_xxs && quantize --imatrix micro-llama-f16.imatrix.gguf ../split/in-00001-of-00003.gguf \
    out.gguf IQ2_XXS 1)
rm iq2_xxs/micro-llama-f16.imatrix.gguf
quantize --override-kv "general.name=str:Keep Split" split/in-00001-of-00003.gguf \
    override/out.gguf Q8_0 1
quantize no-tensor-first/in-00001-of-00004.gguf no-tensor-first/out.gguf Q4_K_M 1
quantize "$model" one-file/out.gguf Q4_K_M 1
quantize reversed/in-00001-of-00003.gguf reversed/out.gguf Q4_K_M 1

sha256sum */*.gguf > "$here/SHA256SUMS"
