#!/usr/bin/env bash
# Create .venv and install passband with what the demo and the tests need.
# Idempotent: a stamp keyed on pyproject.toml skips the work when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv
STAMP=$VENV/.passband-stamp
want=$(sha256sum pyproject.toml scripts/bootstrap.sh | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then exit 0; fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
# CPU machines: install the CPU torch wheel first, so nothing later resolves a CUDA build.
if ! command -v nvidia-smi >/dev/null 2>&1; then
  "${pip[@]}" "torch==2.13.0"
fi
"${pip[@]}" -e ".[dev]"
echo "$want" > "$STAMP"
