#!/usr/bin/env bash
# Download the pure-Python wheels that benchmarks/gpu_check.py needs on a GPU machine that has
# torch, transformers, accelerate and peft but cannot install packages (no network there).
# They land in build/gpu_wheels/ (ignored by git); carry that folder: gpu_check.py unpacks the
# wheels that match the running Python itself when passband does not import (no pip needed).
# passband itself needs math-verify (+ latex2sympy2_extended, antlr4) at import time; TRL needs
# trl + datasets (+ dill, multiprocess). Versions are the ones the CPU environment tests with;
# the GPU image runs Python 3.12, hence --python-version (multiprocess ships one wheel per Python).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build/gpu_wheels
mkdir -p "$dest"
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 -d "$dest" \
  math-verify==0.9.0 latex2sympy2_extended==1.11.0 antlr4-python3-runtime==4.13.2 \
  trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
# multiprocess ships one wheel per Python: also the one for this machine's Python, so
# `gpu_check.py --device cpu --tiny` can rehearse the carried set here (it unpacks the matching one)
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$dest" multiprocess==0.70.19
ls -la "$dest"
du -sh "$dest"
