#!/usr/bin/env bash
# Second command of the README: the whole test suite (warnings are errors).
#   scripts/test.sh             Release build in build/, then ctest
#   scripts/test.sh --sanitize  the same under AddressSanitizer + UBSan, in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

dir=build
flags=(-DCMAKE_BUILD_TYPE=Release -DCKHOST_WERROR=ON)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCKHOST_WERROR=ON -DCKHOST_SANITIZE=ON -DCKHOST_BUILD_BENCH=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

cmake -S . -B "$dir" -G Ninja "${flags[@]}"
cmake --build "$dir"
ctest --test-dir "$dir" --output-on-failure -j2
