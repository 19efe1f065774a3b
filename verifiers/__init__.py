"""Programmatic reward functions: a registry, the ``Verdict`` type, built-in verifiers.

Import-light by design: no torch, no transformers. Built-in verifier modules register themselves
on import below.
"""

from passband.verifiers.registry import get, names, register
from passband.verifiers.verdict import Verdict
from passband.verifiers.batch import verify_batch
from passband.verifiers.format import exact_match, regex_format, tag_format  # registers "exact", "regex", "format"
from passband.verifiers.json_schema import extract_json, json_schema_verifier  # registers "json_schema"
from passband.verifiers.penalties import (
    PenaltyOutcome,
    answer_hedging,
    length_cap,
    length_normalized,
    ngram_repetition,
    overlong,
    repeated_paragraphs,
)
from passband.verifiers.reward import Reward
from passband.verifiers.adapters import as_trl_reward, as_verl_compute_score
from passband.verifiers.math_answer import MathConfig, math_verifier  # registers "math"

__all__ = ["Verdict", "get", "names", "register"]
__all__ += ["MathConfig", "math_verifier"]
__all__ += ["verify_batch", "exact_match", "regex_format", "tag_format"]
__all__ += ["extract_json", "json_schema_verifier"]
__all__ += ["PenaltyOutcome", "answer_hedging", "length_cap", "length_normalized", "ngram_repetition"]
__all__ += ["overlong", "repeated_paragraphs", "Reward", "as_trl_reward", "as_verl_compute_score"]
from passband.verifiers.code import code_verifier, extract_code  # registers "code"  # noqa: E402
__all__ += ["code_verifier", "extract_code"]
