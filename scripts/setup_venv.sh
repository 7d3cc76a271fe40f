#!/usr/bin/env bash
# Creates .venv (Python 3.11) and installs the pinned requirements. Idempotent: does nothing when
# .venv already satisfies them (tracked by a stamp holding the files' hash).
#   setup_venv.sh VENV [REQUIREMENTS...]   (default: requirements.txt)
# Several files are installed together, so that pip resolves them as one set; the stamp is named
# after the last one (.venv/.requirements.sha256, .venv/.requirements-bench.sha256, ...).
set -euo pipefail
venv=${1:-.venv}
shift || true
[ $# -gt 0 ] || set -- requirements.txt
last=${!#}
stamp="$venv/.$(basename "$last" .txt).sha256"
want=$(cat "$@" | sha256sum | cut -d' ' -f1)

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
args=()
for requirements in "$@"; do args+=(-r "$requirements"); done
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${args[@]}"
echo "$want" > "$stamp"
