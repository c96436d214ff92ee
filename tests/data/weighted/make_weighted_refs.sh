#!/usr/bin/env bash
# Regenerates weighted.gguf from ggml's own quantizers. Needs a llama.cpp source tree and its CPU
# build (the one the benchmarks use: the npm package node-llama-cpp 3.22.1's bundle, ggml 0.25.1,
# ggml-base compiled -O3 without -march, as llama-quantize is):
#   LLAMA_CPP=/tmp/llama.cpp tests/data/weighted/make_weighted_refs.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
llama=${LLAMA_CPP:-/tmp/llama.cpp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -std=c11 -I"$llama/src/ggml/include" "$here/make_weighted_refs.c" \
    "$llama/build/ggml/src/libggml-base.a" -lstdc++ -lm -lpthread -fopenmp -o "$tmp/make_weighted_refs"
"$tmp/make_weighted_refs" "$here/weighted.gguf"
sha256sum "$here/weighted.gguf"
