"""Watch a run: stream its output with caps, enforce its deadline, notice a harness that hangs up.

Part of the zygote (standard library only). The run writes stdout and stderr into pipes, as any
program expects; the zygote moves what arrives into two memfds with ``splice``, in the kernel, and
after the run copies them to the harness the same way (``sendfile``), so no run's output ever lies
in the zygote's memory for a later run to inherit. Past the deadline or past an output cap the
run's process group (and, being the init of its PID namespace, everything in it) is SIGKILLed.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import time


class HarnessGone(Exception):
    """The harness closed the control socket in the middle of a run."""


class Watch:
    """Stream the run's pipes into ``outputs`` (capped), enforce the deadline, wait for its exit."""

    def __init__(self, pid, pipes, outputs, setup_r, ctrl, limits, start):
        self.pid, self.ctrl, self.limits, self.start = pid, ctrl, limits, start
        self.setup_r, self.set_up = setup_r, None
        self.sinks = dict(zip(pipes, outputs))
        self.sizes = dict.fromkeys(pipes, 0)
        self.truncated = dict.fromkeys(pipes, False)
        self.status = None
        self.timed_out = False

    def wait(self, reap) -> dict:
        """The run's metadata once it has exited and ``reap`` has cleared what it left behind:
        exit code, timed out, duration, and per stream the bytes written to its memfd and
        whether it went past its cap."""
        sel = selectors.DefaultSelector()
        pidfd = os.pidfd_open(self.pid)
        try:
            for fd in self.sinks:
                os.set_blocking(fd, False)
                sel.register(fd, selectors.EVENT_READ)
            sel.register(pidfd, selectors.EVENT_READ)
            # the control socket holds the child's job until it has read it: it is watched for
            # the harness's hang-up once the child reports its setup done (or failed)
            sel.register(self.setup_r, selectors.EVENT_READ)
            self._loop(sel, pidfd, reap)
        finally:
            sel.close()
            os.close(pidfd)
        if self.set_up is None:  # the run ended before its report was read: it is there now
            self.set_up = os.read(self.setup_r, 1) == b"1"
        code = (
            os.waitstatus_to_exitcode(self.status) if self.status is not None else -signal.SIGKILL
        )
        (out, err), (t_out, t_err) = self.sizes.values(), self.truncated.values()
        return {
            "exit_code": code,
            "set_up": self.set_up or self.timed_out,  # killed mid-setup: a timeout
            "timed_out": self.timed_out,
            "duration_s": time.monotonic() - self.start,
            "stdout_bytes": out,
            "stderr_bytes": err,
            "stdout_truncated": t_out,
            "stderr_truncated": t_err,
        }

    def _loop(self, sel, pidfd, reap) -> None:
        deadline = self.start + self.limits["timeout_s"]
        open_streams = set(self.sinks)
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
                elif key.fd == self.setup_r:
                    self.set_up = os.read(self.setup_r, 1) == b"1"  # the only proof accepted
                    sel.unregister(self.setup_r)
                    sel.register(self.ctrl, selectors.EVENT_READ)
                elif key.fileobj is self.ctrl:
                    if not self.ctrl.recv(1, socket.MSG_PEEK):  # the harness went away
                        self._kill()
                        os.waitpid(self.pid, 0)
                        self.status = 0
                        raise HarnessGone()
                    sel.unregister(self.ctrl)
                else:
                    self._move(key.fd, sel, open_streams)

    def _move(self, fd, sel, open_streams) -> None:
        """What the pipe holds, into its memfd, up to the cap; one byte past it ends the run."""
        room = self.limits["max_output_bytes"] - self.sizes[fd]
        try:
            if room > 0:
                moved = os.splice(fd, self.sinks[fd], min(room, 1 << 16))
            else:  # a single byte is a cached object: no output lands in our memory
                moved = len(os.read(fd, 1))
                if moved:
                    self.truncated[fd] = True
                    self._kill()  # past the cap the run is over: nobody will read the rest
                    moved = 0
        except BlockingIOError:
            return
        if not moved:
            sel.unregister(fd)
            open_streams.discard(fd)
            return
        self.sizes[fd] += moved

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
