#!/usr/bin/env bash
# Converts a jobs list on a Slurm cluster: submits convert_array.sbatch as a job array of
# SHARDS tasks, waits for all of them (sbatch --wait), merges their reports with
# `ckhost batch-report`, and writes the jobs still to do to REPORT_DIR/todo.txt.
#
#   submit.sh JOBS REPORT_DIR [sbatch options...] [-- ckhost batch options...]
#   SHARDS=16 CPUS=4 submit.sh jobs.txt reports/ --time=2:00:00 --mem=8G
#
# SHARDS (default 4): array tasks; CPUS (default 4): --cpus-per-task, the conversions each task
# runs at once. $CKHOST: the ckhost to run (default: ckhost on PATH); compute nodes must see it,
# the jobs list, the inputs and REPORT_DIR at the same paths.
# Exit status: batch-report's: 0 every job done, 1 some job failed, 75 some job never ran
# (a task died: run submit.sh again on todo.txt, or again on JOBS: what is done is skipped).
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
jobs_file=$(realpath "$1") report_dir=$2
shift 2
sbatch_options=() batch_options=()
while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then
        shift
        batch_options=("$@")
        break
    fi
    sbatch_options+=("$1")
    shift
done
shards=${SHARDS:-4}
cpus=${CPUS:-4}
ckhost=${CKHOST:-ckhost}
export CKHOST=$ckhost

mkdir -p "$report_dir"
report_dir=$(realpath "$report_dir")
# Reports of an earlier run would be merged with this one's.
rm -f "$report_dir"/shard-*.json

# --wait: sbatch returns when every task has ended; its status is non-zero when one failed,
# which batch-report explains, so it is not fatal here.
sbatch --wait --parsable --array="0-$((shards - 1))" --cpus-per-task="$cpus" \
    "${sbatch_options[@]}" "$(dirname "$(realpath "$0")")/convert_array.sbatch" \
    "$jobs_file" "$report_dir" "${batch_options[@]}" || true

status=0
"$ckhost" batch-report "$report_dir" --jobs-file "$jobs_file" \
    --resubmit "$report_dir/todo.txt" || status=$?
exit $status
