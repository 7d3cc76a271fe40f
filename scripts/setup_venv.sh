#!/usr/bin/env bash
# Creates .venv (Python 3.11) and installs the pinned requirements. Idempotent: does nothing when
# .venv already satisfies requirements.txt (tracked by a stamp holding the file's hash).
set -euo pipefail
venv=${1:-.venv}
requirements=${2:-requirements.txt}
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$requirements" | cut -d' ' -f1)

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

python=${PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      python=$candidate
      break
    fi
  done
fi
if [ -z "$python" ]; then
  echo "error: Python 3.11 is required (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
echo "Installing pinned Python requirements into $venv (first run takes a few minutes)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
echo "$want" > "$stamp"
