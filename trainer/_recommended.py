"""The ranges practitioners recommend for ``GRPOConfig`` fields, and the warnings outside them.

A value outside its range still works (``GRPOConfig`` raises only for values that cannot), but
produces a ``UserWarning`` that says what will go wrong. ``passband doctor`` reads the same table,
for a config object or for the plain mapping of a TOML file. Both names are part of
``passband.trainer.config``'s API and are imported from there.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["RECOMMENDED", "check_recommended"]

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
        1e-5,
        "above 1e-5 a pretrained model's weights drift fast: "
        "expect collapsed outputs, exploding KL or loss of prior skills "
        "(ignore for models trained from scratch: set pretrained = false)",
    ),
}


def check_recommended(config: Any, *, warn: bool = True, stacklevel: int = 2) -> list[str]:
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
    if warn:
        for m in messages:
            warnings.warn(m, UserWarning, stacklevel=stacklevel)
    return messages
