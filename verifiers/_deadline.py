"""Run a function in a killable worker process with a hard deadline.

Why not ``signal.alarm``: it only works in the main thread, and a C extension (sympy's big-integer
arithmetic, a catastrophic regex) does not return to the interpreter to notice it. The only
deadline that always holds is killing the process doing the work, so every call here runs in a
persistent, pre-started worker process; past the deadline the worker gets SIGKILL and is replaced.

Workers come from a ``forkserver`` context (``spawn`` where forkserver is missing), never a plain
fork: forking a process that has torch or other threads loaded can deadlock. The forkserver
preloads ``passband.verifiers._preload`` (the verifiers, sympy warmed up), so a replacement worker is
ready in milliseconds and fast from its first call.

Nested calls (a verifier calling ``call_with_deadline`` while itself running inside a worker of
this module or of ``verify_batch``) run inline: the outer deadline already covers them.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util
import os
import pickle
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.reduction import ForkingPickler as _ForkingPickler
from typing import Any

from passband.sandbox._worker_limits import check_timeout
from passband.verifiers._spawning import WorkerProcess, context
from passband.verifiers._worker import worker_main

__all__ = [
    "DeadlineExceeded",
    "NotPortable",
    "WorkerCrashed",
    "call_with_deadline",
    "in_worker",
    "warm_up",
]

_STARTUP_TIMEOUT_S = 120.0  # a cold worker imports sympy & co.; not counted against the deadline
# Direct calls from many threads (a reward function inside another trainer) each need a worker to
# answer within their own timeout; idle workers are forked from the preloaded server and cost memory
# only (shared copy-on-write), so the pool allows more than the cores.
_MAX_WORKERS = max(16, 4 * (os.cpu_count() or 1))
_IN_WORKER = False


class DeadlineExceeded(TimeoutError):
    """The call ran past its deadline; its worker was killed and replaced."""


class WorkerCrashed(RuntimeError):
    """The worker process died during the call (os._exit, segfault, out of memory kill)."""


class NotPortable(TypeError):
    """The function or its arguments cannot be sent to a worker (unpicklable, or defined in
    ``__main__``/a module the worker cannot import). Callers may fall back to running inline."""


def in_worker() -> bool:
    """True inside a passband worker process, where nested deadline calls run inline."""
    return _IN_WORKER


def call_with_deadline(
    fn: Callable[..., Any], *args: Any, timeout: float, queue_counts: bool = False, **kwargs: Any
) -> Any:
    """``fn(*args, **kwargs)`` in a worker process; raises ``DeadlineExceeded`` after ``timeout`` s.

    ``fn`` and its arguments must be picklable (a top-level function, not a lambda). Exceptions
    raised by ``fn`` are re-raised here; a worker that dies raises ``WorkerCrashed``. Starting a
    cold worker never counts against ``timeout``. Waiting for a busy pool counts only with
    ``queue_counts=True``: a verifier called directly (from any number of threads) promises to
    answer within its timeout, so the queue eats into the same budget and a caller that finds no
    free worker in time gets ``DeadlineExceeded`` too.
    """
    check_timeout(timeout)
    if _IN_WORKER:
        return fn(*args, **kwargs)
    pool = _pool()
    ((kind, value),) = list(
        pool.run(fn, [(args, kwargs)], float(timeout), queue_counts=queue_counts)
    )
    if kind == "ok":
        return value
    if kind == "timeout":
        raise DeadlineExceeded(f"{_name(fn)} ran past its {timeout:g} s deadline; worker killed")
    raise value  # an exception from fn, or WorkerCrashed


def warm_up(n: int = 1) -> None:
    """Start ``n`` idle workers now, so the first timed call does not pay the start-up."""
    pool = _pool()
    workers = [pool.acquire()[0] for _ in range(max(1, n))]
    for worker in workers:
        pool.release(worker)


# ----------------------------------------------------------------------------- worker side


def _worker_main(conn) -> None:
    worker_main(conn, _mark_in_worker)


def _mark_in_worker() -> None:
    global _IN_WORKER
    _IN_WORKER = True


# ----------------------------------------------------------------------------- parent side


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, ctx, process_cls) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = process_cls(target=_worker_main, args=(child,), name="passband-worker")
        self.process.start()
        child.close()
        self.pid: int | None = None

    def wait_ready(self, timeout: float) -> None:
        if not self.conn.poll(timeout):
            self.kill()
            raise WorkerCrashed(f"a passband worker did not start within {timeout:g} s")
        try:
            _, self.pid = self.conn.recv()
        except (EOFError, OSError):
            self.kill()
            raise WorkerCrashed(
                f"a passband worker died while starting (exit code {self.process.exitcode})"
            ) from None

    def stream(
        self,
        fn,
        calls: Sequence,
        payload: bytes,
        first: float,
        timeout: float,
        precise: bool,
        name: str | None = None,
    ) -> Iterator[tuple[str, Any]]:
        """Yield one outcome per call; stops after the first ``timeout``/``unsure``/``crash``.

        ``first`` is the first call's deadline, ``timeout`` each later one's, counted from the
        start time the worker reports with each batch. Past a deadline the worker is killed. The
        outcome is ``timeout`` for the first call without an outcome when it is known to be the
        one running (``precise`` mode, or it is the last call), else ``unsure``: a fast call may
        have finished unreported before a slow one, so the caller re-runs the rest precisely.
        The same holds for a worker that dies.
        """
        name = name or _name(fn)  # in messages: what the user knows (their verifier)
        self.conn.send_bytes(payload)
        started, budget, done = time.monotonic(), first, 0
        while done < len(calls):
            if not self.conn.poll(max(started + budget - time.monotonic(), 0.0)):
                self.kill()
                yield ("timeout" if precise or done == len(calls) - 1 else "unsure"), None
                return
            try:
                message = pickle.loads(self.conn.recv_bytes())
            except (EOFError, OSError):
                self.kill()
                if not (precise or done == len(calls) - 1):
                    yield "unsure", None  # which of the unreported calls killed it is not known
                    return
                code = self.process.exitcode
                yield (
                    "crash",
                    WorkerCrashed(f"worker died while running {name} (exit code {code})"),
                )
                return
            except Exception as exc:  # a result this process cannot unpickle: the batch is lost
                yield "raise", RuntimeError(f"cannot load the result of {name}: {exc}")
                self.kill()
                return
            if message[0] == "fail":  # the whole message could not be unpickled in the worker
                error = NotPortable(
                    f"the worker could not load {name} ({type(message[1]).__name__}: {message[1]}); "
                    "define it in an importable module, not in __main__ or a test file"
                )
                for _ in calls:
                    yield "raise", error
                return
            _, outcomes, next_start = message
            for outcome in outcomes:
                done += 1
                yield outcome
            if next_start is not None:
                started, budget = next_start, timeout

    def kill(self) -> None:
        try:
            self.process.kill()  # SIGKILL: nothing in the worker can delay it
            self.process.join(timeout=5)
        except (OSError, ValueError, AssertionError):
            pass
        self.conn.close()

    @property
    def alive(self) -> bool:
        return not self.conn.closed and self.process.is_alive()


class _Pool:
    """Idle workers shared by all threads; each call holds one worker exclusively."""

    def __init__(self, max_workers: int = _MAX_WORKERS) -> None:
        self._ctx = context()
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._max = max_workers
        self._starting = 0
        self._closed = False
        self._replacers: list[threading.Thread] = []
        self._started_any = False

    def run(
        self,
        fn,
        calls: Sequence,
        timeout: float,
        *,
        queue_counts: bool = False,
        precise: bool = False,
        name: str | None = None,
    ) -> Iterator[tuple[str, Any]]:
        """Outcomes of ``fn(*args, **kwargs)`` for each call, in order, on one worker; ``name``
        is what messages call it (default: ``fn``'s name).

        The deadline applies to each call separately. After a timeout or crash the stream stops
        early: the caller re-submits the calls that got no outcome (``precise=True`` after an
        ``unsure``). With ``queue_counts`` the
        wait for a free worker comes out of the first call's deadline (see ``call_with_deadline``).
        """
        calls = list(calls)
        try:
            message = bytes(_ForkingPickler.dumps((fn, calls, precise)))
            payload = bytes(_ForkingPickler.dumps((list(sys.path), message)))
        except Exception as exc:  # lambda, local function, open file, ...
            raise NotPortable(
                f"cannot send {name or _name(fn)} or its arguments to a worker process ({exc}); "
                "use a top-level function of an importable module or a picklable callable object"
            ) from exc
        worker, waited = self.acquire(timeout if queue_counts else None)
        if worker is None:  # the pool stayed busy for the whole budget
            yield "timeout", None
            return
        first = timeout - waited if queue_counts else timeout
        healthy = False
        try:
            yield from worker.stream(fn, calls, payload, max(first, 0.01), timeout, precise, name)
            healthy = worker.alive
        finally:
            (self.release if healthy else self.discard)(worker)

    def acquire(self, wait: float | None = None) -> tuple[_Worker | None, float]:
        """``(worker, seconds waited)``: an idle worker, or a newly started one; ``(None, wait)`` if
        the pool stayed full for ``wait`` s. Starting a worker counts as waiting, except the first
        start of the pool (it boots the forkserver and imports sympy: seconds no call should pay)."""
        queued_at = time.monotonic()
        give_up = None if wait is None else queued_at + wait
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("passband worker pool is shut down (interpreter exiting)")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive:
                        return worker, time.monotonic() - queued_at
                    self._forget(worker)
                if self._reserve_start():
                    break
                left = None if give_up is None else give_up - time.monotonic()
                if left is not None and left <= 0:
                    return None, float(wait)
                self._cond.wait(left)
        start = time.monotonic()
        cold = (
            not self._started_any
        )  # the first start boots the server and imports sympy: never counted
        worker = self._start_reserved()
        self._started_any = True
        return worker, (time.monotonic() if not cold else start) - queued_at

    def _reserve_start(self) -> bool:
        """Under the lock: claim room for one more worker, if the pool is below its maximum."""
        if len(self._all) + self._starting >= self._max:
            return False
        self._starting += 1
        return True

    def _start_reserved(self) -> _Worker:
        try:
            worker = _Worker(self._ctx, WorkerProcess)
            worker.wait_ready(_STARTUP_TIMEOUT_S)
        finally:
            with self._cond:
                self._starting -= 1
                self._cond.notify()
        with self._cond:
            self._all.add(worker)
        return worker

    def release(self, worker: _Worker) -> None:
        with self._cond:
            self._idle.append(worker)
            self._cond.notify()

    def discard(self, worker: _Worker) -> None:
        """Kill a worker that timed out, crashed or was interrupted, and start a replacement."""
        worker.kill()
        with self._cond:
            self._forget(worker)
            self._cond.notify()
        with self._cond:
            if self._closed:
                return
            self._replacers = [t for t in self._replacers if t.is_alive()]
            thread = threading.Thread(
                target=self._replace, name="passband-worker-replace", daemon=True
            )
            self._replacers.append(thread)
        thread.start()

    def _replace(self) -> None:
        with self._cond:
            if self._closed or not self._reserve_start():
                return
        try:
            self.release(self._start_reserved())
        except Exception:  # the next call will try again and report the error
            pass

    def _forget(self, worker: _Worker) -> None:
        self._all.discard(worker)

    def shutdown(self) -> None:
        with self._cond:
            self._closed = True
            replacers = list(self._replacers)
            self._cond.notify_all()
        for thread in replacers:  # a half-started worker would leave the forkserver a traceback
            thread.join(timeout=10)
        with self._cond:
            workers, self._idle, self._all = list(self._all), [], set()
        for worker in workers:
            worker.kill()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> _Pool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _Pool()
            # Inside a multiprocessing child (a user's ProcessPoolExecutor, a DataLoader worker),
            # exit joins every child process *after* running these finalizers and without running
            # atexit: our idle workers would wait on their pipes forever. Shut them down first.
            multiprocessing.util.Finalize(None, _shutdown, exitpriority=100)
        return _POOL


def _shutdown() -> None:
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown()


def _forget_after_fork() -> None:
    # A forked child must not share the parent's pipes; it builds its own pool on first use.
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


atexit.register(_shutdown)
os.register_at_fork(after_in_child=_forget_after_fork)
