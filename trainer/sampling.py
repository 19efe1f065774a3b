"""Which prompts each step trains on: the pass-rate curriculum, or uniform epochs without it.

Both samplers share the curriculum's interface (``sample`` / ``observe`` / ``state_dict`` /
``load_state_dict`` / ``metrics`` / ``estimates``), so the loop never asks which one it has.
"""

from __future__ import annotations

import random
from typing import Any, Iterable

__all__ = ["UniformSampler", "make_sampler"]


class UniformSampler:
    """Shuffled passes over the dataset (``use_curriculum = false``); the data position is state."""

    def __init__(self, prompt_ids: Iterable[Any], *, seed: int = 0):
        self._ids = list(prompt_ids)
        self._rng = random.Random(seed)
        self._order: list[int] = []
        self._pos = 0
        self._epoch = 0
        self._counts: dict[Any, list[int]] = {}
        self._groups = [0, 0]  # groups observed, of which not unanimous

    def sample(self, n: int, exclude: Iterable[Any] = ()) -> list:
        out = []
        for _ in range(n):
            if self._pos >= len(self._order):
                self._order = list(range(len(self._ids)))
                self._rng.shuffle(self._order)
                self._pos, self._epoch = 0, self._epoch + 1
            out.append(self._ids[self._order[self._pos]])
            self._pos += 1
        return out

    def observe(self, prompt_id: Any, successes: int, trials: int) -> None:
        s, t = self._counts.get(prompt_id, [0, 0])
        self._counts[prompt_id] = [s + int(successes), t + int(trials)]
        self._groups = [self._groups[0] + 1, self._groups[1] + int(0 < successes < trials)]

    def signal_chance(self, prompt_ids: Iterable[Any]) -> list[float]:
        """The share of groups observed so far that were not unanimous, for every prompt (no
        per-prompt posterior here: a uniform pass sees each prompt once an epoch); 1.0 before
        any group is observed, so nothing is oversampled on no evidence."""
        groups, signal = self._groups
        share = signal / groups if groups else 1.0
        return [share for _ in prompt_ids]

    def estimates(self) -> dict:
        """Empirical pass rate of every prompt seen so far."""
        return {pid: s / t for pid, (s, t) in self._counts.items() if t}

    def metrics(self) -> dict:
        return {"epoch": self._epoch, "position": self._pos}

    def state_dict(self) -> dict:
        version, internal, gauss = self._rng.getstate()
        return {"format": "uniform-1", "rng": [version, list(internal), gauss],
                "order": self._order, "pos": self._pos, "epoch": self._epoch,
                "counts": [[pid, c] for pid, c in self._counts.items()], "groups": self._groups}

    def load_state_dict(self, state: dict) -> None:
        version, internal, gauss = state["rng"]
        self._rng.setstate((version, tuple(internal), gauss))
        self._order, self._pos, self._epoch = list(state["order"]), state["pos"], state["epoch"]
        self._counts = {pid: list(c) for pid, c in state["counts"]}
        self._groups = list(state.get("groups", [0, 0]))  # older states lack it: start counting afresh


def make_sampler(prompt_ids: list, *, use_curriculum: bool, band, seed: int, group_size: int):
    """A ``Curriculum`` when asked for and importable, else ``UniformSampler``."""
    if use_curriculum:
        try:
            from passband.curriculum import Curriculum
        except ImportError as exc:  # keeps the trainer usable while the curriculum is missing
            import warnings

            warnings.warn(f"passband.curriculum is not available ({exc}); sampling uniformly")
        else:
            return Curriculum(prompt_ids, band=tuple(band), seed=seed, group_size_hint=group_size)
    return UniformSampler(prompt_ids, seed=seed)
