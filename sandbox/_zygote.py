"""The warm worker: a long-lived interpreter that forks one sandboxed child per run.

Started by ``passband.sandbox.pool`` as ``python -I _zygote.py FD``, where FD is its end of a
control socket. Standard library only. At start it enters network and mount namespaces of its own
(so every child is born without network, and run directories live on a private size-limited tmpfs),
joins its own pids/memory cgroups, probes each isolation mechanism once, and reports what is active
(all of that in ``_zygote_setup.py``). Without root it first becomes root of a user namespace of its
own, so the namespaces still work. Per run (``serve_one``) it creates a temporary working directory
and forks the child into a fresh PID namespace (the child is that namespace's init: when it exits
the kernel kills everything it left behind). The harness sends the job's limits in a frame of their
own, which the worker applies; the child reads the job itself. The worker moves the child's output
from its pipes into memfds in the kernel (``splice``) with caps, enforces the wall-clock deadline
(``_collect.py``), removes the directory and copies the output to the harness in the kernel
(``sendfile``). The worker itself never holds a job or a result, so no run inherits another's code,
stdin or output.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import signal  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402

import _child  # noqa: E402
import _isolation as iso  # noqa: E402
import _wire as wire  # noqa: E402
from _collect import HarnessGone, Watch  # noqa: E402
from _rmtree import remove_tree  # noqa: E402
from _zygote_setup import Setup, oom_kills  # noqa: E402

# Warm modules: a candidate's ``import math`` should cost nothing. Not ``random`` (nor
# ``statistics`` or ``tempfile``, which import it) or ``subprocess`` (``threading``): they register
# hooks that run in every forked child (a reseed, thread bookkeeping), about 0.4 ms of every run's
# fork, more than their import costs the few programs that use them.
for _name in (
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "typing",
    "json",
    "copy",
    "operator",
    "fractions",
    "decimal",
    "datetime",
    "dataclasses",
    "array",
    "hashlib",
    "traceback",
    "fcntl",
    "resource",
):
    __import__(_name)

_SLACK_MB = 64  # the memory cgroup also holds the copied pages of the interpreter itself


def disk_size(limits: dict, memcg: bool) -> int:
    """MB of the run's tmpfs: ``disk_mb``, and under a memory cgroup at most half of
    ``memory_mb``. Its files are memory charged to the cgroup the zygote shares, and they outlive
    the run: a program that filled 256 MB of files and then its memory left a 128 MB row's zygote
    no room once the program was killed, and the worker was lost (a masked ``error`` for a wrong
    program). With half, the files and the zygote fit after any kill."""
    return min(limits["disk_mb"], max(1, limits["memory_mb"] // 2)) if memcg else limits["disk_mb"]


class Zygote(Setup):
    """Forks one sandboxed child per run, inside the isolation ``Setup`` entered at start."""

    def __init__(self) -> None:
        super().__init__()
        self._cg_values: dict[tuple[str, str], str] = {}  # limits written last, per cgroup file
        self._runs = 0

    # ---- one run -----------------------------------------------------------------------------
    def serve_one(self, ctrl: socket.socket) -> bool:
        """Serve one run; False once the harness has gone.

        The child is forked before the job is read and reads the job itself, so the zygote never
        holds a job or a result and each child, a fresh copy of the zygote, inherits nothing of
        earlier runs: no other completion's code, stdin or output (a review found earlier runs'
        outputs, other completions' answers to the same case, in a child's heap when the zygote
        read them). The zygote reads only the job's limits, sent ahead of it in a frame of their
        own; the child's stdout and stderr are spliced into memfds that the zygote copies to the
        harness in the kernel after the header."""
        try:  # the job's limits come first, in a frame of their own; the job is the child's
            limits = _limits(wire.recv(ctrl)[0])
        except (OSError, wire.WireError):
            return False
        if limits is None:
            return False  # not the frame expected (a job a dead child left unread): stop here
        outputs = [os.memfd_create("passband-stdout"), os.memfd_create("passband-stderr")]
        try:
            head = self._run(ctrl, outputs, limits)
            if head is None:
                return False
            wire.send(ctrl, head)
            return all(
                _send_file(ctrl, fd, head[f"{name}_bytes"])
                for fd, name in zip(outputs, ("stdout", "stderr"))
            )
        except (OSError, wire.WireError):
            return False
        finally:
            for fd in outputs:
                os.close(fd)

    def _run(self, ctrl: socket.socket, outputs: list[int], limits: dict) -> dict | None:
        """The header of one run (its output left in ``outputs``); None if the harness went away
        during the run."""
        start = time.monotonic()
        self._runs += 1
        workdir = os.path.join(self.base, f"run-{self._runs}")  # the base is private and empty
        os.mkdir(workdir, 0o700)
        (setup_r, setup_w), (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe(), os.pipe()
        mine, theirs = [setup_r, out_r, err_r], [setup_w, out_w, err_w]
        pid, watch = 0, None
        try:
            try:
                oom_before, refuse = self._memcg_prepare(limits), ""
            except OSError as exc:  # fail closed: the child reads its job and reports this
                oom_before, refuse = self.oom_seen, f"cannot apply the run's limits: {exc}"
            fds = {1: out_w, 2: err_w, _child.SETUP_FD: setup_w}
            if self.ruleset >= 0:
                fds[_child.LANDLOCK_FD] = self.ruleset
            paths = {"workdir": workdir, "zygote_dir": _HERE, "refused": refuse}
            ours = mine + outputs  # the child closes its copies before it reads the job
            pid = self._fork(lambda: _child.receive(ctrl, paths, self.plan, fds, ours))
            for fd in theirs:
                os.close(fd)
            theirs.clear()
            watch = Watch(pid, [out_r, err_r], outputs, setup_r, ctrl, limits, start)
            head = watch.wait(self._reap_strays)
            head["oom"] = self._oom_since(oom_before)
            return head
        except HarnessGone:
            return None
        finally:
            if pid and (watch is None or watch.status is None):  # an error mid-run: kill it
                _kill_and_wait(pid)
            for fd in mine + theirs:
                os.close(fd)
            self._reap_strays()
            # any depth (shutil's recursion raised here); the run could write anywhere in the
            # base (landlock allows the runs' parent), so all of it goes, not only its directory
            _empty(self.base, self.base_mode)

    def _fork(self, child) -> int:
        if self.pidns_fd >= 0:
            iso.unshare(iso.CLONE_NEWPID)
        try:
            pid = os.fork()
        except OSError:
            if self.pidns_fd >= 0:
                iso.setns(self.pidns_fd, iso.CLONE_NEWPID)
            raise
        if pid == 0:
            child()  # never returns
        if self.pidns_fd >= 0:
            iso.setns(self.pidns_fd, iso.CLONE_NEWPID)
        return pid

    def _memcg_prepare(self, limits: dict) -> int:
        if self.pidscg:
            # + the zygote itself
            self._cg_set(self.pidscg, "pids.max", str(limits["max_processes"] + 1))
        size = disk_size(limits, bool(self.memcg))
        if self.tmpfs and self._cg_values.get(("tmpfs", "size")) != size:
            flags = iso.MS_REMOUNT | iso.MS_NOSUID | iso.MS_NODEV
            iso.mount(None, self.base, None, flags, f"size={size}m")
            self._cg_values[("tmpfs", "size")] = size
        if not self.memcg:
            return 0
        self._cg_set(
            self.memcg, "memory.limit_in_bytes", str((limits["memory_mb"] + _SLACK_MB) << 20)
        )
        return self.oom_seen

    def _cg_set(self, path: str, key: str, value: str) -> None:
        if self._cg_values.get((path, key)) != value:
            try:
                iso.cgroup_write(path, key, value)
            except OSError as exc:  # the previous limit may be looser: the run is refused
                raise OSError(exc.errno, f"cannot set {key} to {value}: {exc.strerror}") from None
            self._cg_values[(path, key)] = value

    def _oom_since(self, oom_before: int) -> bool:
        # One read per run: an OOM kill may hit any process of the run, even if its main one exits 0.
        if not self.memcg:
            return False
        self.oom_seen = oom_kills(self.memcg)
        return self.oom_seen > oom_before

    def _reap_strays(self) -> None:
        """Kill and reap every process re-parented to us: the fallback when there is no PID
        namespace."""
        if self.pidns_fd >= 0:
            return  # orphans of a run are re-parented to the run's init, never to us
        for _ in range(100):
            try:
                with open("/proc/thread-self/children") as fh:
                    children = [int(p) for p in fh.read().split()]
            except OSError:
                children = []
            for pid in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            reaped = False
            while True:
                try:
                    pid, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                reaped = True
            if not children and not reaped:
                return
            time.sleep(0.001)


def _send_file(sock: socket.socket, fd: int, size: int) -> bool:
    """The first ``size`` bytes of ``fd`` to ``sock``, copied in the kernel; False if the harness
    has gone."""
    offset = 0
    try:
        while offset < size:
            sent = os.sendfile(sock.fileno(), fd, offset, size - offset)
            if sent == 0:
                return False  # the file shrank: cannot happen to a memfd only we can reach
            offset += sent
    except OSError:
        return False
    return True


def _empty(base: str, mode: int) -> None:
    """Remove everything in ``base`` (directories at any depth, files, links, fifos) and undo what
    a run can do to ``base`` itself: its mode (a run owns it) and its extended attributes (data
    that would outlive the run)."""
    os.chmod(base, mode)
    for name in _quiet_list(os.listxattr, base):
        try:
            os.removexattr(base, name)
        except OSError:
            pass
    for entry in os.scandir(base):
        if entry.is_dir(follow_symlinks=False):
            remove_tree(entry.path)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _kill_and_wait(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def _quiet_list(op, path: str) -> list:
    try:
        return op(path)
    except OSError:
        return []


def _limits(msg: object) -> dict | None:
    """The limits of the next job, from the harness's first frame; None if it is not that frame."""
    if not isinstance(msg, dict) or set(msg) != {"limits"} or not isinstance(msg["limits"], dict):
        return None
    limits = msg["limits"]
    counts = ("memory_mb", "max_processes", "max_output_bytes", "disk_mb")
    if type(limits.get("timeout_s")) not in (int, float):
        return None
    return limits if all(type(limits.get(key)) is int for key in counts) else None


def _user_namespace(ctrl_fd: int) -> str:
    """Without root, become root of a new user namespace (and init of a new PID namespace) so that
    the namespaces below are allowed. The original process stays behind only to wait and pass on
    the exit status; it drops its copy of the control socket."""
    if os.geteuid() == 0:
        return "not needed: running as root"
    try:
        uid = iso.enter_user_namespace()
    except OSError as exc:
        return f"inactive: {exc}"
    pid = os.fork()
    if pid:
        os.close(ctrl_fd)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        os._exit(code if code >= 0 else 1)
    return f"active: not root, so the worker is root of its own user namespace (uid {uid} outside)"


def main() -> None:
    userns = _user_namespace(int(sys.argv[1]))
    ctrl = socket.socket(fileno=int(sys.argv[1]))
    zygote = Zygote()
    zygote.report["user namespace"] = userns
    try:
        wire.send(
            ctrl,
            {
                "hello": True,
                "pid": os.getpid(),
                "report": zygote.report,
                "python": sys.executable,
                "leftovers": {"dirs": [zygote.base], "cgroups": zygote.cgroup_dirs},
            },
        )
        while zygote.serve_one(ctrl):
            pass
    finally:
        zygote.close()


if __name__ == "__main__":
    main()
