#!/usr/bin/env bash
# ckhost built for another architecture (run under qemu-user) against the x86-64 build, output
# for output, byte for byte (issue 34): the main job, bump v4, a llama-quantize mixture, an
# importance-matrix quant, a split set and a merge of one, GGUF-lite written and read, both repack
# encoders, GGUF written and read in the other byte order, F16/BF16 narrowing, a Hugging Face
# checkpoint written and read. Every input is made by the native build first.
#   tests/cross/same_outputs.sh NATIVE_CKHOST CROSS_CKHOST
set -euo pipefail
native=$(realpath "$1")
cross=$(realpath "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
sample=$root/examples/micro-llama-q4_k_m.gguf
data=$root/tests/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$native" -q --pipeline 'gguf:dequant[to=f32]:gguf' -i "$sample" -o "$work/f32.gguf"
"$native" -q --pipeline 'gguf:quantize[mix=q8_0]:gguf' -i "$work/f32.gguf" -o "$work/q8_0.gguf"
"$native" -q --pipeline 'gguf:quantize[mix=q4_0]:gguf' -i "$work/f32.gguf" -o "$work/q4_0.gguf"
"$native" -q --pipeline gguf:hf -i "$sample" -o "$work/hf"
"$native" -q --pipeline 'gguf:gguflite[scheme=q4]' -i "$work/f32.gguf" -o "$work/q4.gguflite"

# NAME|ARGUMENTS (OUT is the job's output folder, the same relative path on both sides: bump v4's
# manifest names its weights file by the path it was given).
jobs=(
  "main job|--pipeline gguf:headpack:bump -i $sample -o OUT/"
  "bump v4|--pipeline gguf:headpack:bump[version=4] -i $sample -o OUT/"
  "quantize mixture|quantize $work/f32.gguf OUT/q4_k_m.gguf Q4_K_M"
  "quantize q3_k_s|quantize $work/f32.gguf OUT/q3_k_s.gguf Q3_K_S"
  "imatrix quant|quantize --imatrix $data/imatrix/micro-llama-f16.imatrix.gguf $work/f32.gguf OUT/iq4_xs.gguf IQ4_XS"
  "split set|split --split-max-tensors 20 $sample OUT/part"
  "split merge|--pipeline gguf:gguf -i $data/split/micro-llama-q4_k_m-00001-of-00003.gguf -o OUT/merged.gguf"
  "gguflite|--pipeline gguf:gguflite -i $sample -o OUT/model.gguflite"
  "repack int8|--pipeline gguf:repack[to=int8]:safetensors -i $work/q8_0.gguf -o OUT/"
  "repack nf4|--pipeline gguf:dequant:repack[to=nf4]:safetensors -i $work/q4_0.gguf -o OUT/"
  "big-endian written|--pipeline gguf:gguf[endian=big] -i $sample -o OUT/be.gguf"
  "big-endian read|--pipeline gguf:gguf -i $data/bigendian/types-convertible.be.gguf -o OUT/le.gguf"
  "dequant to f16|--pipeline gguf:dequant[to=f16]:gguf -i $sample -o OUT/f16.gguf"
  "dequant to bf16|--pipeline gguf:dequant[to=bf16]:gguf -i $sample -o OUT/bf16.gguf"
  "weighted q4_k_m|quantize --imatrix $data/imatrix/micro-llama-f16.imatrix.gguf $work/f32.gguf OUT/q4_k_m.gguf Q4_K_M"
  "hf export|--pipeline gguf:hf[dtype=f32] -i $sample -o OUT/"
  "hf checkpoint in|--pipeline hf:gguf -i $work/hf -o OUT/model.gguf"
  "gguflite read|--pipeline gguflite:gguf -i $work/q4.gguflite -o OUT/back.gguf"
)

status=0
for job in "${jobs[@]}"; do
  name=${job%%|*}
  args=${job#*|}
  sums=()
  for side in native cross; do
    place=$work/$side/${name// /-}
    mkdir -p "$place/out"
    program=$native
    [ "$side" = cross ] && program=$cross
    # shellcheck disable=SC2086 # the arguments are words, no path has a space
    (cd "$place" && "$program" -q ${args//OUT/out})
    sums+=("$(cd "$place/out" && find . -type f | sort | xargs sha256sum)")
  done
  if [ "${sums[0]}" = "${sums[1]}" ]; then
    echo "same: $name ($(echo "${sums[0]}" | wc -l) files)"
  else
    echo "DIFFERENT: $name"
    diff <(echo "${sums[0]}") <(echo "${sums[1]}") || true
    status=1
  fi
done
exit $status
