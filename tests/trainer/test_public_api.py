"""Pin the trainer's public names (users and the other packages import these)."""

from __future__ import annotations

import subprocess
import sys

import passband.trainer as trainer


def test_exported_names():
    assert sorted(trainer.__all__) == sorted([
        "GRPOConfig", "GRPOTrainer", "HFRollout", "FakeRollout", "Rollout", "RolloutBackend",
        "StalePolicyError",
        "load_model_and_tokenizer", "RECOMMENDED", "VLLMRollout", "tis_weights", "LoraSettings",
        "apply_lora"])
    for name in trainer.__all__:
        assert getattr(trainer, name) is not None


def test_vllm_names_do_not_import_vllm():
    """``VLLMRollout`` resolves without starting or importing vllm; only building one does."""
    code = ("import sys, passband.trainer as t; t.VLLMRollout; t.tis_weights; "
            "t.LoraSettings; t.apply_lora; "
            "assert 'vllm' not in sys.modules, 'vllm was imported'; "
            "assert 'peft' not in sys.modules, 'peft was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_config_and_package_import_without_torch():
    code = ("import sys, passband.trainer, passband.trainer.config, passband.config; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
