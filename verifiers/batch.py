"""Score many completions in worker processes, each item under a hard timeout.

Items go to the persistent worker pool of ``passband.verifiers._deadline`` in small chunks (one
pickling round trip per chunk, not per item). Each item's clock starts when the previous one in its
chunk finishes; an item past ``timeout`` has its worker killed and becomes ``Verdict.timeout``, a
worker that dies becomes ``Verdict.error`` for that item only, and the rest of the chunk is sent to
another worker. Callables that cannot be sent to a worker run inline with a warning: their timeout
is then soft (a hung call keeps a background thread busy; it cannot be killed).
"""

from __future__ import annotations

import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Mapping, Sequence, Union

from passband.verifiers import _deadline
from passband.verifiers._coerce import call_safely, describe
from passband.verifiers.registry import get
from passband.verifiers.verdict import Verdict

__all__ = ["verify_batch"]

_MAX_CHUNK = 64


def verify_batch(
    name_or_reward: Union[str, Callable[..., object]],
    completions: Sequence[str],
    references: Union[Mapping[str, object], Sequence[Mapping[str, object]], None] = None,
    *,
    timeout: float = 10.0,
    workers: int | None = None,
) -> list[Verdict]:
    """One Verdict per completion, in input order.

    name_or_reward: a registered verifier name, a ``Reward``, or any picklable callable
        ``(completion, **reference) -> Verdict | float | bool``.
    references: one dict per completion, or one dict shared by all (``None`` = no fields).
    timeout: seconds per item, enforced by killing the worker process.
    workers: parallel worker processes (default: the number of CPUs).
    """
    verifier = get(name_or_reward) if isinstance(name_or_reward, str) else name_or_reward
    if not callable(verifier):
        raise TypeError(f"verify_batch needs a verifier name or a callable, got {type(verifier).__name__}")
    completions = list(completions)
    refs = _references(references, len(completions))
    if not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    workers = _workers(workers)
    items = list(zip(completions, refs))
    if not items:
        return []
    if _deadline.in_worker():  # already inside a worker: the outer deadline covers us
        return [call_safely(verifier, c, r, describe(verifier)) for c, r in items]
    try:
        return _run_in_workers(verifier, items, float(timeout), workers)
    except _deadline.NotPortable as exc:
        warnings.warn(
            f"passband.verify_batch: {exc}. Running inline in this process instead; the timeout is "
            "SOFT: a hanging item is abandoned after the timeout but keeps running in a thread.",
            RuntimeWarning,
            stacklevel=2,
        )
        return [_inline_soft(verifier, c, r, float(timeout)) for c, r in items]


def _references(references, n: int) -> list[dict]:
    if references is None:
        return [{} for _ in range(n)]
    if isinstance(references, Mapping):
        return [dict(references) for _ in range(n)]
    refs = list(references)
    if len(refs) != n:
        raise ValueError(f"got {n} completions but {len(refs)} references; pass one dict per completion or one for all")
    for i, ref in enumerate(refs):
        if not isinstance(ref, Mapping):
            raise TypeError(f"references[{i}] must be a dict of reference fields, got {type(ref).__name__}")
    return [dict(ref) for ref in refs]


def _workers(workers: int | None) -> int:
    if workers is None:
        return max(1, os.cpu_count() or 1)
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    return workers


def _run_in_workers(verifier, items: list, timeout: float, workers: int) -> list[Verdict]:
    size = max(1, min(_MAX_CHUNK, len(items) // (workers * 4)))
    chunks = [list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size)]
    results: list[Verdict | None] = [None] * len(items)
    if len(chunks) == 1 or workers == 1:
        for chunk in chunks:
            _run_chunk(verifier, items, chunk, timeout, results)
    else:
        with ThreadPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            for future in [pool.submit(_run_chunk, verifier, items, c, timeout, results) for c in chunks]:
                future.result()  # re-raises NotPortable
    return results  # type: ignore[return-value]


def _run_chunk(verifier, items: list, indices: list[int], timeout: float, results: list) -> None:
    """Score ``indices`` on one worker; after a kill, the rest goes to a fresh worker."""
    name = describe(verifier)
    pending = list(indices)
    while pending:
        calls = [((verifier, items[i][0], items[i][1], name), {}) for i in pending]
        done = 0
        for kind, value in _deadline._pool().run(call_safely, calls, timeout):
            i = pending[done]
            done += 1
            if kind == "ok":
                results[i] = value
            elif kind == "timeout":
                results[i] = Verdict.timeout(f"{name} ran past {timeout:g} s; its worker was killed")
            elif isinstance(value, _deadline.NotPortable):
                raise value
            else:  # crash, or an exception outside the verifier (e.g. its result did not pickle)
                results[i] = Verdict.error(f"{name}: {type(value).__name__}: {value}")
        pending = pending[done:]


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
    return Verdict.timeout(f"{describe(verifier)} ran past {timeout:g} s (soft timeout: ran inline, not killed)")
