"""Call functions of a sandboxed Python program from the harness, with plain data only.

A ``Session`` starts the program in a sandbox (module-level code runs with ``__name__ ==
"solution"``), then keeps it alive to answer calls over a socket only this process holds. Results
arrive as genuine built-in values (``_wire.decode``), so the harness compares them with its own
``==``: an object whose ``__eq__`` always returns True never reaches the harness, it arrives as an
opaque ``RemoteObject`` that equals only itself and refuses to be used as a truth value. Expected
values never enter the sandbox. A list, dict, set or bytearray argument that a call changed is
updated in the caller's object too (plain data again), as a call within one interpreter would.
The run's deadline (``Limits.timeout_s``) covers the whole session.
"""

from __future__ import annotations

import builtins
import socket
import time

from passband.sandbox import _wire as wire
from passband.sandbox._queries import BUILTIN_PREDICATES, BUILTIN_QUERIES, query, refused
from passband.sandbox._writeback import write_back
from passband.sandbox.limits import ExecResult

_GRACE_S = 5.0
_RETRIES = 2


class CandidateError(Exception):
    """The program raised an exception of its own class that derives from no built-in but
    ``Exception`` (a subclass of, say, ``ValueError`` arrives as a genuine ``ValueError``)."""


class CandidateGone(BaseException):
    """The program is no longer running (it exited, crashed, ran out of time or memory), or a call
    raised ``SystemExit``/``KeyboardInterrupt`` (a ``BaseException`` that is not an ``Exception``).

    A ``BaseException`` on purpose: test code's ``except Exception`` must not swallow it.
    """


