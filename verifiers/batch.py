"""Score many completions in worker processes, each item under a hard timeout.

Items go to the persistent worker pool of ``passband.verifiers._deadline`` in chunks (two per
worker, at most ``_MAX_CHUNK`` items); the worker sends outcomes back in batches (one message per
few milliseconds of work, not per item), each saying when the next item started. Each item's clock
starts when the previous one in its chunk finishes; an item past ``timeout`` has its worker killed
and becomes ``Verdict.timeout``, a worker that dies becomes ``Verdict.error`` for that item only,
and the rest of the chunk is sent to another worker (one message per item from then on, so that a
later timeout is pinned on the item that overran). A batch stops early under ``batch_timeout``, or
when its first items all time out (see ``verify_batch``). Callables that cannot be sent to a worker
run inline with a warning: their timeout is then soft (a hung call keeps a background thread busy;
it cannot be killed).
"""

from __future__ import annotations

import gc
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from passband.sandbox._worker_limits import check_timeout, check_workers
from passband.verifiers import _deadline
from passband.verifiers._coerce import call_safely, describe
from passband.verifiers.registry import get
from passband.verifiers.verdict import Verdict

__all__ = ["verify_batch"]

_MAX_CHUNK = 512
# inline_safe verifiers stay inline while under 2 ms an item on average: generous, so that a load
# hiccup in the first items does not move a cheap batch onto a cold worker pool
_PROBE, _INLINE_MAX_S = 16, 0.002
_HOPELESS = 4  # items that all timed out, and nothing else finished: the batch stops (the
# shortest completions run first, so a few slow ones at a batch's head cannot mask the rest)


def verify_batch(
    name_or_reward: str | Callable[..., object],
    completions: Sequence[str],
    references: Mapping[str, object] | Sequence[Mapping[str, object]] | None = None,
    *,
    timeout: float = 10.0,
    workers: int | None = None,
    batch_timeout: float | None = None,
) -> list[Verdict]:
    """One Verdict per completion, in input order.

    name_or_reward: a registered verifier name, a ``Reward``, or any picklable callable
        ``(completion, **reference) -> Verdict | float | bool``.
    references: one dict per completion, or one dict shared by all (``None`` = no fields).
    timeout: seconds per item, enforced by killing the worker process; raised for a verifier
        that declares ``time_limit(reference)`` (the ``code`` verifier: its ``timeout_s``) to that
        limit plus a grace, so the verifier grades a program that ran out of time itself.
    workers: parallel worker processes (default: the number of CPUs).
    batch_timeout: seconds for the whole call (default None: no limit of its own). Items not
        finished by then are ``timeout`` verdicts that say so. Independently of it, when the
        first ``max(4, workers)`` items to finish have *all* timed out, the rest are not run
        (``timeout``, "not run: ..."): a reward that always hangs costs one round of timeouts.

    A verifier declaring ``inline_safe = True`` (its time is linear in its input; the built-in
    ``exact`` without a pattern) runs in this process while it measures under 2 ms an item:
    there the process round trip would cost more than the check.

    >>> [v.status for v in verify_batch("exact", ["4", "5"], {"answer": "4"}, workers=1)]
    ['ok', 'wrong']
    """
    verifier = get(name_or_reward) if isinstance(name_or_reward, str) else name_or_reward
    if not callable(verifier):
        raise TypeError(
            f"verify_batch needs a verifier name or a callable, got {type(verifier).__name__}"
        )
    completions = list(completions)
    refs = _references(references, len(completions))
    check_timeout(timeout)
    check_timeout(batch_timeout, "batch_timeout", optional=True)
    workers = _workers(workers)
    items = list(zip(completions, refs))
    if not items:
        return []
    if _deadline.in_worker():  # already inside a worker: the outer deadline covers us
        return [call_safely(verifier, c, r, describe(verifier)) for c, r in items]
    inline = _inline(verifier, items) if getattr(verifier, "inline_safe", False) is True else []
    if len(inline) == len(items):
        return inline
    items = items[len(inline) :]
    return inline + _in_workers_or_here(
        verifier, items, _covering(verifier, items, float(timeout)), workers, batch_timeout
    )


