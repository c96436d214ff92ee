#!/usr/bin/env bash
# Converts every *.gguf in a folder with one pipeline, through `ckhost batch`.
#
#   convert_folder.sh PIPELINE INPUT_DIR OUTPUT_DIR [ckhost batch options...]
#   convert_folder.sh gguf:headpack:bump models/ converted/ --jobs 2
#
# Each model gets its own directory, OUTPUT_DIR/<name>/, and the pipeline's writer names the
# files inside it (weights.bump + config.json, <name>.gguflite, ...). Run it again after a
# failure or an interruption: models whose outputs are up to date (their recipe record matches) are skipped.
# Uses $CKHOST when set, else `ckhost` on PATH, else this repository's build/bin/ckhost.
# Exit status: ckhost batch's (0 all done, 1 some job failed, 2 usage, 130 interrupted).
set -euo pipefail

if [ $# -lt 3 ]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
pipeline=$1 input_dir=$2 output_dir=$3
shift 3

ckhost=${CKHOST:-}
if [ -z "$ckhost" ]; then
    if command -v ckhost > /dev/null; then
        ckhost=ckhost
    else
        ckhost=$(dirname "$0")/../../build/bin/ckhost
    fi
fi

# A JSON string: the jobs go to ckhost as JSON so that any file name survives.
json_string() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/\\t}
    s=${s//$'\n'/\\n}
    printf '"%s"' "$s"
}

jobs_file=$(mktemp "${TMPDIR:-/tmp}/ckhost-jobs.XXXXXX.json")
trap 'rm -f "$jobs_file"' EXIT

count=0
{
    printf '[\n'
    while IFS= read -r -d '' model; do
        name=$(basename "$model" .gguf)
        [ $count -gt 0 ] && printf ',\n'
        printf '{"pipeline": %s, "input": %s, "output": %s}' "$(json_string "$pipeline")" \
            "$(json_string "$model")" "$(json_string "$output_dir/$name/")"
        count=$((count + 1))
    done < <(find "$input_dir" -maxdepth 1 -type f -name '*.gguf' -print0 | sort -z)
    printf '\n]\n'
} > "$jobs_file"

if [ $count -eq 0 ]; then
    echo "convert_folder.sh: no *.gguf files in $input_dir" >&2
    exit 1
fi
echo "converting $count models with $pipeline into $output_dir/" >&2
status=0
# On standard input: the list's relative paths (as the user gave the folders) then lead from
# the current directory, not from the temporary file's folder.
"$ckhost" batch - "$@" < "$jobs_file" || status=$?
exit $status
