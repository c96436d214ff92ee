#!/usr/bin/env bash
# Second command of the README: the whole test suite (warnings are errors).
#   scripts/test.sh             Release build in build/, then ctest
#   scripts/test.sh --sanitize  the same under AddressSanitizer + UBSan, in build-sanitize/
#                               (Clang; the tree scripts/fuzz.sh also uses, fuzz targets and all)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build
skip_labels=()
if [ "${1:-}" = "--sanitize" ]; then
  source scripts/lib/sanitizer-tree.sh
  dir=$sanitizer_dir
  configure_sanitizer_tree
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The sanitizers ask whether code touches memory it must not, which the code paths answer,
  # not the number of random blocks: quantize_variants draws 512 per distribution here
  # (4096 in the Release suite; decision 0064).
  export CKHOST_TEST_RANDOM_BLOCKS=512
  # Checks by outside tools of the files ckhost writes (label release-only) run in the Release
  # suite only: the sanitizers have nothing to check in Python, jsonschema or CMake (decision 0064).
  skip_labels=(-LE release-only)
else
  bash scripts/install-deps.sh
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCKHOST_WERROR=ON
fi

cmake --build "$dir"
# slurm_integration mostly waits on its cluster (25 s, 9 of them on the CPU; 38 s under the
# sanitizers), so it runs beside the others instead of holding one of ctest's two slots; its
# log follows theirs. It skips (exit 77) without root or Slurm.
slurm_log=$dir/slurm_integration.log
ctest --test-dir "$dir" --output-on-failure -R '^slurm_integration$' > "$slurm_log" 2>&1 &
slurm=$!
status=0
if [ ${#skip_labels[@]} -gt 0 ]; then
  echo "test.sh: left out here, run by the Release suite: $(ctest --test-dir "$dir" -N -L release-only |
    sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' ')"
fi
ctest --test-dir "$dir" --output-on-failure -j2 -E '^slurm_integration$' "${skip_labels[@]}" || status=$?
wait "$slurm" || status=1
cat "$slurm_log"
exit "$status"
