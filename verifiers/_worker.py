"""The worker side of ``_deadline``: run a chunk of calls, send outcomes back in batches.

One message per call made a verifier that does nothing cost a pipe round trip per item, five
times what a plain ``ProcessPoolExecutor.map`` costs. So outcomes are buffered and sent when
``_FLUSH_S`` has passed since the last send (or the chunk is done, or the parent asked for
``precise`` mode: one message per call). Each message says when the next call started
(``time.monotonic``, one clock for all processes on the machine), so the parent still enforces
the deadline of every call separately; see ``_deadline._Worker.stream`` for how it attributes
a timeout when several calls were in flight unreported.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time
import traceback

__all__ = ["portable", "worker_main"]

_FLUSH_S = 0.005


def worker_main(conn, mark_in_worker) -> None:
    """Loop: receive ``(path, message)``; message unpickles to ``(fn, calls, precise)``."""
    mark_in_worker()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    try:
        import passband.verifiers  # noqa: F401  (registers built-ins; usually preloaded)
    except Exception:  # reported when a call needs it
        pass
    conn.send(("ready", os.getpid()))
    while True:
        try:
            path, message = conn.recv()
        except (EOFError, OSError):
            return  # parent gone
        try:
            if path != sys.path:  # the parent added a folder since we started: see its modules too
                sys.path[:] = path
            fn, calls, precise = pickle.loads(message)
        except Exception as exc:  # unpickling failed, e.g. fn's module is not importable here
            conn.send(("fail", portable(exc)))
            continue
        _run_calls(conn, fn, calls, precise)


def _run_calls(conn, fn, calls, precise: bool) -> None:
    buffer: list = []
    flushed = time.monotonic()
    for n, (args, kwargs) in enumerate(calls):
        try:
            buffer.append(("ok", fn(*args, **kwargs)))
        except BaseException as exc:  # noqa: BLE001 - reported to the caller, worker lives on
            buffer.append(("raise", portable(exc)))
        now = time.monotonic()
        last = n == len(calls) - 1
        if precise or last or now - flushed >= _FLUSH_S:
            _send(conn, buffer, None if last else now)
            buffer, flushed = [], now


def _send(conn, outcomes: list, next_start: float | None) -> None:
    """``("batch", outcomes, next_start)``; an outcome whose value does not pickle becomes an error."""
    try:
        conn.send(("batch", outcomes, next_start))
        return
    except Exception:  # pickling failed before anything was written: the stream stays aligned
        pass
    safe = []
    for outcome in outcomes:
        try:
            pickle.dumps(outcome)
            safe.append(outcome)
        except Exception as exc:
            safe.append(("raise", portable(exc)))
    conn.send(("batch", safe, next_start))


def portable(exc: BaseException) -> BaseException:
    """The exception itself if it pickles, else a RuntimeError carrying its text and traceback."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        exc = RuntimeError(f"{type(exc).__name__}: {exc}")
    exc.__traceback__ = None
    try:
        exc.add_note(f"[in passband worker {os.getpid()}]\n{tb}")
    except (AttributeError, TypeError):
        pass
    return exc
