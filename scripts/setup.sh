#!/usr/bin/env bash
# First command of the README: install what is missing, build, and run the main job on the
# sample model shipped in examples/.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build

sample=examples/micro-llama-q4_k_m.gguf
mkdir -p out
build/bin/ckhost inspect "$sample"
build/bin/ckhost --pipeline gguf:headpack:bump -i "$sample" -o out/ --force
build/bin/ckhost verify out/weights.bump
echo "wrote out/weights.bump and out/config.json"
