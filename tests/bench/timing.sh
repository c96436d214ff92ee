# Helpers the benchmark scripts source: reading /usr/bin/time -v reports, and medians.
# wall FILE: elapsed seconds; rss FILE: peak resident set in KiB; median: of numbers on stdin.
wall() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
                      for (i = 1; i <= n; ++i) s = s * 60 + p[i]; print s }' "$1"; }
rss() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
