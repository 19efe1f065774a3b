"""The embedded demo: a procedurally generated task, a tiny model and a character tokenizer.

Importing this package is cheap (torch and transformers load inside the functions) and registers
the demo verifier as ``demo_arith``. ``run_demo(DemoConfig())`` is what ``passband demo`` runs.
"""

from passband.demo.evaluate import greedy_accuracy, greedy_answers
from passband.demo.model import ModelSize, build_model
from passband.demo.pipeline import DemoConfig, DemoResult, grpo_config, prepare, run_demo
from passband.demo.sft import SFTConfig, warm_start
from passband.demo.task import (
    LEVELS,
    VERIFIER_NAME,
    Level,
    arith_verifier,
    make_problem,
    make_splits,
)
from passband.demo.tokenizer import CHARS, build_tokenizer

__all__ = [
    "CHARS",
    "LEVELS",
    "VERIFIER_NAME",
    "DemoConfig",
    "DemoResult",
    "Level",
    "ModelSize",
    "SFTConfig",
    "arith_verifier",
    "build_model",
    "build_tokenizer",
    "greedy_accuracy",
    "greedy_answers",
    "grpo_config",
    "make_problem",
    "make_splits",
    "prepare",
    "run_demo",
    "warm_start",
]
