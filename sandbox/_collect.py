"""Watch a run: enforce its deadline and output caps, notice a harness that hangs up, wait for its exit.

Part of the zygote (standard library only). The run writes its stdout and stderr into two memfds
that the zygote never reads: it only looks at their sizes, and copies their bytes to the harness
in the kernel when the run is over (``sendfile``), so no run's output ever lies in the zygote's
memory for a later run to inherit. Past the deadline or past an output cap the run's process group
(and, being the init of its PID namespace, everything in it) is SIGKILLed.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import time

# How often the output sizes are looked at while a run is alive: soon after the start (most runs
# take a few milliseconds), then less often. Between two looks a run can write past its cap only
# as far as its memory limit lets it (memfd pages are charged to the run's memory cgroup).
_FIRST_LOOK_S = 0.002
_LOOK_EVERY_S = 0.02


class HarnessGone(Exception):
    """The harness closed the control socket in the middle of a run."""


class Watch:
    """Enforce the deadline and the output caps of the run ``pid``, then wait for its exit."""

    def __init__(self, pid, outputs, ctrl, limits, start):
        self.pid, self.outputs, self.ctrl = pid, outputs, ctrl
        self.limits, self.start = limits, start
        self.status = None
        self.timed_out = self.killed = False

    def wait(self, reap) -> dict:
        """The run's metadata once it has exited and ``reap`` has cleared what it left behind:
        exit code, timed out, duration, and per stream the number of bytes to send and whether
        the stream went past its cap."""
        sel = selectors.DefaultSelector()
        pidfd = os.pidfd_open(self.pid)
        try:
            sel.register(pidfd, selectors.EVENT_READ)
            sel.register(self.ctrl, selectors.EVENT_READ)
            self._loop(sel, pidfd, reap)
        finally:
            sel.close()
            os.close(pidfd)
        code = (
            os.waitstatus_to_exitcode(self.status) if self.status is not None else -signal.SIGKILL
        )
        cap = self.limits["max_output_bytes"]
        sizes = [os.fstat(fd).st_size for fd in self.outputs]
        return {
            "exit_code": code,
            "timed_out": self.timed_out,
            "duration_s": time.monotonic() - self.start,
            "stdout_bytes": min(sizes[0], cap),
            "stderr_bytes": min(sizes[1], cap),
            "stdout_truncated": sizes[0] > cap,
            "stderr_truncated": sizes[1] > cap,
        }

    def _loop(self, sel, pidfd, reap) -> None:
        deadline = self.start + self.limits["timeout_s"]
        look = _FIRST_LOOK_S
        while self.status is None:
            now = time.monotonic()
            if not self.killed and now >= deadline:
                self.timed_out = True
                self._kill()
            elif not self.killed and self._past_cap():
                self._kill()  # past the cap the run is over: nobody will read the rest
            wait = min(deadline - now, look) if not self.killed else 0.5
            look = _LOOK_EVERY_S
            for key, _ in sel.select(timeout=max(wait, 0.0)):
                if key.fd == pidfd:
                    self.status = os.waitpid(self.pid, 0)[1]
                    reap()
                elif not self.ctrl.recv(1, socket.MSG_PEEK):  # the harness went away
                    self._kill()
                    os.waitpid(self.pid, 0)
                    self.status = 0
                    raise HarnessGone()
                else:
                    sel.unregister(self.ctrl)

    def _past_cap(self) -> bool:
        cap = self.limits["max_output_bytes"]
        return any(os.fstat(fd).st_size > cap for fd in self.outputs)

    def _kill(self) -> None:
        self.killed = True
        if self.status is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
