#!/usr/bin/env bash
# Plugins share code through targets (ckhost::support, ckhost::conventions, ckhost::llama, the
# SDK), never through another plugin's folder. Fails, naming the file and line, when a file
# under plugins/X/ includes a file that lives under plugins/Y/, or a plugin's CMakeLists.txt
# points into another plugin's folder.
#   tests/check_plugin_boundaries.sh [REPO_ROOT]
set -euo pipefail
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cd "$root/plugins"
status=0
checked=0
for dir in */; do
    plugin=${dir%/}
    while IFS= read -r -d '' file; do
        checked=$((checked + 1))
        while IFS=: read -r line include; do
            [ -n "$include" ] || continue
            # Found beside the including file: its own plugin's header.
            [ -e "$(dirname "$file")/$include" ] && case "$(cd "$(dirname "$file")/$(dirname "$include")" && pwd)" in
                "$root/plugins/$plugin"*) continue ;;
            esac
            for other in */; do
                other=${other%/}
                [ "$other" = "$plugin" ] && continue
                if [ -e "$other/$include" ] || [ -e "$(dirname "$file")/$include" ]; then
                    echo "plugins/$file:$line: includes \"$include\" from plugins/$other/" >&2
                    status=1
                fi
            done
        done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
                 sed -E 's/^([0-9]+):.*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1:\2/')
    done < <(find "$plugin" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.inc' \) -print0)
    if grep -nE '(CMAKE_(CURRENT_)?SOURCE_DIR\}/plugins|\.\./)' "$plugin/CMakeLists.txt" >&2; then
        echo "plugins/$plugin/CMakeLists.txt: points into another plugin's folder (link a target instead)" >&2
        status=1
    fi
done
echo "checked $checked files in $(ls -d */ | wc -l) plugin folders"
exit $status
