"""Pin the trainer's public names (users and the other packages import these)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import passband.trainer as trainer


def test_exported_names():
    """``__all__`` is exactly the lazily loaded table, and each name is the object its module defines."""
    assert sorted(trainer.__all__) == sorted(trainer._WHERE) == dir(trainer)
    assert len(set(trainer.__all__)) == len(trainer.__all__)
    for name in trainer.__all__:
        module = importlib.import_module(f"passband.trainer.{trainer._WHERE[name]}")
        assert getattr(trainer, name) is getattr(module, name)
        assert name in module.__all__, (
            f"passband.trainer.{trainer._WHERE[name]}.__all__ lacks {name}"
        )


def test_vllm_names_do_not_import_vllm():
    """``VLLMRollout`` resolves without starting or importing vllm; only building one does."""
    code = (
        "import sys, passband.trainer as t; t.VLLMRollout; t.tis_weights; "
        "t.LoraSettings; t.apply_lora; "
        "assert 'vllm' not in sys.modules, 'vllm was imported'; "
        "assert 'peft' not in sys.modules, 'peft was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_config_and_package_import_without_torch():
    code = (
        "import sys, passband.trainer, passband.trainer.config, passband.config; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