def _in_workers_or_here(verifier, items, timeout, workers, batch_timeout) -> list[Verdict]:
    """In the workers; what they cannot load (a verifier defined in ``__main__``, a reference
    of a class only the caller has) inline, with a soft timeout. Each batch tries the workers
    again (a later one may load), but the same reason is said once, not at every step."""
    try:
        return _run_in_workers(verifier, items, timeout, workers, batch_timeout)
    except _deadline.NotPortable as exc:
        if _first_time(verifier):
            warnings.warn(
                f"passband.verify_batch: {exc}. Running inline in this process instead; the "
                "timeout is SOFT: a hanging item is abandoned after the timeout but keeps running "
                "in a thread (said once for this verifier)",
                RuntimeWarning,
                stacklevel=3,
            )
    return [_inline_soft(verifier, c, r, float(timeout)) for c, r in items]


_WARNED: weakref.WeakSet = weakref.WeakSet()  # verifiers already warned of (not kept alive)


def _first_time(verifier) -> bool:
    """Whether this is the first not-portable warning for ``verifier`` (always, for one that
    takes no weak reference)."""
    try:
        if verifier in _WARNED:
            return False
        _WARNED.add(verifier)
    except TypeError:
        pass
    return True


_YOUNG_EVERY = 256  # items between young-generation collections in ``_inline``
_LIMIT_GRACE_S = 5.0  # over a verifier's own time limit: its start-up and the grading after it


def _covering(verifier, items: list, timeout: float) -> float:
    """``timeout``, raised to cover the time a verifier declares it may take on these items
    (``time_limit(reference)``: the ``code`` verifier's ``timeout_s``). A deadline at or under
    it would kill the worker just as the verifier grades an infinite loop ``wrong``, and the
    item would become a ``timeout`` the trainer masks: the loop would escape its reward."""
    limit = getattr(verifier, "time_limit", None)
    if not callable(limit):
        return timeout
    declared = max((float(limit(reference)) for _, reference in items), default=0.0)
    return max(timeout, declared + _LIMIT_GRACE_S) if declared > 0 else timeout


def _inline(verifier, items: list) -> list[Verdict]:
    """Verdicts for the leading items, run here, while each costs under ``_INLINE_MAX_S``.

    Only for verifiers that declare ``inline_safe = True``: their time is linear in the input, so
    nothing here can hang; a pipe round trip would cost more than the check. The measurement
    decides how far: once the items measured cost more than ``_INLINE_MAX_S`` on average, the rest
    go to the workers, where the parallelism pays for the round trips."""
    name, out = describe(verifier), []
    start = time.perf_counter()
    # A full collection the batch's own allocations set off, over everything the process holds,
    # took 20-30 ms of a 2,000-item batch that otherwise took 7 ms (bench_verify_batch.py): the
    # loop collects only the young generations, every _YOUNG_EVERY items, so cycles a verifier
    # makes are still freed as it goes.
    was_on = gc.isenabled()
    gc.disable()
    try:
        for completion, reference in items:
            out.append(call_safely(verifier, completion, reference, name))
            if len(out) % _YOUNG_EVERY == 0:
                gc.collect(1)
            if len(out) >= _PROBE and time.perf_counter() - start > _INLINE_MAX_S * len(out):
                break
    finally:
        if was_on:
            gc.enable()
    return out


def _references(references, n: int) -> list[dict]:
    if references is None:
        return [{} for _ in range(n)]
    if isinstance(references, Mapping):
        return [dict(references) for _ in range(n)]
    refs = list(references)
    if len(refs) != n:
        raise ValueError(
            f"got {n} completions but {len(refs)} references; pass one dict per completion or one for all"
        )
    for i, ref in enumerate(refs):
        if not isinstance(ref, Mapping):
            raise TypeError(
                f"references[{i}] must be a dict of reference fields, got {type(ref).__name__}"
            )
    return [dict(ref) for ref in refs]


def _workers(workers: int | None) -> int:
    if workers is None:
        return max(1, os.cpu_count() or 1)
    return check_workers(workers)


