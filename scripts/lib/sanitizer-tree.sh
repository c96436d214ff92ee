# Sourced by scripts/test.sh --sanitize and scripts/fuzz.sh: the one sanitizer tree both build,
# so CI compiles the instrumented code once (issue 27). Clang, because under ASan + UBSan it
# builds this code 2-3 times faster than GCC 12 and because libFuzzer is Clang's; the Release
# tree stays GCC, so both compilers' warnings stay errors.
sanitizer_dir=build-sanitize

configure_sanitizer_tree() {
  bash scripts/install-deps.sh --fuzz
  CC=clang CXX=clang++ cmake -S . -B "$sanitizer_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCKHOST_WERROR=ON -DCKHOST_FUZZ=ON "$@"
}
