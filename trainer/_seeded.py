"""Seeded sampling: each row draws its tokens from its own seed, never from the global RNG.

A row's token at a position is drawn by inverse CDF from one counter-based uniform of (row seed,
position) (SplitMix64's finaliser as the hash), so a prompt's samples depend on its seed alone:
not on which rows share its batch, which rank draws it, or what ran before. ``_SeededSampling``
applies HF's own temperature / top-k / top-p warpers in HF's order, so the draw has exactly the
distribution of ``do_sample``. ``HFRollout`` (``rollout.py``) uses it through ``draw``; as a
``generate`` logits processor it leaves the drawn token as the only finite score.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["row_seed"]

_MASK64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    """SplitMix64's finaliser: a good 64-bit hash of a counter."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def row_seed(seed: int, sample: int) -> int:
    """The seed of sample ``sample`` of a prompt seeded ``seed``."""
    return _mix64((int(seed) & _MASK64) ^ _mix64(sample))


def _uniform(seed: int, position: int) -> float:
    """A uniform in (0, 1) that depends on (row seed, position) only: a counter-based RNG."""
    return ((_mix64(seed ^ _mix64(position + 0x5851F42D)) >> 11) + 0.5) / 2.0**53


def _uniforms(seeds: np.ndarray, position: int) -> np.ndarray:
    """``_uniform`` for many row seeds (uint64) at once, bit for bit: uint64 arithmetic wraps."""
    with np.errstate(over="ignore"):
        z = _mix64_array(
            seeds ^ _mix64_array(np.full(seeds.shape, position + 0x5851F42D, np.uint64))
        )
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53


def _mix64_array(z: np.ndarray) -> np.ndarray:
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class _SeededSampling:
    """A logits processor that samples each row from its own seed; ``generate`` then runs greedy.

    Temperature, top-k and top-p are HF's own warpers in HF's order; the token is drawn by
    inverse CDF from one uniform per (row, position) and returned as the only finite score.
    """

    def __init__(
        self, seeds: list[int], prompt_width: int, temperature: float, top_k: int, top_p: float
    ):
        from transformers import (
            LogitsProcessorList,
            TemperatureLogitsWarper,
            TopKLogitsWarper,
            TopPLogitsWarper,
        )

        self.seeds, self.width = seeds, prompt_width
        self._seed_array = np.array([int(x) & _MASK64 for x in seeds], dtype=np.uint64)
        warpers = [TemperatureLogitsWarper(temperature)]
        warpers += [TopKLogitsWarper(top_k)] if top_k > 0 else []
        warpers += [TopPLogitsWarper(top_p)] if top_p < 1 else []
        self.warpers = LogitsProcessorList(warpers)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """As a ``generate`` logits processor: the sampled token is the only finite score."""
        token = self.draw(scores, range(len(self.seeds)), input_ids.shape[1] - self.width)
        return torch.full_like(scores, -torch.inf).scatter_(1, token.unsqueeze(-1), 0.0)

    def draw(self, scores: torch.Tensor, rows, position: int) -> torch.Tensor:
        """The token of each of ``rows`` (indices into the seeds) at ``position``, from
        ``scores`` [a, V]: [a]."""
        probs = torch.softmax(self.warpers(None, scores).double(), dim=-1)  # [a, V]
        cdf = probs.cumsum(-1)  # [a, V]
        u = torch.from_numpy(_uniforms(self._seed_array[list(rows)], position)).to(cdf)  # [a]
        token = torch.searchsorted(cdf, (u * cdf[:, -1]).unsqueeze(-1))  # [a, 1]
        return token.clamp(max=scores.shape[-1] - 1).squeeze(-1)  # [a]
