"""A pool of warm zygote workers, and sessions for calling into a sandboxed Python program.

Workers are started lazily (``python -I _zygote.py``, never a fork of this process, so it is safe
from a threaded process with torch loaded) up to ``workers`` (default: the number of cores). A
worker that dies or stops answering is killed and replaced; ``run`` then re-submits the job.
"""

from __future__ import annotations

import atexit
import base64
import os
import socket
import subprocess
import sys
import threading
import time

from passband.sandbox import _wire as wire
from passband.sandbox.languages import Language, get_language
from passband.sandbox.limits import ExecResult, Limits

_ZYGOTE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_zygote.py")
_GRACE_S = 5.0  # beyond the run's own deadline, how long we wait for a worker before replacing it
_RETRIES = 2
# The worker's environment is not ours: programs run inside a fork of the worker and could read its
# initial environment block from their own memory, so nothing from this process's env goes there.
_WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


class SandboxError(RuntimeError):
    """The sandbox itself failed (a worker could not start or kept dying)."""


class WorkerLost(SandboxError):
    """A worker died or broke protocol in the middle of a job."""


class _Worker:
    def __init__(self, python: str) -> None:
        self.leftovers: dict = {}
        parent, child = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                [python, "-I", _ZYGOTE, str(child.fileno())],
                pass_fds=[child.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
                env=_WORKER_ENV,
            )
        except OSError as exc:
            parent.close()
            raise SandboxError(f"cannot start a sandbox worker with {python}: {exc}") from None
        finally:
            child.close()
        self.sock = parent
        try:
            hello = self._recv(30.0)
        except WorkerLost as exc:
            self.kill()
            raise SandboxError(f"sandbox worker failed to start with {python}: {exc}") from None
        self.report: dict[str, str] = hello["report"]
        self.leftovers = hello.get("leftovers", {})

    def _recv(self, timeout: float) -> dict:
        self.sock.settimeout(timeout)
        try:
            msg, _ = wire.recv(self.sock)
            return msg
        except (wire.WireError, OSError) as exc:  # socket.timeout is an OSError
            raise WorkerLost(str(exc) or type(exc).__name__) from None

    def submit(self, job: dict, fd: int | None = None) -> None:
        try:
            self.sock.settimeout(30.0)
            # the worker reads the limits, its forked child the job: the worker never holds a job
            wire.send(self.sock, {"limits": job["limits"]})
            wire.send(self.sock, job, [fd] if fd is not None else [])
        except (wire.WireError, OSError) as exc:
            raise WorkerLost(str(exc)) from None

    def result(self, timeout: float) -> ExecResult:
        """The run's header, then its stdout and stderr bytes, as the worker sends them."""
        head = self._recv(timeout)
        try:
            out, err = (
                wire.recv_bytes(self.sock, head[f"{s}_bytes"]) for s in ("stdout", "stderr")
            )
        except (KeyError, TypeError, wire.WireError, OSError) as exc:
            raise WorkerLost(f"bad answer from the worker: {exc!r}") from None
        return _result(head, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, grace: float = 0.0) -> None:
        """Stop the worker: closing the socket asks it to clean up and exit; then SIGKILL."""
        self.sock.close()
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, 9)
        except OSError:
            pass
        self.proc.wait()
        _remove_leftovers(self.leftovers)


def _result(head: dict, stdout: str, stderr: str) -> ExecResult:
    last = stderr.rstrip().rsplit("\n", 1)[-1]
    return ExecResult(
        exit_code=head["exit_code"],
        stdout=stdout,
        stderr=stderr,
        timed_out=head["timed_out"],
        memory_exceeded=head["oom"] or (head["exit_code"] != 0 and last.startswith("MemoryError")),
        duration_s=head["duration_s"],
        stdout_truncated=head["stdout_truncated"],
        stderr_truncated=head["stderr_truncated"],
        setup_error="" if head["set_up"] else (stderr[-2000:] or "setup failed"),
    )