class Session:
    def __init__(self, pool, job: dict, limits) -> None:
        self._pool, self._job, self._limits = pool, job, limits
        self._worker = None
        self._sock: socket.socket | None = None
        self._gone = ""
        self.ready = False
        self.names: frozenset[str] = frozenset()
        self.result: ExecResult | None = None
        self.calls = (
            0  # requests sent to the program (the harness tells its own faults from the program's)
        )

    def __enter__(self) -> Session:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start the program; afterwards ``ready`` says whether its module code ran without error."""
        from passband.sandbox.pool import SandboxError, WorkerLost

        for attempt in range(_RETRIES + 1):
            self._worker = self._pool._acquire()
            # The clock starts once a worker is ours: time spent queueing behind other callers'
            # programs (16 threads, 2 workers) is not this program's time.
            self._deadline = time.monotonic() + self._limits.timeout_s + _GRACE_S
            wire.reset_budget()  # its replies' fractions, counted across all of them
            self._sock, theirs = socket.socketpair()
            try:
                self._worker.submit(self._job, theirs.fileno())
            except WorkerLost:
                self._abandon()
                continue
            finally:
                theirs.close()
            try:
                hello = self._recv()
            except CandidateGone:
                if self._finish() or attempt == _RETRIES:
                    return  # the program itself ended (or the sandbox is beyond repair)
                continue  # the worker died under us: run the job again on a fresh one
            self.ready = bool(hello.get("ready"))
            self.names = frozenset(n for n in hello.get("names", ()) if isinstance(n, str))
            if not self.ready:
                self._gone = "the program failed while loading"
            return
        raise SandboxError(
            f"could not hand the program to a sandbox worker in {_RETRIES + 1} attempts"
        )

    @property
    def gone(self) -> str:
        """Why the program stopped answering ("" while it answers)."""
        return self._gone

    def lookup(self, name: str) -> RemoteObject:
        # a CapWords name in the test (``UnionFind(5)``, ``Solution().f``) is a class the test
        # builds objects of: the objects it makes are under test (``_queries``)
        return RemoteObject(self, name=name, made=_CLASS if name[:1].isupper() else "")

    def output(self, start: bool = False) -> tuple[str, str]:
        """What the program printed to stdout and stderr since the last read, from the first
        ``start`` on (a test's ``capsys``; never while it loaded): ``capsys.readouterr()``. Not
        counted in ``calls``: reading the output asks the program nothing."""
        try:
            value = self._request({"op": "output", "start": bool(start)}, counted=False)
        except CandidateGone:
            raise
        except BaseException as exc:  # the program's code ran and raised: its failure, never the
            # reference's (an ImportError here read as the test's own missing module: ``error``)
            raise CandidateError(f"reading its output failed: {type(exc).__name__}") from None
        if not (isinstance(value, list) and len(value) == 2 and all(type(v) is str for v in value)):
            raise CandidateError("malformed output")
        return value[0], value[1]

    def _request(
        self, request: dict, passed: tuple | None = None, made: str = "", counted: bool = True
    ) -> object:
        if self._gone:
            raise CandidateGone(self._gone)
        self.calls += counted
        try:
            self._sock.settimeout(max(self._deadline - time.monotonic(), 0.001))
            wire.send(self._sock, request)
            reply = self._recv()
        except (wire.WireError, OSError) as exc:
            self._went_away(exc)
        if "raised" in reply:
            raised = reply["raised"]
            exc = (
                _exception(*raised[:3])
                if isinstance(raised, list) and raised
                else CandidateError("raised")
            )
            if isinstance(exc, (StopIteration, StopAsyncIteration)) and request.get("op") != "next":
                # as PEP 479 does for generators: a StopIteration escaping a call would silently end
                # the test's own map()/all() loop, so that everything after it "passed"
                exc = RuntimeError(f"the program raised {type(exc).__name__}: {exc}")
            raise exc
        try:
            value = wire.decode(
                reply["value"],
                lambda h: RemoteObject(self, handle=h, made=made),
                limit=wire.RESULT_DEPTH,
                # until 2 s past the program's own time (the item's grace is 5 s), or 1 s
                budget_s=max(self._deadline - _GRACE_S + 2 - time.monotonic(), 1),
            )
        except (wire.WireError, KeyError, TypeError) as exc:
            raise CandidateError(f"malformed result: {exc}") from None
        if passed is not None and isinstance(reply.get("args_after"), list):
            write_back(self, reply["args_after"], *passed)
        return value

    def _recv(self) -> dict:
        try:
            self._sock.settimeout(max(self._deadline - time.monotonic(), 0.001))
            msg, _ = wire.recv(self._sock)
        except (wire.WireError, OSError) as exc:
            self._went_away(exc)
        if not isinstance(msg, dict):
            self._gone = "the program broke the protocol"
            raise CandidateGone(self._gone)
        return msg

    def _went_away(self, exc: BaseException):
        """The channel broke: ask the worker what happened to the program, then raise CandidateGone."""
        if not self._gone and self.ready and self._worker is not None:
            self._finish()
            r = self.result
            if r is not None and not self._gone:
                self._gone = (
                    "the program ran out of memory"
                    if r.memory_exceeded
                    else f"the program exited with status {r.exit_code}"
                    if r.exit_code >= 0
                    else f"the program was killed by signal {-r.exit_code}"
                )
        self._gone = self._gone or f"the program stopped answering ({exc})"
        raise CandidateGone(self._gone) from None

    def encode_args(self, value: object) -> list:
        def ref(obj: object) -> int:
            if isinstance(obj, RemoteObject) and obj._session is self:
                return obj._handle_id()
            raise wire.Unencodable(f"cannot pass a {type(obj).__name__} into the sandbox")

        return wire.encode(value, ref)

    def close(self) -> ExecResult | None:
        """End the program and return its ``ExecResult`` (stdout, stderr, timed_out, ...)."""
        if self._worker is None:
            return self.result
        try:
            self._sock.settimeout(0.5)
            wire.send(self._sock, {"op": "exit"})
        except (wire.WireError, OSError):
            pass
        self._finish()
        return self.result

    def _finish(self) -> bool:
        """Collect the worker's report; False when the worker itself was lost."""
        from passband.sandbox.pool import WorkerLost

        if self._worker is None:
            return True
        self._sock.close()
        worker, self._worker = self._worker, None
        try:
            self.result = worker.result(max(self._deadline - time.monotonic(), 0.001))
        except WorkerLost:
            self._pool._discard(worker)
            self.result = ExecResult(-9, "", "", setup_error="sandbox worker lost")
            return False
        self._pool._release(worker)
        if self.result.timed_out:
            self._gone = "the program ran out of time"
        return True

    def _abandon(self) -> None:
        self._sock.close()
        self._pool._discard(self._worker)
        self._worker = None


_CLASS, _MADE, _METHOD = "class", "made", "method"  # ``RemoteObject._made``: what follows which
# calling a class makes an object (``_MADE``: it answers queries freely); what a method or a
# class's static method or factory returns is an answer (``_queries.query``)
_CALLED = {_CLASS: _MADE}
_READ = {_CLASS: _METHOD, _MADE: _METHOD, _METHOD: _METHOD}  # an attribute of a class, an object


class RemoteObject:
    """A value that stays inside the sandbox: it can be called, read (attributes, items, iteration,
    length) and passed back in, but it equals only itself and has no truth value."""

    __slots__ = ("_session", "_name", "_handle", "_made")

    def __init__(
        self,
        session: Session,
        *,
        name: str | None = None,
        handle: int | None = None,
        made: str = "",
    ) -> None:
        self._session, self._name, self._handle = session, name, handle
        self._made = made  # reached from a class the test names (see ``_BUILTIN_QUERIES``)

    def _handle_id(self) -> int:
        if self._handle is None:
            value = self._session._request({"op": "global", "name": self._name})
            self._handle = value._handle
        return self._handle

    def __await__(self):
        """A coroutine of the program (``await candidate(1)``): the harness cannot run it, so the
        check is the harness's failure (an ``error``), not a wrong program."""
        raise wire.Unencodable("the program returned a coroutine; the harness cannot await it")

    def __call__(self, *args, **kwargs):
        s = self._session
        return s._request(
            {
                "op": "call",
                "handle": self._handle_id(),
                "args": s.encode_args(list(args)),
                "kwargs": s.encode_args(kwargs),
            },
            passed=(args, kwargs),
            made=_CALLED.get(self._made, ""),
        )

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr in BUILTIN_PREDICATES:  # greet('Bob').startswith('Hello'): the object's own
            raise refused(attr)  # method would answer True for any str a test expects
        value = self._session._request(
            {"op": "getattr", "handle": self._handle_id(), "attr": attr},
            made=_READ.get(self._made, ""),
        )
        if (
            attr in BUILTIN_QUERIES
            and self._made not in (_CLASS, _MADE)
            and isinstance(value, RemoteObject)
        ):
            return query(attr, value)  # find/index/count of a returned object: see there
        return value

    # Iteration, len() and indexing are answered by the program about its own object, as plain
    # data; equality and truth are not delegated (see the module docstring).
    def __iter__(self):
        return iter(self._session._request({"op": "iter", "handle": self._handle_id()}))

    def __len__(self) -> int:
        return self._session._request({"op": "len", "handle": self._handle_id()})

    def __getitem__(self, key):
        s = self._session
        return s._request(
            {"op": "getitem", "handle": self._handle_id(), "key": s.encode_args(key)},
        )

    def __next__(self):
        return self._session._request({"op": "next", "handle": self._handle_id()})

    def __setattr__(self, attr: str, value) -> None:
        if attr in RemoteObject.__slots__:
            object.__setattr__(self, attr, value)
            return
        s = self._session
        s._request(
            {
                "op": "setattr",
                "handle": self._handle_id(),
                "attr": attr,
                "value": s.encode_args(value),
            }
        )

    def __setitem__(self, key, value) -> None:
        s = self._session
        s._request(
            {
                "op": "setitem",
                "handle": self._handle_id(),
                "key": s.encode_args(key),
                "value": s.encode_args(value),
            }
        )

    # Conversions the program answers for its own object; the answer must be of the built-in type
    # asked for (a float for float(), ...), so they give nothing a returned plain value would not.
    def _convert(self, op: str, kind: type):
        value = self._session._request({"op": op, "handle": self._handle_id()})
        if type(value) is not kind:
            raise TypeError(f"{op}() of a sandboxed object returned {type(value).__name__}")
        return value

    def __str__(self) -> str:
        return self._convert("str", str)

    def __float__(self) -> float:
        return self._convert("float", float)

    def __int__(self) -> int:
        return self._convert("int", int)

    def __index__(self) -> int:
        return self._convert("index", int)

    def __bool__(self) -> bool:
        raise TypeError("a sandboxed object of a non-plain type has no truth value in the harness")

    def __repr__(self) -> str:
        return f"<sandboxed {self._name or 'object'}>"


def _exception(name: object, message: object, bases: object = ()) -> BaseException:
    """A genuine built-in exception for what the program raised: its own class when built-in, else
        the first built-in ``Exception`` class it derives from (the program says which; claiming any
        built-in is no more than raising it). ``SystemExit`` and the like become ``CandidateGone``, which
    test code's ``except Exception`` does not catch, as in Python; anything else ``CandidateError``."""
    names = [str(name)] + [str(b) for b in (bases if isinstance(bases, list) else [])[:8]]
    if not any(
        isinstance(getattr(builtins, n, None), type) and issubclass(getattr(builtins, n), Exception)
        for n in names
    ):  # SystemExit, KeyboardInterrupt...: like in Python, no except Exception
        return CandidateGone(
            f"the program raised {name} during a call"
        )  # catches it; the test fails
    for candidate in names:
        cls = getattr(builtins, candidate, None)
        if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins":
            if cls is Exception and candidate != str(name):
                break  # only Exception in common: keep the program's class name visible
            try:
                return cls(str(message) if candidate == str(name) else f"{name}: {message}")
            except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError wants five arguments
                pass
    return CandidateError(f"{name}: {message}")
