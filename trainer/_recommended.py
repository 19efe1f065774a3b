"""The ranges practitioners recommend for ``GRPOConfig`` fields, and the warnings outside them.

A value outside its range still works (``GRPOConfig`` raises only for values that cannot), but
produces a ``UserWarning`` that says what will go wrong. ``passband doctor`` reads the same table,
for a config object or for the plain mapping of a TOML file. Both names are part of
``passband.trainer.config``'s API and are imported from there.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from typing import Any

__all__ = [
    "RECOMMENDED",
    "check_recommended",
    "LEARNING_RATE_BY_SIZE",
    "SMALL_MODEL_PARAMS",
    "LARGE_MODEL_PARAMS",
    "learning_rate_range",
    "check_learning_rate",
    "count_text",
]

# The learning rates GRPO recipes use for a pretrained model, by size: smaller models tolerate
# (and, in a short run, need) larger steps. At most SMALL_MODEL_PARAMS is small, from
# LARGE_MODEL_PARAMS on large, medium between (the 1B-8B recipes). ``GRPOConfig`` cannot know
# the size, so it warns only above the small range's top; the trainer checks the real size once
# the model is loaded (``check_learning_rate``), and ``passband doctor`` uses the same ranges.
SMALL_MODEL_PARAMS = 0.5e9
LARGE_MODEL_PARAMS = 30e9
LEARNING_RATE_BY_SIZE: dict[str, tuple[float, float]] = {
    "small": (1e-6, 2e-5),
    "medium": (1e-6, 5e-6),
    "large": (5e-7, 1e-6),
}
_LR_RISK = (
    "expect collapsed outputs, exploding KL or loss of prior skills "
    "(ignore for models trained from scratch: set pretrained = false)"
)

# field -> (low, high, what goes wrong outside). ``None`` = unbounded on that side.
RECOMMENDED: dict[str, tuple[float | None, float | None, str]] = {
    "group_size": (
        4,
        None,
        "with fewer than 4 samples per prompt most groups have zero reward "
        "variance and the group mean/std are too noisy to rank answers",
    ),
    "beta": (
        None,
        0.01,
        "a KL weight above 0.01 pins the policy to the reference and "
        "largely cancels the reward signal on reasoning tasks",
    ),
    "temperature": (
        0.3,
        None,
        "below 0.3 the G samples of a group are nearly identical, so "
        "almost every group has zero variance and is dropped",
    ),
    "clip_low": (
        None,
        0.3,
        "a clip range above 0.3 lets single updates move token "
        "probabilities far off-policy; training tends to become unstable",
    ),
    "clip_high": (
        None,
        0.3,
        "a clip range above 0.3 lets single updates move token "
        "probabilities far off-policy; training tends to become unstable",
    ),
    "learning_rate": (
        None,
        LEARNING_RATE_BY_SIZE["small"][1],
        "above 2e-5 even a small pretrained model's weights drift fast: " + _LR_RISK,
    ),
}


def check_recommended(
    config: Any, *, warn: bool = True, stacklevel: int | None = None
) -> list[str]:
    """Messages for values outside ``RECOMMENDED``; also emitted as warnings when ``warn``.

    Accepts a ``GRPOConfig`` or a plain mapping of field names (``passband doctor`` uses both).
    """
    get = config.get if isinstance(config, dict) else lambda k, d=None: getattr(config, k, d)
    messages = []
    for name, (low, high, risk) in RECOMMENDED.items():
        value = get(name)
        if value is None or (name == "learning_rate" and not get("pretrained", True)):
            continue
        if (low is not None and value < low) or (high is not None and value > high):
            rng = (
                f">= {low}" if high is None else (f"<= {high}" if low is None else f"{low}..{high}")
            )
            messages.append(f"{name} = {value} is outside the recommended range ({rng}): {risk}")
    messages += _truncated_sampler(get)
    if warn:
        level = stacklevel if stacklevel is not None else user_stacklevel()
        for m in messages:
            warnings.warn(m, UserWarning, stacklevel=level)
    return messages


def _truncated_sampler(get) -> list[str]:
    """vLLM reports the log-probs of the distribution it sampled, after ``top_p`` / ``top_k``;
    the trainer's are of the whole distribution, so every importance weight sits below 1 (a
    review measured a mean of 0.89 at ``top_p = 0.8`` with the weights in sync)."""
    top_p, top_k = get("top_p", 1.0), get("top_k", 0)
    if get("rollout_backend") != "vllm" or not get("tis_cap", 0) or (top_p >= 1 and not top_k):
        return []
    cut = f"top_p = {top_p}" if top_p < 1 else f"top_k = {top_k}"
    return [
        f"rollout_backend = 'vllm' with {cut}: vLLM's log-probs are those of the truncated "
        "distribution it sampled and the trainer's those of the whole one, so the importance "
        "weights (tis_cap) sit below 1 and rollout/logp_diff_mean measures the truncation, not "
        "a sync fault. Keep top_p = 1 and top_k = 0 for on-policy sampling, or set tis_cap = 0"
    ]


def user_stacklevel() -> int:
    """The ``stacklevel`` (for a ``warnings.warn`` in the calling function) of the first frame
    outside passband and the dataclass machinery: the user's line, however the call got there
    (``GRPOConfig(...)``, ``from_dict``, ``replace``)."""
    roots = _package_roots()
    frame, level = sys._getframe(1), 1
    while frame is not None:
        name = frame.f_code.co_filename
        generated = name == "<string>" and frame.f_code.co_name == "__init__"  # a dataclass's
        if not (name.startswith(roots) or generated or name == dataclasses.__file__):
            return level
        frame, level = frame.f_back, level + 1
    return level


def _package_roots() -> tuple[str, ...]:
    """The folders of passband's packages (siblings in a checkout, nested once installed). The
    top package is looked up, not imported: it sits on a higher floor than the trainer."""
    names = ("passband", "passband.curriculum", "passband.trainer", "passband.verifiers")
    files = [getattr(sys.modules.get(n), "__file__", None) for n in names]
    return tuple(os.path.dirname(f) + os.sep for f in files if f)


def count_text(params: float) -> str:
    """430k, 135M, 1.5B, 72B: the way model cards name sizes."""
    if params < 1e6:
        return f"{params / 1e3:.0f}k"
    return f"{params / 1e6:.0f}M" if params < 1e9 else f"{params / 1e9:.3g}B"


def learning_rate_range(params: float | None) -> tuple[float, float, str]:
    """``(low, high, for whom)``: the learning rates GRPO recipes use for a pretrained model of
    ``params`` parameters; ``None`` (unknown) gives the medium (1B-8B) range and says so."""
    if params is None:
        low, high = LEARNING_RATE_BY_SIZE["medium"]
        return low, high, "for a 1B-8B model (parameter count unknown: pass --params)"
    if params <= SMALL_MODEL_PARAMS:
        size = "small"
    elif params < LARGE_MODEL_PARAMS:
        size = "medium"
    else:
        size = "large"
    low, high = LEARNING_RATE_BY_SIZE[size]
    return low, high, f"for a {count_text(params)}-parameter model"


def check_learning_rate(
    learning_rate: float, params: float, *, warn: bool = True, stacklevel: int = 2
) -> str | None:
    """The trainer's start-up check, once the model's size is known: a message (and a warning)
    when a pretrained model's ``learning_rate`` is above the range for ``params`` parameters.
    Above the small range's top ``GRPOConfig`` has warned already, so nothing is said twice."""
    low, high, whom = learning_rate_range(params)
    if learning_rate <= high or learning_rate > LEARNING_RATE_BY_SIZE["small"][1]:
        return None
    message = (
        f"learning_rate = {learning_rate:g} is above the range GRPO recipes use {whom} "
        f"({low:g}..{high:g}): {_LR_RISK}"
    )
    if warn:
        warnings.warn(message, UserWarning, stacklevel=stacklevel)
    return message
