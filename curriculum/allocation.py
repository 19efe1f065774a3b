"""Adaptive group size: split a fixed rollout budget over the drawn prompts by their posteriors.

With a fixed G every prompt gets the same number of answers, though a group of a prompt the policy
almost always solves (or never does) is nearly certain to be unanimous and teaches nothing, while
a prompt at the edge of the band needs more answers before one of them differs. ``allocate``
maximises the expected number of groups with signal,

    sum_i P_i(signal | g_i),   P(signal | g) = 1 - E[p^g] - E[(1 - p)^g]   (p ~ Beta(a_i, b_i)),

subject to ``sum_i g_i = budget`` and ``g_i >= floor``: every prompt starts at the floor, then
each extra answer goes to the prompt whose chance of a mixed group it raises most (greedy on
marginal gains, optimal here because the gain of one more answer shrinks as g grows). Below the
floor (default 4) the group mean and std that the advantages use are noise, so it never goes
there. Off by default (``CurriculumConfig.adaptive_group_size``) until a benchmark shows it wins.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

__all__ = ["allocate", "signal_chance"]


def signal_chance(a: float, b: float, g: int) -> float:
    """P(a group of ``g`` answers disagrees) for a pass rate ~ Beta(a, b) (closed form)."""
    right = wrong = 1.0
    for k in range(g):
        right *= (a + k) / (a + b + k)
        wrong *= (b + k) / (a + b + k)
    return 1.0 - right - wrong


def allocate(
    posteriors: Sequence[tuple[float, float]],
    budget: int,
    *,
    floor: int = 4,
    cap: int | None = None,
    multiple: int = 1,
) -> list[int]:
    """Group sizes (one per posterior ``(a, b)``) summing to ``budget``, each >= ``floor`` and
    <= ``cap``; sizes move in steps of ``multiple`` (e.g. 2, to keep generate batches even).
    Raises when the budget cannot give every prompt the floor."""
    n = len(posteriors)
    if n == 0:
        return []
    if floor < 2 or multiple < 1:
        raise ValueError(f"floor={floor} must be >= 2 and multiple={multiple} >= 1")
    if budget < n * floor:
        raise ValueError(f"budget={budget} rollouts cannot give {n} prompts the floor of {floor}")
    cap = budget if cap is None else max(cap, floor)
    sizes = [floor] * n
    left = budget - n * floor
    gains = [(-_gain(a, b, floor, multiple), i) for i, (a, b) in enumerate(posteriors)]
    heapq.heapify(gains)
    while left >= multiple and gains:
        _, i = heapq.heappop(gains)
        if sizes[i] + multiple > cap:
            continue
        sizes[i] += multiple
        left -= multiple
        a, b = posteriors[i]
        heapq.heappush(gains, (-_gain(a, b, sizes[i], multiple), i))
    i = 0
    while left > 0:  # what no step of ``multiple`` could place: one by one, round-robin
        if sizes[i % n] < cap:
            sizes[i % n] += 1
            left -= 1
        i += 1
    return sizes


def _gain(a: float, b: float, g: int, step: int) -> float:
    """Rise in P(signal) from ``step`` more answers; ties go to the lower index (heap order)."""
    return signal_chance(a, b, g + step) - signal_chance(a, b, g)
