"""The warm worker: a long-lived interpreter that forks one sandboxed child per run.

Started by ``passband.sandbox.pool`` as ``python -I _zygote.py FD``, where FD is its end of a
control socket. Standard library only. At start it enters network and mount namespaces of its own
(so every child is born without network, and run directories live on a private size-limited tmpfs),
joins its own pids/memory cgroups, probes each isolation mechanism once, and reports what is active.
Without root it first becomes root of a user namespace of its own, so the namespaces still work.
Per run it creates a temporary working directory, forks the child into a fresh PID namespace (the
child is that namespace's init: when it exits the kernel kills everything it left behind), streams
stdout/stderr with caps, enforces the wall-clock deadline, and removes the directory.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import _child  # noqa: E402
import _isolation as iso  # noqa: E402
import _wire as wire  # noqa: E402
from _collect import Collector, HarnessGone  # noqa: E402

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

_PR_SET_CHILD_SUBREAPER = 36
_SLACK_MB = 64  # the memory cgroup also holds the copied pages of the interpreter itself


class Zygote:
    def __init__(self) -> None:
        self.base = tempfile.mkdtemp(prefix=f"passband-sandbox-{os.getpid()}-")
        self.report: dict[str, str] = {}
        self.plan = {
            "cgroups": [],
            "pids_cgroup": False,
            "drop_caps": os.geteuid() == 0,
            "landlock_abi": 0,
            "seccomp": False,
            "read_only": _read_only_paths(),
            "devices": _DEVICES,
            "base_vm": 0,
        }
        self.pidns_fd = -1
        self.tmpfs = False
        self.memcg = self.pidscg = None
        self.oom_seen = 0
        self._cg_values: dict[tuple[str, str], str] = {}
        self.cgroup_dirs: list[str] = []
        self._probe()

    # ---- start-up probes ---------------------------------------------------------------------
    def _probe(self) -> None:
        r = self.report
        r["process group + subreaper"] = (
            "active: the run's tree is killed and reaped after every run"
        )
        iso.prctl(_PR_SET_CHILD_SUBREAPER, 1)
        root = os.geteuid() == 0
        r["network namespace"] = self._try(
            lambda: iso.unshare(iso.CLONE_NEWNET | iso.CLONE_NEWIPC | iso.CLONE_NEWUTS),
            "active: no interfaces but a down loopback; IPC and hostname private",
        )
        r["pid namespace"] = self._probe_pidns()
        r["capabilities"] = (
            "active: all dropped (bounding set too), no-new-privs" if root else "n/a: not root"
        )
        self._probe_in_child("landlock", self._landlock_test)
        self._probe_in_child("seccomp", iso.seccomp_deny)
        self._probe_cgroups()
        r["rlimits"] = "active: CPU, address space, file size, open files" + (
            ""
            if self.plan["pids_cgroup"]
            else ", processes (RLIMIT_NPROC; per user, ignored for root)"
        )
        r["working directory"] = (
            "active: fresh temporary directory per run, removed afterwards; scrubbed environment"
        )
        r["mount namespace"] = self._try(
            self._private_tmpfs,
            "active: working directories live on a private, "
            "size-limited tmpfs (Limits.disk_mb; it counts as memory too)",
        )

    def _private_tmpfs(self) -> None:
        """Disk quota for runs: our own mount namespace with a tmpfs over the base directory."""
        iso.unshare(iso.CLONE_NEWNS)
        iso.mount(None, "/", None, iso.MS_REC | iso.MS_PRIVATE, None)
        iso.mount(
            "passband",
            self.base,
            "tmpfs",
            iso.MS_NOSUID | iso.MS_NODEV,
            "size=256m,nr_inodes=10000,mode=0700",
        )
        self.tmpfs = True

    def _try(self, fn, active: str) -> str:
        try:
            fn()
            return active
        except OSError as exc:
            return f"inactive: {exc}"

    def _probe_pidns(self) -> str:
        try:
            self.pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            iso.unshare(iso.CLONE_NEWPID)
            pid = os.fork()
            if pid == 0:
                os._exit(0 if os.getpid() == 1 else 1)
            iso.setns(self.pidns_fd, iso.CLONE_NEWPID)
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                raise OSError(0, "child was not init of its namespace")
            return "active: each run is init of a fresh PID namespace; nothing outlives it"
        except OSError as exc:
            if self.pidns_fd >= 0:
                os.close(self.pidns_fd)
            self.pidns_fd = -1
            return f"inactive ({exc}): the subreaper kills what the run leaves behind"

    def _landlock_test(self) -> None:
        abi = iso.landlock_abi()
        if not abi:
            raise OSError(0, "kernel has no landlock")
        iso.landlock_restrict(self.plan["read_only"], [self.base], _DEVICES, abi)

    def _probe_in_child(self, name: str, fn) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                fn()
                os._exit(0)
            except BaseException:  # noqa: BLE001
                os._exit(1)
        ok = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        if name == "landlock":
            abi = iso.landlock_abi() if ok else 0
            self.plan["landlock_abi"] = abi
            extra = (", TCP bind/connect denied" if abi >= 4 else "") + (
                ", signals outside scoped" if abi >= 6 else ""
            )
            self.report[name] = (
                (
                    f"active (ABI {abi}): read-only interpreter and system libraries, read-write "
                    f"working directory only{extra}"
                )
                if ok
                else "inactive: not supported here"
            )
        else:
            self.plan["seccomp"] = ok
            self.report[name] = (
                (
                    "active: socket(), ptrace, mount, unshare, setns, bpf, keyctl, kexec, module "
                    "loading and io_uring denied"
                )
                if ok
                else "inactive: not supported here"
            )

    def _probe_cgroups(self) -> None:
        # The zygote joins the cgroups itself, so every forked run is born inside them: moving a
        # process between cgroup v1 groups costs milliseconds, a fork inherits them for free. The
        # zygote is one more process in pids.max and is exempt from the OOM killer.
        name = f"passband-{os.getpid()}"
        for controller in ("pids", "memory"):
            path = iso.cgroup_create(controller, name)
            try:
                if path:
                    iso.cgroup_write(path, "cgroup.procs", "0")
            except OSError:
                os.rmdir(path)
                path = None
            if path:
                self.cgroup_dirs.append(path)
            if controller == "pids":
                self.pidscg = path
                self.plan["pids_cgroup"] = bool(path)
            else:
                self.memcg = path
        if self.memcg:
            self.oom_seen = _oom_kills(self.memcg)
            try:
                with open("/proc/self/oom_score_adj", "w") as fh:
                    fh.write("-1000")
            except OSError:
                pass  # some containers forbid it; the run is still the largest process by far
        self.report["cgroup pids"] = (
            "active: max_processes counts every process and thread of the run"
            if self.pidscg
            else "inactive: cgroup v1 pids not writable"
        )
        self.report["cgroup memory"] = (
            "active: memory_mb caps all processes of the run together"
            if self.memcg
            else "inactive: cgroup v1 memory not writable"
        )

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
            shutil.rmtree(workdir, ignore_errors=True)

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
            self._cg_set(self.pidscg, "pids.max", str(limits["max_processes"] + 1))  # + the zygote
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
            self.oom_seen = _oom_kills(self.memcg)
            if self.oom_seen > oom_before:
                return True
        last = result["stderr"].rstrip().rsplit("\n", 1)[-1]
        return result["exit_code"] != 0 and last.startswith("MemoryError")

    def _reap_strays(self) -> None:
        """Kill and reap every process re-parented to us (the fallback when there is no PID namespace)."""
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

    def close(self) -> None:
        if self.tmpfs:
            try:
                iso.umount(
                    self.base
                )  # then the host's own (empty) directory is what rmtree removes
            except OSError:
                pass
        shutil.rmtree(self.base, ignore_errors=True)
        for path in self.cgroup_dirs:  # a cgroup with a member cannot go: move ourselves out first
            try:
                iso.cgroup_write(os.path.dirname(path), "cgroup.procs", "0")
            except OSError:
                pass
            try:
                os.rmdir(path)
            except OSError:
                pass


_DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]


def _read_only_paths() -> list[str]:
    paths = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        "/usr",
        "/lib",
        "/lib64",
        "/lib32",
        "/bin",
        "/etc/ld.so.cache",
        "/etc/alternatives",
    }
    repo = os.path.dirname(_HERE) + os.sep  # the package's own source tree stays unreadable
    paths.update(
        p for p in sys.path if p and p != _HERE and os.path.isdir(p) and not p.startswith(repo)
    )
    return sorted(paths)


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


def _oom_kills(memcg: str) -> int:
    for line in iso.cgroup_read(memcg, "memory.oom_control").splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return 0


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
        while True:
            try:
                job, fds = wire.recv(ctrl, want_fds=1)
                wire.send(ctrl, zygote.run(job, fds[0] if fds else None, ctrl))
            except (wire.WireError, OSError, HarnessGone):
                break
    finally:
        zygote.close()


if __name__ == "__main__":
    main()