class Pool:
    """Warm sandbox workers. ``run`` is thread-safe; use one pool per process."""

    def __init__(self, workers: int | None = None, *, python: str | None = None) -> None:
        self.size = int(workers or _cores())
        if self.size < 1:
            raise ValueError(f"Pool workers must be >= 1, got {workers!r}")
        self.python = python or sys.executable
        self._idle: list[_Worker] = []  # LIFO: the warmest worker first
        self._count = 0
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)  # a worker came back, or room to start one
        self._all: set[_Worker] = set()
        self._closed = False
        self._pid = os.getpid()
        self.report: dict[str, str] = {}

    def run(
        self,
        code: str,
        *,
        stdin: str = "",
        limits: Limits = Limits(),
        language: str | Language = "python",
        files: dict[str, str | bytes] | None = None,
    ) -> ExecResult:
        """Run ``code`` once in a fresh sandbox and return what it did. Never raises on program
        behaviour. ``files``: more files for the working directory; ``bytes`` are written as
        executables (a program compiled once: ``build.py``)."""
        job = _job("run", code, stdin, limits, language, files)
        for attempt in range(_RETRIES + 1):
            worker = self._acquire()
            try:
                worker.submit(job)
                result = worker.result(limits.timeout_s + _GRACE_S)
            except WorkerLost as exc:
                self._discard(worker)
                if attempt == _RETRIES:
                    raise SandboxError(
                        f"sandbox worker lost {attempt + 1} times; last: {exc}"
                    ) from None
                continue
            self._release(worker)
            return result
        raise AssertionError("unreachable")

    def session(
        self, code: str, *, limits: Limits = Limits(), files: dict[str, str | bytes] | None = None
    ):
        """Start ``code`` (Python) in a sandbox and keep it alive to answer calls; see ``Session``."""
        from passband.sandbox.session import Session

        return Session(self, _job("session", code, "", limits, "python", files), limits)

    # ---- worker bookkeeping ------------------------------------------------------------------
    def _acquire(self) -> _Worker:
        """An idle worker, or a new one while below ``size``; else wait until either is possible.

        Waiting is on a condition that both ``_release`` and ``_discard`` signal: a caller waiting
        while another's worker is killed (a timed-out program) starts the replacement itself,
        instead of waiting for an idle worker that will never come.
        """
        with self._freed:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox pool is closed")
                if self._idle:
                    return self._idle.pop()
                if self._count < self.size:
                    self._count += 1
                    break
                self._freed.wait()
        try:
            worker = _Worker(self.python)
        except BaseException:
            with self._freed:
                self._count -= 1
                self._freed.notify()
            raise
        with self._lock:
            self._all.add(worker)
            self.report = worker.report
        return worker

    def _release(self, worker: _Worker) -> None:
        if self._closed or not worker.alive():
            self._discard(worker)
            return
        with self._freed:
            self._idle.append(worker)
            self._freed.notify()

    def _discard(self, worker: _Worker) -> None:
        worker.kill()
        with self._freed:
            self._count -= 1
            self._all.discard(worker)
            self._freed.notify()

    def close(self) -> None:
        """Stop every worker (their running programs die with them)."""
        if os.getpid() != self._pid:  # a forked copy of this object: the workers are not ours
            return
        with self._freed:
            self._closed = True
            workers = list(self._all)
            self._all.clear()
            self._idle.clear()
            self._count = 0
            self._freed.notify_all()
        for worker in workers:  # ask all to stop first, so their clean-ups overlap
            worker.sock.close()
        for worker in workers:
            worker.kill(grace=1.0)

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _remove_leftovers(leftovers: dict) -> None:
    """What a killed worker could not remove itself: its base directory and its cgroups."""
    from passband.sandbox._rmtree import remove_tree

    for path in leftovers.get("dirs", ()):
        remove_tree(path)
    for path in leftovers.get("cgroups", ()):
        for _ in range(50):  # a cgroup is removable once its last member is gone
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.01)


def _job(mode, code, stdin, limits, language, files) -> dict:
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a passband.sandbox.Limits, got {type(limits).__name__}")
    lang = get_language(language)
    for name in files or {}:
        if not name or "/" in name or name in (".", "..") or name == lang.source_file:
            raise ValueError(
                f"file name {name!r} must be a plain name other than {lang.source_file!r}"
            )
    files = dict(files or {})
    for name, content in files.items():
        if not isinstance(content, (str, bytes)):
            raise TypeError(f"file {name!r} must be str or bytes, got {type(content).__name__}")
    return {
        "mode": mode,
        "code": code,
        "stdin": stdin or "",
        "limits": limits.to_wire(),
        "language": lang.to_wire(),
        "files": {k: v for k, v in files.items() if isinstance(v, str)},
        "binaries": {  # executables, such as a program compiled once (build.py)
            k: base64.b64encode(v).decode() for k, v in files.items() if isinstance(v, bytes)
        },
        "sent_at": time.time(),
    }


_default: Pool | None = None
_default_lock = threading.Lock()


def default_pool() -> Pool:
    """The process-wide pool ``run`` uses (created on first use, closed at exit, rebuilt after fork)."""
    global _default
    with _default_lock:
        if _default is None or _default._pid != os.getpid():
            _default = Pool()
            atexit.register(_default.close)
        return _default


def run(
    code: str,
    *,
    stdin: str = "",
    limits: Limits = Limits(),
    language: str | Language = "python",
    files: dict[str, str | bytes] | None = None,
) -> ExecResult:
    """Run ``code`` in the default pool's sandbox. See ``Pool.run``."""
    return default_pool().run(code, stdin=stdin, limits=limits, language=language, files=files)
