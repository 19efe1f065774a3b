"""Programmatic reward functions: a registry, the ``Verdict`` type, built-in verifiers.

Import-light by design: no torch, no transformers. Built-in verifier modules register themselves
on import below.
"""

from passband.verifiers._from_trl import from_trl_reward, is_trl_reward
from passband.verifiers.adapters import as_trl_reward, as_verl_compute_score
from passband.verifiers.batch import verify_batch
from passband.verifiers.code import code_verifier, extract_code  # "code"

# Built-in verifiers register themselves on import.
from passband.verifiers.format import (
    exact_match,
    regex_format,
    tag_format,
)  # "exact", "regex", "format"
from passband.verifiers.json_schema import extract_json, json_schema_verifier  # "json_schema"
from passband.verifiers.math_answer import MathConfig, math_verifier  # "math"
from passband.verifiers.penalties import (
    PenaltyOutcome,
    answer_hedging,
    get_penalty,
    length_cap,
    length_normalized,
    ngram_repetition,
    overlong,
    penalty_names,
    register_penalty,
    repeated_paragraphs,
)
from passband.verifiers.registry import get, names, register
from passband.verifiers.reward import Reward
from passband.verifiers.verdict import Verdict

__all__ = [
    # core
    "Verdict",
    "get",
    "names",
    "register",
    "verify_batch",
    # built-in verifiers and their factories
    "exact_match",
    "regex_format",
    "tag_format",
    "extract_json",
    "json_schema_verifier",
    "MathConfig",
    "math_verifier",
    "code_verifier",
    "extract_code",
    # shaping and composition
    "PenaltyOutcome",
    "answer_hedging",
    "length_cap",
    "length_normalized",
    "ngram_repetition",
    "overlong",
    "repeated_paragraphs",
    "Reward",
    "register_penalty",
    "get_penalty",
    "penalty_names",
    # adapters for other trainers
    "as_trl_reward",
    "from_trl_reward",
    "is_trl_reward",
    "as_verl_compute_score",
]
