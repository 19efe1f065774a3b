"""The pytest fixtures the harness gives test functions: ``capsys`` and ``capfd``.

The program prints in its sandbox, so these read what it printed from there
(``Session.output``): ``readouterr()`` returns what it printed since the fixture was made or last
read, as pytest's does; what it printed while it loaded is not the test's. ``capfd`` reads the
same streams (``sys.stdout`` / ``sys.stderr``): a program that writes to file descriptor 1
directly shows nothing there. Any other fixture (``monkeypatch``, ``tmp_path``) is still refused:
the test is ``error``, never a pass.
"""

from __future__ import annotations

import contextlib
from collections import namedtuple
from collections.abc import Callable

from passband.sandbox import Session

__all__ = ["CaptureFixture", "CaptureResult", "fixtures"]

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
