"""The warm worker: a long-lived interpreter that forks one sandboxed child per run.

Started by ``passband.sandbox.pool`` as ``python -I _zygote.py FD``, where FD is its end of a
control socket. Standard library only. At start it enters network and mount namespaces of its own
(so every child is born without network, and run directories live on a private size-limited tmpfs),
joins its own pids/memory cgroups, probes each isolation mechanism once, and reports what is active
(all of that in ``_zygote_setup.py``).
Without root it first becomes root of a user namespace of its own, so the namespaces still work.
Per run it forks a runner (``serve_one``), which reads the job, creates a temporary working
directory, forks the child into a fresh PID namespace (the child is that namespace's init: when it
exits the kernel kills everything it left behind), streams stdout/stderr with caps, enforces the
wall-clock deadline, removes the directory and exits; the worker itself never holds a job or a
result, so no run inherits another's code, stdin or output.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import json  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import _child  # noqa: E402
import _isolation as iso  # noqa: E402
import _wire as wire  # noqa: E402
from _collect import Collector, HarnessGone  # noqa: E402
from _rmtree import remove_tree  # noqa: E402
from _zygote_setup import _PR_SET_CHILD_SUBREAPER, Setup, oom_kills  # noqa: E402

# Warm modules: a candidate's ``import math`` should cost nothing.
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
    "random",
    "copy",
    "operator",
    "fractions",
    "decimal",
    "statistics",
    "datetime",
    "dataclasses",
    "array",
    "hashlib",
    "traceback",
    "subprocess",
    "fcntl",
    "resource",
):
    __import__(_name)

_SLACK_MB = 64  # the memory cgroup also holds the copied pages of the interpreter itself


class Zygote(Setup):
    """Forks one sandboxed child per run, inside the isolation ``Setup`` entered at start."""

    def __init__(self) -> None:
        super().__init__()
        self._cg_values: dict[tuple[str, str], str] = {}  # limits written last, per cgroup file

    # ---- one run -----------------------------------------------------------------------------
    def run(self, job: dict, rpc_fd: int | None, ctrl: socket.socket) -> dict:
        start = time.monotonic()
        workdir = tempfile.mkdtemp(prefix="run-", dir=self.base)
        opened: list[int] = []
        try:
            lang = job["language"]
            files = dict(job.get("files") or {}, **{lang["source_file"]: job["code"]})
            for name, content in files.items():
                with open(
                    os.path.join(workdir, name), "w", encoding="utf-8", errors="replace"
                ) as fh:
                    fh.write(content)
            stdin_fd = _stdin_fd(job.get("stdin") or "", workdir + ".stdin")
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            setup_r, setup_w = os.pipe()
            opened += [stdin_fd, out_r, out_w, err_r, err_w, setup_r, setup_w]
            fds = {0: stdin_fd, 1: out_w, 2: err_w, _child.SETUP_FD: setup_w}
            if rpc_fd is not None:
                fds[3] = rpc_fd
                opened.append(rpc_fd)
            oom_before = self._memcg_prepare(job["limits"])
            pid = self._fork({**job, "workdir": workdir, "zygote_dir": _HERE}, fds)
            for fd in (stdin_fd, out_w, err_w, setup_w) + ((rpc_fd,) if rpc_fd is not None else ()):
                os.close(fd)
                opened.remove(fd)
            result = Collector(pid, out_r, err_r, ctrl, job["limits"], start).collect(
                self._reap_strays
            )
            set_up = (
                os.read(setup_r, 1) == b"1" or result["timed_out"]
            )  # killed mid-setup: a timeout
            result["setup_error"] = "" if set_up else (result["stderr"][-2000:] or "setup failed")
            result["memory_exceeded"] = self._memory_exceeded(oom_before, result)
            return result
        finally:
            for fd in opened:
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._reap_strays()
            remove_tree(workdir)  # any depth: shutil's recursion raised here

    def serve_one(self, ctrl: socket.socket) -> bool:
        """Serve one run in a runner process forked for it; False once the harness has gone.

        The runner reads the job, forks the child, collects its output and writes the answer
        frame to a memfd; once it has exited, the zygote copies that frame to the harness in the
        kernel (``sendfile``). So the zygote never holds a job or a result, and each child, forked
        from a runner that is a fresh copy of the zygote, inherits nothing of earlier runs: no
        other completion's code, stdin or output (a review found earlier runs' outputs, other
        completions' answers to the same case, in a child's heap when the zygote did the work).
        What the next run needs from this one (cgroup values written, OOM kills seen) comes back
        on a pipe."""
        select.select([ctrl], [], [])  # a job (or the harness's hang-up) is there to read
        state_r, state_w = os.pipe()
        answer = os.memfd_create("passband-answer")
        pid = os.fork()
        if pid == 0:  # the runner: never returns into the zygote's loop
            code = 3
            try:
                os.close(state_r)
                iso.prctl(_PR_SET_CHILD_SUBREAPER, 1)  # not inherited: strays come to the runner
                try:
                    job, fds = wire.recv(ctrl, want_fds=1)
                    os.write(answer, wire.frame(self.run(job, fds[0] if fds else None, ctrl)))
                    code = 0
                except (wire.WireError, OSError, HarnessGone):
                    pass
                state = {"cg": [[*k, v] for k, v in self._cg_values.items()], "oom": self.oom_seen}
                os.write(state_w, json.dumps(state).encode())
            finally:
                os._exit(code)
        os.close(state_w)
        try:
            with os.fdopen(state_r, "rb") as fh:
                raw = fh.read()
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            # what a runner that died mid-run left behind; without a PID namespace, strays that
            # outlived the runner's own sweep are re-parented to us
            self._reap_strays(always=code not in (0, 3))
            if code != 0:
                return False
            self._restore(raw)
            return _send_file(ctrl, answer)
        finally:
            os.close(answer)

    def _restore(self, raw: bytes) -> None:
        try:
            state = json.loads(raw)
            self._cg_values = {(a, b): v for a, b, v in state["cg"]}
            self.oom_seen = int(state["oom"])
        except (ValueError, KeyError, TypeError):
            self._cg_values = {}  # unknown: written again by the next run

    def _fork(self, job: dict, fds: dict) -> int:
        plan = {**self.plan, "base_vm": _vm_size()}
        if self.pidns_fd >= 0:
            iso.unshare(iso.CLONE_NEWPID)
        try:
            pid = os.fork()
        except OSError:
            if self.pidns_fd >= 0:
                iso.setns(self.pidns_fd, iso.CLONE_NEWPID)
            raise
        if pid == 0:
            _child.enter(job, plan, fds)
        if self.pidns_fd >= 0:
            iso.setns(self.pidns_fd, iso.CLONE_NEWPID)
        return pid

    def _memcg_prepare(self, limits: dict) -> int:
        if self.pidscg:
            # + the zygote and the run's runner
            self._cg_set(self.pidscg, "pids.max", str(limits["max_processes"] + 2))
        if self.tmpfs and self._cg_values.get(("tmpfs", "size")) != limits["disk_mb"]:
            flags = iso.MS_REMOUNT | iso.MS_NOSUID | iso.MS_NODEV
            iso.mount(None, self.base, None, flags, f"size={limits['disk_mb']}m")
            self._cg_values[("tmpfs", "size")] = limits["disk_mb"]
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
                self._cg_values[(path, key)] = value
            except OSError:
                pass  # e.g. EBUSY while pages are still charged: keep the previous limit

    def _memory_exceeded(self, oom_before: int, result: dict) -> bool:
        # One read per run: an OOM kill may hit any process of the run, even if its main one exits 0.
        if self.memcg:
            self.oom_seen = oom_kills(self.memcg)
            if self.oom_seen > oom_before:
                return True
        last = result["stderr"].rstrip().rsplit("\n", 1)[-1]
        return result["exit_code"] != 0 and last.startswith("MemoryError")

    def _reap_strays(self, always: bool = False) -> None:
        """Kill and reap every process re-parented to us: the fallback when there is no PID
        namespace, and ``always`` after a runner that died mid-run."""
        if self.pidns_fd >= 0 and not always:
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


def _send_file(sock: socket.socket, fd: int) -> bool:
    """The whole of ``fd`` to ``sock``, copied in the kernel; False if the harness has gone."""
    size, offset = os.fstat(fd).st_size, 0
    try:
        while offset < size:
            offset += os.sendfile(sock.fileno(), fd, offset, size - offset)
    except OSError:
        return False
    return True


def _stdin_fd(text: str, spill_path: str) -> int:
    """A readable fd holding ``text``: a pipe when it fits the pipe buffer, else an unlinked file."""
    data = text.encode("utf-8", "replace")
    if len(data) <= 60_000:
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        return r
    with open(spill_path, "wb") as fh:
        fh.write(data)
    fd = os.open(spill_path, os.O_RDONLY)
    os.unlink(spill_path)
    return fd


def _vm_size() -> int:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


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
