# Helpers the benchmark scripts source: their common set-up, reading /usr/bin/time -v reports,
# and medians.
# wall FILE: elapsed seconds; rss FILE: peak resident set in KiB; median: of numbers on stdin.
wall() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
                      for (i = 1; i <= n; ++i) s = s * 60 + p[i]; print s }' "$1"; }
rss() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench_setup SUBDIR [BUILD_DIR]: what every benchmark script starts with. Sets root, build
# (BUILD_DIR, default build/), runs (RUNS, 3), dir (DIR, /tmp/ckhost-bench: generated models,
# never the repository), threads (THREADS, "1 2"), ckhost, work ($dir/SUBDIR, for outputs) and
# timings (a temporary directory); both are removed when the script exits.
bench_setup() {
    root=$(cd "$(dirname "${BASH_SOURCE[1]}")/../.." && pwd)
    build=$(cd "${2:-$root/build}" && pwd)
    runs=${RUNS:-3}
    dir=${DIR:-/tmp/ckhost-bench}
    threads=${THREADS:-1 2}
    ckhost=$build/bin/ckhost
    case "$dir" in "$root"/*) echo "refusing to write models inside the repository" >&2; exit 2 ;; esac
    work=$dir/$1
    mkdir -p "$work"
    timings=$(mktemp -d)
    trap 'rm -rf "$timings" "$work"' EXIT
}
