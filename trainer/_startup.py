"""Start-up work that overlaps with loading the model: the verifier workers.

A worker process costs an interpreter start and the reward's imports (seconds on a busy CPU). Left
to the first ``verify_batch`` call, that lands in step 1's score phase; started on a thread while
the model loads and the first rollout generates, it is ready by the time step 1 scores.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["start_verifier_workers"]


def start_verifier_workers(
    scorer, rows: Sequence[Mapping[str, Any]], workers: int | None
) -> threading.Thread | None:
    """Score one empty answer per worker on a background thread; ``None`` when the reward runs
    inline (it cannot be sent to a worker, so there is nothing to start)."""
    try:
        pickle.dumps(scorer.reward)
    except Exception:  # a closure or a lambda: verify_batch scores it in this process
        return None
    count = workers or os.cpu_count() or 1
    row = dict(rows[0]) if rows else {}

    def warm() -> None:
        with contextlib.suppress(Exception):  # any failure is the first real call's to report
            scorer([""] * count, [row] * count, [0] * count)

    thread = threading.Thread(target=warm, name="passband-verifier-warm-up", daemon=True)
    thread.start()
    return thread