def _run_in_workers(
    verifier, items: list, timeout: float, workers: int, batch_timeout: float | None
) -> list[Verdict]:
    # Two chunks per worker balance the load; fewer, larger chunks cost fewer round trips (a
    # timeout in a large chunk costs no more: the rest of it is resubmitted).
    size = max(1, min(_MAX_CHUNK, -(-len(items) // (workers * 2))))
    if batch_timeout is not None:  # the cutoff is read between chunks: one item each, so a
        size = 1  # started chunk cannot run on past it (a chunk of 6 slow items ran 0.8 s over)
    # shortest completions first: a batch stops early only when every item finished so far timed
    # out, and a few slow completions at its head must not mask the rest (six of them did)
    order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
    chunks = [order[i : i + size] for i in range(0, len(items), size)]
    results: list[Verdict | None] = [None] * len(items)
    cutoff = _Cutoff(batch_timeout, workers)
    if len(chunks) == 1 or workers == 1:
        for chunk in chunks:
            _run_chunk(verifier, items, chunk, timeout, results, cutoff)
    else:
        with ThreadPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            for future in [
                pool.submit(_run_chunk, verifier, items, c, timeout, results, cutoff)
                for c in chunks
            ]:
                future.result()  # re-raises NotPortable
    return results  # type: ignore[return-value]


def _run_chunk(
    verifier, items: list, indices: list[int], timeout: float, results: list, cutoff: _Cutoff
) -> None:
    """Score ``indices`` on one worker; after a kill, the rest goes to a fresh worker.

    After an ``unsure`` kill (several calls were in flight unreported) the rest runs in precise
    mode, one message per call, so the timeout lands on the item that overran and no other."""
    name = describe(verifier)
    pending, precise = list(indices), False
    while pending:
        if cutoff.reached():
            for i in pending:
                results[i] = Verdict.timeout(cutoff.reason)
            return
        calls = [((verifier, items[i][0], items[i][1], name), {}) for i in pending]
        done = 0
        for kind, value in _deadline._pool().run(
            call_safely, calls, min(timeout, cutoff.left()), precise=precise, name=name
        ):
            if kind == "unsure":
                precise = True
                break
            i = pending[done]
            done += 1
            cutoff.saw(kind)
            if kind == "ok":
                results[i] = value
            elif kind == "timeout":
                results[i] = Verdict.timeout(
                    f"{name} ran past {timeout:g} s; its worker was killed"
                )
            elif isinstance(value, _deadline.NotPortable):
                raise value
            else:  # crash, or an exception outside the verifier (e.g. its result did not pickle)
                results[i] = Verdict.error(f"{name}: {type(value).__name__}: {value}")
        pending = pending[done:]


class _Cutoff:
    """When to stop a batch early: past ``batch_timeout``, or when every item finished so far
    (at least ``_HOPELESS`` of them) timed out - a reward that always hangs costs one round of
    timeouts, not ``len(items) / workers`` of them."""

    def __init__(self, batch_timeout: float | None, workers: int) -> None:
        self._end = None if batch_timeout is None else time.monotonic() + batch_timeout
        self._hopeless = max(_HOPELESS, workers)
        self._timeouts = self._others = 0
        self._lock = threading.Lock()
        self.reason = ""

    def saw(self, kind: str) -> None:
        with self._lock:
            if kind == "timeout":
                self._timeouts += 1
            else:
                self._others += 1

    def left(self) -> float:
        return float("inf") if self._end is None else max(self._end - time.monotonic(), 0.01)

    def reached(self) -> bool:
        with self._lock:
            if self._end is not None and time.monotonic() >= self._end:
                self.reason = "not run: the batch reached its batch_timeout"
            elif self._others == 0 and self._timeouts >= self._hopeless:
                self.reason = (
                    f"not run: the first {self._timeouts} items of the batch all timed out"
                )
            return bool(self.reason)


def _inline_soft(verifier, completion: str, reference: dict, timeout: float) -> Verdict:
    box: list[Verdict] = []
    thread = threading.Thread(
        target=lambda: box.append(call_safely(verifier, completion, reference, describe(verifier))),
        name="passband-inline-verifier",
        daemon=True,
    )
    thread.start()
    thread.join(timeout)
    if box:
        return box[0]
    return Verdict.timeout(
        f"{describe(verifier)} ran past {timeout:g} s (soft timeout: ran inline, not killed)"
    )
