#!/usr/bin/env python3
"""No function in sdk/, host/ or plugins/ longer than 80 lines (issue 27). Lists every function
with Universal Ctags (its end line) and fails, naming each, when one is longer than the limit
and not in tests/function_length_allowlist.txt, the functions written before the rule that
still wait to be split. An allowlisted function that got short must leave the list (the check
fails on a stale entry too), so the list only shrinks.

    tests/check_function_length.py [REPO_ROOT]"""
import os
import subprocess
import sys

LIMIT = 80


def long_functions(root):
    files = []
    for top in ('sdk', 'host', 'plugins'):
        for folder, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.relpath(os.path.join(folder, n), root)
                      for n in names if n.endswith(('.cpp', '.hpp'))]
    out = subprocess.run(['ctags', '-x', '--_xformat=%{end} %n %N %F', '--kinds-C++=f',
                          '--fields=+ne', '-L', '-'], input='\n'.join(sorted(files)),
                         capture_output=True, text=True, cwd=root, check=True).stdout
    found = {}
    for line in out.splitlines():
        end, start, name, path = line.split(maxsplit=3)
        length = int(end) - int(start) + 1
        if length > LIMIT:
            found[f'{path} {name}'] = length
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), '..'))
    with open(os.path.join(root, 'tests', 'function_length_allowlist.txt')) as text:
        allowed = {l.strip() for l in text if l.strip() and not l.startswith('#')}
    found = long_functions(root)
    status = 0
    for key, length in sorted(found.items()):
        if key not in allowed:
            print(f'{key}: {length} lines (at most {LIMIT}): split it', file=sys.stderr)
            status = 1
    for key in sorted(allowed - found.keys()):
        print(f'{key}: no longer over {LIMIT} lines: remove it from '
              'tests/function_length_allowlist.txt', file=sys.stderr)
        status = 1
    print(f'{len(found)} functions over {LIMIT} lines, {len(allowed)} allowlisted')
    return status


if __name__ == '__main__':
    sys.exit(main())
