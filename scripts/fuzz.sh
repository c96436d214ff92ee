#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (Clang, -fsanitize=fuzzer,address,undefined) in
# build-sanitize/ (the tree `scripts/test.sh --sanitize` builds too) and runs each for SECONDS
# (default 60), two at a time, with allocations bounded: an input claiming 2^40 elements must
# be refused, never allocated.
#   scripts/fuzz.sh [SECONDS]             every target
#   FUZZ_TARGETS="gguf bump" scripts/fuzz.sh 600
#   FUZZ_PARALLEL=1 scripts/fuzz.sh       one target at a time
# Per target it prints executions, coverage (cov: edges, ft: features) and the result; the
# corpus grows in build-sanitize/fuzz/corpus/<target>/ across runs, logs are in
# build-sanitize/fuzz/logs/, and an input that crashed, leaked or timed out is kept in
# build-sanitize/fuzz/findings/<target>/ (move it to tests/fuzz/regressions/<target>/ with the fix).
# Exit status 1 when any target found anything.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
all_targets=(gguf gguf_split bump gguflite gguflite_metadata safetensors sentencepiece pipeline
  stage_options batch_jobs hf_tokenizer model_card imatrix lora_adapter)
read -r -a targets <<< "${FUZZ_TARGETS:-${all_targets[*]}}"
parallel=${FUZZ_PARALLEL:-2}

source scripts/lib/sanitizer-tree.sh
configure_sanitizer_tree > /dev/null
cmake --build "$sanitizer_dir" --target fuzzers

work=$sanitizer_dir/fuzz
mkdir -p "$work/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local t=$1
  mkdir -p "$work/corpus/$t" "$work/findings/$t"
  # -rss_limit_mb / -malloc_limit_mb: the bounded-allocation rule; -timeout: one input may take
  # 10 s at most. The seeds directory is read, new inputs go to the corpus directory.
  local status=0
  nice "$sanitizer_dir/bin/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -timeout=10 -print_final_stats=1 -dict="tests/fuzz/dict/$t.dict" \
    -artifact_prefix="$work/findings/$t/" "$work/corpus/$t" "$work/seeds/$t" \
    > "$work/logs/$t.log" 2>&1 < /dev/null || status=$?
  echo "$status" > "$work/logs/$t.status"
}

echo "fuzzing ${#targets[@]} targets for ${seconds} s each, ${parallel} at a time"
for t in "${targets[@]}"; do
  [ -x "$sanitizer_dir/bin/fuzz_$t" ] || { echo "no target fuzz_$t" >&2; exit 2; }
  rm -f "$work/logs/$t.status"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_one "$t" &
done
wait || true

failed=0
found=0
printf '%-18s %12s %8s %8s %8s  %s\n' target executions exec/s cov ft result
for t in "${targets[@]}"; do
  log=$work/logs/$t.log
  status=$(cat "$work/logs/$t.status" 2>/dev/null || echo "?")
  # `|| true`: a target that died before its first line (a bad flag, a missing dictionary)
  # has no figures, and must still get its row rather than end the report under pipefail.
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  ft=$( (grep -o 'ft: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  result=ok
  if [ "$status" != 0 ]; then
    failed=1
    found=$((found + 1))
    kind=$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-z -]+|runtime error: [a-z -]+' "$log" || echo "exit $status")
    artifact=$(grep -m1 -oE 'Test unit written to [^ ]+' "$log" | sed 's/Test unit written to //' || true)
    result="FOUND: $kind${artifact:+ -> $artifact} (log: $log)"
  fi
  printf '%-18s %12s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
echo "fuzz: $((${#targets[@]} - found)) passed, $found failed"
exit $failed
