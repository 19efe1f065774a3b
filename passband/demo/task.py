"""The demo task: procedurally generated integer arithmetic with graded difficulty, and its verifier.

A problem is a prompt such as ``47+8*3=`` whose completion must be exactly the integer value
(``71``). Difficulty grows with the number of digits, carries and borrows, the number of operands
and operator precedence. The demo trains on the first three levels, where a tiny model after a
short warm start is right on some problems and unsure on many; the later levels are for harder
variants (``DemoConfig(levels=...)``).

Generation is deterministic for a given seed, and the held-out split is disjoint from training by
prompt text, so held-out accuracy measures generalisation rather than recall. Pure Python: the
verifier runs in the verifier worker processes, which never import torch.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from passband.verifiers.registry import register
from passband.verifiers.verdict import Verdict

__all__ = [
    "LEVELS",
    "SPREAD_LEVELS",
    "VERIFIER_NAME",
    "Level",
    "arith_verifier",
    "make_problem",
    "make_splits",
]

VERIFIER_NAME = "demo_arith"


@dataclass(frozen=True)
class Level:
    """One difficulty level: an operand pattern and the operators it may use."""

    name: str
    digits: tuple[int, ...]  # digits of each operand, left to right
    ops: str  # operators drawn (independently) between operands


# Ordered roughly from easiest to hardest for a tiny model (carries and borrows make the later ones
# harder). A negative answer is just another answer: the verifier reads an optional leading minus.
LEVELS: tuple[Level, ...] = (
    Level("2d+1d", (2, 1), "+"),
    Level("2d-1d", (2, 1), "-"),
    Level("2d+2d", (2, 2), "+"),
    Level("2d-2d", (2, 2), "-"),
    Level("2d+1d*1d", (2, 1, 1), "+-*"),
    Level("2d+2d+2d", (2, 2, 2), "+-"),
    # A copy task ("4731=" -> 4731): solved after any warm start. The spread demo uses it as the
    # share of a real dataset the model already solves, where uniform sampling wastes its groups.
    Level("copy4d", (4,), ""),
)
# The demo's mix, cycled by ``make_splits``: 40% copy4d (solved after the warm start), 35%
# 2d+2d+2d (out of reach), 25% 2d+1d (in band), the spread real RL datasets have.
SPREAD_LEVELS: tuple[int, ...] = (6,) * 8 + (5,) * 7 + (0,) * 5


def _operand(rng: random.Random, digits: int) -> int:
    return rng.randint(10 ** (digits - 1) if digits > 1 else 0, 10**digits - 1)


def make_problem(rng: random.Random, level: int) -> dict:
    """One problem at ``level`` (0-based index into ``LEVELS``): ``{prompt, answer, level}``."""
    if not 0 <= level < len(LEVELS):
        raise ValueError(f"level must be in [0, {len(LEVELS) - 1}], got {level}")
    spec = LEVELS[level]
    parts = [str(_operand(rng, spec.digits[0]))]
    for digits in spec.digits[1:]:
        parts.append(rng.choice(spec.ops))
        parts.append(str(_operand(rng, digits)))
    expr = "".join(parts)
    # eval on a string built only from digits and + - * is safe and applies normal precedence.
    return {"prompt": expr + "=", "answer": str(eval(expr)), "level": level}


def make_splits(
    n_train: int, n_heldout: int, *, seed: int = 0, levels: tuple[int, ...] | None = None
) -> tuple[list[dict], list[dict]]:
    """Train and held-out problems, spread evenly over ``levels``, disjoint by prompt text.

    The held-out set is drawn first from its own stream so that changing ``n_train`` never changes
    the held-out problems (before/after numbers stay comparable across runs).
    """
    levels = tuple(range(len(LEVELS))) if levels is None else tuple(levels)
    if not levels:
        raise ValueError("levels must name at least one level")
    heldout = _draw(n_heldout, random.Random(f"heldout-{seed}"), levels, exclude=set())
    train = _draw(
        n_train, random.Random(f"train-{seed}"), levels, exclude={p["prompt"] for p in heldout}
    )
    return train, heldout


def _draw(n: int, rng: random.Random, levels: tuple[int, ...], exclude: set[str]) -> list[dict]:
    """``n`` distinct problems cycling through ``levels``; a level whose problems run out is skipped."""
    out: list[dict] = []
    seen = set(exclude)
    live = list(levels)
    turn = 0
    while len(out) < n:
        if not live:
            raise ValueError(
                f"cannot draw {n} distinct problems from levels {levels}; ask for fewer"
            )
        level = live[turn % len(live)]
        for _ in range(200):  # 200 straight repeats: this level is (nearly) exhausted
            problem = make_problem(rng, level)
            if problem["prompt"] not in seen:
                break
        else:
            live.remove(level)
            continue
        turn += 1
        seen.add(problem["prompt"])
        problem["id"] = str(len(out))
        out.append(problem)
    return out


_ANSWER = re.compile(r"\s*(-?\d+)")


class _ArithVerifier:
    """Exact integer check. A top-level class so that it pickles into verifier worker processes."""

    # A prefix regex and an int comparison: linear in the completion, so it cannot hang and
    # ``verify_batch`` may score it in the trainer's process (no worker pool to start, no pipe).
    inline_safe = True
    returns_verdict = True  # a Verdict for every answer: success_threshold decides nothing
    reference_fields = ("answer",)  # the trainer checks every row has it before training

    def __call__(self, completion: str, answer: str | int | None = None, **_: object) -> Verdict:
        if answer is None:
            return Verdict.error("reference has no 'answer'")
        match = _ANSWER.match(completion)
        if match is None:
            return Verdict.invalid("completion does not start with an integer")
        if completion[match.end() :].strip():
            return Verdict.wrong(f"text after the answer: {completion[match.end() :][:20]!r}")
        try:
            gold = int(str(answer).strip())
        except ValueError:
            return Verdict.error(f"reference answer {answer!r} is not an integer")
        got = int(match.group(1))
        return Verdict.ok() if got == gold else Verdict.wrong(f"expected {gold}, got {got}")

    def __repr__(self) -> str:
        return f"arith_verifier()  # registered as {VERIFIER_NAME!r}"


_VERIFIER = _ArithVerifier()
register(VERIFIER_NAME)(_VERIFIER)


def arith_verifier() -> _ArithVerifier:
    """The demo verifier (also registered as ``demo_arith`` when this module is imported)."""
    return _VERIFIER
