"""Stream a run's stdout/stderr with caps, enforce its deadline, and wait for its exit.

Part of the zygote (standard library only). Past the deadline or past an output cap the run's
process group (and, being the init of its PID namespace, everything in it) is SIGKILLed.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import time


class HarnessGone(Exception):
    """The harness closed the control socket in the middle of a run."""


class Collector:
    """Stream the child's stdout/stderr (capped), enforce the deadline, wait for its exit."""

    def __init__(self, pid, out_r, err_r, ctrl, limits, start):
        self.pid, self.ctrl, self.limits, self.start = pid, ctrl, limits, start
        self.streams = {out_r: bytearray(), err_r: bytearray()}
        self.names = {out_r: "stdout", err_r: "stderr"}
        self.truncated = {out_r: False, err_r: False}
        self.status = None
        self.timed_out = False

    def collect(self, reap) -> dict:
        sel = selectors.DefaultSelector()
        pidfd = os.pidfd_open(self.pid)
        try:
            for fd in self.streams:
                os.set_blocking(fd, False)
                sel.register(fd, selectors.EVENT_READ)
            sel.register(pidfd, selectors.EVENT_READ)
            sel.register(self.ctrl, selectors.EVENT_READ)
            self._loop(sel, pidfd, reap)
        finally:
            sel.close()
            os.close(pidfd)
        code = (
            os.waitstatus_to_exitcode(self.status) if self.status is not None else -signal.SIGKILL
        )
        out, err = self.streams.values()
        t_out, t_err = self.truncated.values()
        return {
            "exit_code": code,
            "stdout": out.decode("utf-8", "replace"),
            "stderr": err.decode("utf-8", "replace"),
            "timed_out": self.timed_out,
            "duration_s": time.monotonic() - self.start,
            "stdout_truncated": t_out,
            "stderr_truncated": t_err,
        }

    def _loop(self, sel, pidfd, reap) -> None:
        deadline = self.start + self.limits["timeout_s"]
        open_streams = set(self.streams)
        drain_until = None
        while open_streams or self.status is None:
            now = time.monotonic()
            if self.status is None and now >= deadline and not self.timed_out:
                self.timed_out = True
                self._kill()
            if drain_until is not None and now >= drain_until:
                break  # a stray still holds a pipe open (no PID namespace): stop listening
            wait = (deadline - now) if not self.timed_out else 0.5
            events = sel.select(
                timeout=max(wait, 0.0) if drain_until is None else drain_until - now
            )
            for key, _ in events:
                if key.fd == pidfd:
                    self.status = os.waitpid(self.pid, 0)[1]
                    sel.unregister(pidfd)
                    reap()
                    drain_until = time.monotonic() + 1.0
                elif key.fileobj is self.ctrl:
                    if not self.ctrl.recv(
                        1, socket.MSG_PEEK
                    ):  # the harness went away: stop everything
                        self._kill()
                        os.waitpid(self.pid, 0)
                        self.status = 0
                        raise HarnessGone()
                    sel.unregister(self.ctrl)
                else:
                    self._read(key.fd, sel, open_streams)

    def _read(self, fd, sel, open_streams) -> None:
        data = os.read(fd, 1 << 16)
        if not data:
            sel.unregister(fd)
            open_streams.discard(fd)
            return
        buf, cap = self.streams[fd], self.limits["max_output_bytes"]
        room = cap - len(buf)
        buf += data[: max(room, 0)]
        if len(data) > room and not self.truncated[fd]:
            self.truncated[fd] = True
            self._kill()  # past the cap the run is over: nobody will read the rest

    def _kill(self) -> None:
        if self.status is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
