#!/usr/bin/env bash
# Print the path of a Python >= 3.12 with the venv module (for the PyPI wheel of DOLFINx 0.11),
# or nothing. Looks at python3/python3.13/python3.12 on PATH first, then at pyenv's versions.
ok() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }
for c in python3 python3.14 python3.13 python3.12; do
    p=$(command -v "$c" 2>/dev/null) || continue
    if ok "$p"; then
        # a pyenv shim resolves to whichever version is active: name the real interpreter
        "$p" -c 'import sys; print(sys.executable)'
        exit 0
    fi
done
if command -v pyenv >/dev/null 2>&1; then
    root=$(pyenv root)
    for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.[0-9]+\.[0-9]+$' | sort -rV); do
        p=$root/versions/$v/bin/python3
        if [ -x "$p" ] && ok "$p"; then
            echo "$p"
            exit 0
        fi
    done
fi
exit 0
