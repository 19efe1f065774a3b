"""The one result type every verifier returns.

"Wrong" is not "could not check": ``status`` keeps them apart so the trainer can mask errors and
timeouts instead of training on them as zeros.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

STATUSES = ("ok", "wrong", "invalid", "error", "timeout")


# the components of a verdict that has none, shared: a batch of plain verdicts allocated two
# dicts and a proxy each, which the garbage collector then had to walk
_NO_COMPONENTS: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True)
class Verdict:
    """Result of checking one completion.

    score: 0..1 for verifiers (1 = correct); a composed ``Reward`` may go outside that range.
    status: ``ok`` checked and correct, ``wrong`` checked and incorrect, ``invalid`` nothing
        checkable in the completion, ``error`` the verifier (or its reference data) failed,
        ``timeout`` the check ran past its time limit.
    detail: a short human-readable reason.
    components: for composed rewards, every named term that went into ``score``.
    """

    score: float
    status: str
    detail: str = ""
    components: Mapping[str, float] = field(default_factory=lambda: _NO_COMPONENTS, compare=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"Verdict status must be one of {STATUSES}, got {self.status!r}")
        score = float(self.score)
        if not math.isfinite(score):  # an infinite score would swamp every other term of a Reward
            raise ValueError(f"Verdict score must be finite, got {score}")
        object.__setattr__(self, "score", score)
        if not isinstance(self.components, MappingProxyType):
            copied = dict(self.components)
            object.__setattr__(
                self, "components", MappingProxyType(copied) if copied else _NO_COMPONENTS
            )

    def __reduce__(self):  # MappingProxyType does not pickle; rebuild from a plain dict
        return (Verdict, (self.score, self.status, self.detail, dict(self.components)))

    @property
    def passed(self) -> bool:
        return self.status == "ok"

    @property
    def checkable(self) -> bool:
        """False for ``error`` and ``timeout``: the trainer masks these out."""
        return self.status not in ("error", "timeout")

    # Short constructors keep verifier code readable.
    @classmethod
    def ok(cls, detail: str = "", score: float = 1.0) -> Verdict:
        return cls(score, "ok", detail)

    @classmethod
    def wrong(cls, detail: str = "", score: float = 0.0) -> Verdict:
        return cls(score, "wrong", detail)

    @classmethod
    def invalid(cls, detail: str = "") -> Verdict:
        return cls(0.0, "invalid", detail)

    @classmethod
    def error(cls, detail: str = "") -> Verdict:
        return cls(0.0, "error", detail)

    @classmethod
    def timeout(cls, detail: str = "") -> Verdict:
        return cls(0.0, "timeout", detail)
