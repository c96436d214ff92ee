#!/usr/bin/env bash
# ckhost batch on a real Slurm (issue 17): a one-node cluster started here (slurm_cluster.sh),
# examples/batch/slurm/submit.sh over a folder of models, some bad; then:
#   - every good output verifies, the bad jobs are reported failed with their errors;
#   - running it again converts nothing (every good job up to date), the same two fail;
#   - a shard cancelled with scancel mid-conversion leaves no partial file, and batch-report
#     lists its jobs as not run (exit 75) and writes them to --resubmit.
# Exit 77 (CTest: skipped) with the reason when the cluster cannot start here.
#
#   test_slurm.sh CKHOST EXAMPLES_DIR TEST_PLUGIN_DIR
set -euo pipefail
ckhost=$1 examples=$2 test_plugins=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/slurm_cluster.sh"

why=$(slurm_cluster_missing)
if [ -n "$why" ]; then
    echo "SKIPPED: cannot start a Slurm cluster: $why"
    exit 77
fi

tmp=$(mktemp -d /tmp/ckhost-slurm-test.XXXXXX)
cleanup() {
    slurm_cluster_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
started=$(date +%s.%N)
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
check() {  # check DESCRIPTION COMMAND...: the command must succeed
    local what=$1
    shift
    if "$@"; then echo "ok: $what"; else fail "$what"; fi
}
elapsed() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }
json() {  # json FILE EXPRESSION: a value of a JSON document, by Python expression on `d`
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

slurm_cluster_start "$tmp/cluster"
echo "cluster up ($(elapsed)): $(sinfo -h -o '%P %D %c %T')"

# Models: four good copies of the micro sample, a truncated copy and garbage.
sample=$examples/micro-llama-q4_k_m.gguf
mkdir -p "$tmp/models"
for name in alpha beta gamma delta; do cp "$sample" "$tmp/models/$name.gguf"; done
head -c 200000 "$sample" > "$tmp/models/truncated.gguf"
head -c 300000 /dev/urandom > "$tmp/models/garbage.gguf"
for model in "$tmp"/models/*.gguf; do
    name=$(basename "$model" .gguf)
    echo "gguf:headpack:bump $model $tmp/out/$name/"
done > "$tmp/jobs.txt"

export CKHOST=$ckhost
submit=$examples/batch/slurm/submit.sh
# 2 tasks of one CPU each; the tasks' own logs beside the reports.
run_submit() {  # run_submit JOBS REPORT_DIR: submit.sh's exit status in $status
    status=0
    SHARDS=2 CPUS=1 "$submit" "$1" "$2" --output="$tmp/slurm-%A_%a.out" -- --quiet \
        > "$2.txt" 2>&1 || status=$?
    cat "$2.txt"
    ckhost_json_report "$2" "$1"
}
ckhost_json_report() { "$ckhost" batch-report "$1" --jobs-file "$2" --json > "$1.json" || true; }

# 1. The first run: four conversions, two failures.
run_submit "$tmp/jobs.txt" "$tmp/reports"
check "first run: exit 1 (jobs failed)" [ "$status" = 1 ]
check "first run: both shards reported" [ -f "$tmp/reports/shard-0.json" -a -f "$tmp/reports/shard-1.json" ]
check "first run: 4 ok, 2 failed" [ "$(json "$tmp/reports.json" 'd["summary"]["ok"], d["summary"]["failed"], d["summary"]["not_run"]')" = "(4, 2, 0)" ]
check "first run: the failures name truncated.gguf and garbage.gguf" \
    [ "$(json "$tmp/reports.json" 'sorted(j["input"].rsplit("/", 1)[1] for j in d["jobs"] if j["status"] == "failed" and j["error"])')" = "['garbage.gguf', 'truncated.gguf']" ]
check "first run: both shards had work" [ "$(json "$tmp/reports.json" 'sorted(set(j["shard"] for j in d["jobs"]))')" = "[0, 1]" ]
for name in alpha beta gamma delta; do
    check "verify out/$name/weights.bump" "$ckhost" verify "$tmp/out/$name/weights.bump" --quiet
done
check "no output for the bad models" [ ! -e "$tmp/out/truncated" -a ! -e "$tmp/out/garbage" ]
check "todo.txt holds the two bad jobs" [ "$(grep -c . "$tmp/reports/todo.txt")" = 2 ]
stamp() { find "$tmp/out" -type f -printf '%p %T@\n' | sort; }
before=$(stamp)

# 2. Re-submission: every good job up to date, nothing converted again.
run_submit "$tmp/jobs.txt" "$tmp/reports"
check "rerun: exit 1 (the same two fail)" [ "$status" = 1 ]
check "rerun: 4 skipped, 0 ok, 2 failed" [ "$(json "$tmp/reports.json" 'd["summary"]["skipped"], d["summary"]["ok"], d["summary"]["failed"]')" = "(4, 0, 2)" ]
check "rerun: no output rewritten" [ "$before" = "$(stamp)" ]

# 3. A shard cancelled mid-run: slow jobs (testkit sleeps 150 ms per tensor: ~3 s per job).
for name in s1 s2 s3 s4; do
    echo "gguf:testkit[sleep_ms=150]:gguf $sample $tmp/slow/$name.gguf"
done > "$tmp/slow.txt"
mkdir -p "$tmp/slow-reports"
job=$(CKHOST=$ckhost sbatch --parsable --array=0-1 --cpus-per-task=1 --output="$tmp/slurm-%A_%a.out" \
    "$examples/batch/slurm/convert_array.sbatch" "$tmp/slow.txt" "$tmp/slow-reports" \
    --plugin-dir "$test_plugins" --quiet)
# Wait until shard 1 is writing (its temporary file exists), then cancel that task alone.
for i in $(seq 150); do
    ls -a "$tmp/slow" 2> /dev/null | grep -q '\.ckhost-' && break
    sleep 0.1
done
check "a conversion is mid-write before the cancel" bash -c "ls -a '$tmp/slow' | grep -q '\.ckhost-'"
scancel "${job}_1"
echo "cancelled ${job}_1 ($(elapsed))"
for i in $(seq 300); do
    [ -z "$(squeue -h -j "$job" 2> /dev/null)" ] && break
    sleep 0.1
done
status=0
"$ckhost" batch-report "$tmp/slow-reports" --jobs-file "$tmp/slow.txt" --resubmit "$tmp/slow-todo.txt" \
    > "$tmp/slow-report.txt" 2>&1 || status=$?
cat "$tmp/slow-report.txt"
"$ckhost" batch-report "$tmp/slow-reports" --jobs-file "$tmp/slow.txt" --json > "$tmp/slow.json" || true
check "after scancel: batch-report exits 75 (jobs not run, none failed)" [ "$status" = 75 ]
shard1=$(json "$tmp/slow.json" 'sorted(j["output"].rsplit("/", 1)[1] for j in d["jobs"] if j["shard"] in (1, None))')
notrun=$(json "$tmp/slow.json" 'sorted(j["output"].rsplit("/", 1)[1] for j in d["jobs"] if j["status"] == "not_run")')
check "after scancel: the cancelled shard's jobs are not run ($notrun)" [ "$notrun" = "$shard1" -a "$notrun" != "[]" ]
check "after scancel: the other shard's jobs are ok" [ "$(json "$tmp/slow.json" 'all(j["status"] == "ok" for j in d["jobs"] if j["shard"] == 0)')" = True ]
check "after scancel: no temporary or partial file left" bash -c "! ls -a '$tmp/slow' | grep -q '\.ckhost-'"
for name in s1 s2 s3 s4; do
    if json "$tmp/slow.json" "[j['status'] for j in d['jobs'] if j['output'].endswith('/$name.gguf')][0]" | grep -q ok; then
        check "$name.gguf (done) is complete" cmp -s "$sample" "$tmp/slow/$name.gguf"
    else
        check "$name.gguf (not run) does not exist" [ ! -e "$tmp/slow/$name.gguf" ]
    fi
done
check "slow-todo.txt lists exactly the jobs not run" [ "$(grep -c . "$tmp/slow-todo.txt")" = "$(json "$tmp/slow.json" 'd["summary"]["not_run"]')" ]

echo "$failures failures ($(elapsed))"
[ "$failures" = 0 ]
