"""What the harness gives test code besides its names: ``capsys`` / ``capfd``, and a quiet
``print``.

The program prints in its sandbox, so these read what it printed from there
(``Session.output``): ``readouterr()`` returns what it printed since the fixture was made or last
read, as pytest's does; what it printed while it loaded is not the test's. ``capfd`` reads the
same streams (``sys.stdout`` / ``sys.stderr``): a program that writes to file descriptor 1
directly shows nothing there. Any other fixture (``monkeypatch``, ``tmp_path``) is still refused:
the test is ``error``, never a pass. The test code's own ``print`` to the console is dropped
(pytest captures it; here a dataset's debug prints would fill the trainer's output once per answer
graded); a ``print`` to a file writes.
"""

from __future__ import annotations

import builtins
import contextlib
import sys
from collections import namedtuple
from collections.abc import Callable

from passband.sandbox import Session

__all__ = ["CaptureFixture", "CaptureResult", "fixtures", "quiet_print"]

CaptureResult = namedtuple("CaptureResult", "out err")


class CaptureFixture:
    """``capsys`` / ``capfd`` for a program in the sandbox."""

    def __init__(self, session: Session) -> None:
        self._session = session
        session.output(start=True)  # capture from here: what it printed before is not the test's

    def readouterr(self) -> CaptureResult:
        return CaptureResult(*self._session.output())

    @contextlib.contextmanager
    def disabled(self):
        yield


def fixtures(session: Session) -> dict[str, Callable[[], object]]:
    """Fixture name -> a maker, called once for each test that asks for it."""
    make = lambda: CaptureFixture(session)  # noqa: E731 - one maker for both names
    return {"capsys": make, "capfd": make}


class _Null:
    """A stream that keeps nothing (``print`` still checks its arguments and calls ``str``)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def quiet_print(console: tuple = ()):
    """``print`` for test code: what goes to the console (``console``, the streams when the
    harness began, or the process's own) is dropped; what goes anywhere else, a file or a stream
    the test swapped in (``redirect_stdout``), is written as ``print`` writes it."""
    console = (*console, sys.__stdout__, sys.__stderr__)
    sink = _Null()

    def print_(*args, file=None, **kwargs) -> None:
        target = sys.stdout if file is None else file
        quiet = any(target is c for c in console)
        builtins.print(*args, file=sink if quiet else target, **kwargs)

    return print_
