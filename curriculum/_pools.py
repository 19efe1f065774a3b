"""Constant-time pool bookkeeping for the curriculum, so a draw never scans the whole dataset.

``IndexSet``: the members of one pool as a list plus each member's position, for O(1) add,
remove and uniform random picks. ``DueQueue``: a heap of (due clock, prompt) with lazy deletion
that moves prompts into a ``due`` set once their re-test is due, a few draws' worth at a time.
Both are plain arrays in ``state_dict()`` (``curriculum.state``): the sets in their exact order,
the heap's entries sorted (a heap pops them in one order whatever its list's), so a resumed run
draws the same.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

# the pool codes of the curriculum's per-prompt pool array: positions in ``posterior.POOLS``
FRESH, ACTIVE, WARMUP, EASY = range(4)


class IndexSet:
    """A set of prompt indices in ``range(capacity)`` with O(1) add / remove / random access."""

    def __init__(self, capacity: int, members=()) -> None:
        self.members: list[int] = [int(i) for i in members]
        self._where = np.full(capacity, -1, dtype=np.int64)
        if self.members:
            self._where[np.asarray(self.members, dtype=np.int64)] = np.arange(len(self.members))

    @classmethod
    def full(cls, capacity: int) -> IndexSet:
        out = cls(capacity)
        out.members = list(range(capacity))
        out._where = np.arange(capacity, dtype=np.int64)
        return out

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, i: int) -> bool:
        return self._where[i] >= 0

    def add(self, i: int) -> None:
        if self._where[i] < 0:
            self._where[i] = len(self.members)
            self.members.append(i)

    def discard(self, i: int) -> None:
        pos = int(self._where[i])
        if pos < 0:
            return
        last = self.members.pop()
        if last != i:  # move the last member into the hole
            self.members[pos] = last
            self._where[last] = pos
        self._where[i] = -1

    def pick(self, rng: np.random.Generator, k: int, taken: set[int]) -> list[int]:
        """Up to ``k`` distinct members not in ``taken``, uniformly at random."""
        free = len(self.members) - sum(1 for i in taken if self._where[i] >= 0)
        k = min(k, free)
        if k <= 0:
            return []
        if free <= 4 * k:  # few left: enumerate instead of rejecting most draws
            pool = [i for i in self.members if i not in taken]
            return [pool[j] for j in rng.choice(len(pool), size=k, replace=False)]
        out: list[int] = []
        seen = set(taken)
        while len(out) < k:
            for j in rng.integers(0, len(self.members), size=2 * (k - len(out))):
                i = self.members[j]
                if i not in seen:
                    seen.add(i)
                    out.append(i)
                    if len(out) == k:
                        break
        return out


# A queue orders prompts due at the same clock by a fixed scramble of their index, not by the
# index: ``advance`` moves at most a draw's worth of them into the due set at a time, and by
# index the first rows of a dataset would always be re-tested first. A bijection on 40 bits.
_KEY_BITS = 40
_KEY_MASK = (1 << _KEY_BITS) - 1
_MUL = 0x9E3779B97F & _KEY_MASK | 1  # odd: invertible modulo 2**40
_INV = pow(_MUL, -1, 1 << _KEY_BITS)


def _key(i: int) -> int:
    x = (int(i) * _MUL) & _KEY_MASK
    return x ^ (x >> 20)


def _index(key: int) -> int:
    return ((key ^ (key >> 20)) * _INV) & _KEY_MASK


def _keys(idx: np.ndarray) -> np.ndarray:
    """``_key`` of many (uint64 arithmetic wraps modulo 2**64, a multiple of 2**40)."""
    with np.errstate(over="ignore"):
        x = (idx.astype(np.uint64) * np.uint64(_MUL)) & np.uint64(_KEY_MASK)
    return x ^ (x >> np.uint64(20))


def _indices(keys: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = keys.astype(np.uint64)
        return ((x ^ (x >> np.uint64(20))) * np.uint64(_INV)) & np.uint64(_KEY_MASK)


class DueQueue:
    """Re-test schedule of one pool: a heap of future due times and the set already due."""

    def __init__(self, capacity: int) -> None:
        self.heap: list[tuple[float, int]] = []  # (due clock, _key(prompt))
        self.due = IndexSet(capacity)

    def schedule(self, i: int, when: float) -> None:
        self.due.discard(i)
        heapq.heappush(self.heap, (float(when), _key(i)))

    def drop(self, i: int) -> None:
        """``i`` left the pool: its heap entry goes stale (skipped when popped)."""
        self.due.discard(i)

    def advance(self, now: float, valid: Callable[[int, float], bool], want: int) -> None:
        """Move entries due at ``now`` into the due set until it holds ``want`` prompts;
        ``valid(i, when)`` says whether the entry is still the prompt's current schedule (stale
        ones are dropped). The rest stay queued for later draws: when a million pre-scored
        prompts fell due at once, moving them all took one draw 0.4 s (a median draw: 1 ms)."""
        heap = self.heap
        while heap and heap[0][0] <= now and len(self.due) < want:
            when, key = heapq.heappop(heap)
            i = _index(key)
            if valid(i, when):
                self.due.add(i)

    def entries(self) -> np.ndarray:
        """The queued (due clock, prompt) pairs, [m, 2] float64, sorted (what ``state_dict``
        keeps: the order of the heap's list does not matter, only what it holds)."""
        if not self.heap:
            return np.zeros((0, 2))
        when = np.fromiter((w for w, _ in self.heap), np.float64, len(self.heap))
        idx = _indices(np.fromiter((k for _, k in self.heap), np.uint64, len(self.heap)))
        order = np.lexsort((idx, when))
        return np.stack([when[order], idx[order].astype(np.float64)], axis=1)

    def rebuild(self, when, idx) -> None:
        """The queue of prompts ``idx`` due at ``when`` (arrays or sequences of equal length)."""
        keys = _keys(np.asarray(idx, dtype=np.int64)).tolist()
        self.heap = list(zip(np.asarray(when, dtype=np.float64).tolist(), keys))
        heapq.heapify(self.heap)


def first_wait(cfg, *, warmup: bool) -> float:
    """The groups a prompt waits before its first re-test in the warm-up (or easy) pool."""
    after = cfg.warmup_retest_after if warmup else cfg.easy_retest_after
    return min(after, cfg.max_retest_after)
