"""What the warm worker sets up once, at start, before it forks any run; and its teardown.

Part of the zygote (standard library only; see ``_zygote.py``). Each mechanism is entered or
probed once, in the zygote's own process, so every forked run inherits it for free: the network
namespace, the private tmpfs for run directories, the pids/memory cgroups, the subreaper. What is
active goes into ``report`` (the sandbox's docstring shows it); what each forked child must set up
itself goes into ``plan`` (read by ``_child.enter``).
"""

from __future__ import annotations

import os
import sys

import _isolation as iso
from _rmtree import remove_tree

_HERE = os.path.dirname(os.path.abspath(__file__))
_PR_SET_CHILD_SUBREAPER = 36


class Setup:
    """The zygote's one-time isolation: probed and entered in ``__init__``, undone by ``close``."""

    def __init__(self) -> None:
        self.base = _private_dir(f"passband-sandbox-{os.getpid()}-")
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
        self.read_only = False
        self.base_mode = 0o700
        self.memcg = self.pidscg = None
        self.oom_seen = 0
        self.cgroup_dirs: list[str] = []
        self.ruleset = -1
        self._probe()
        if self.plan["landlock_abi"]:  # built once: each run enforces it (the runs' parent, base)
            self.ruleset = iso.landlock_ruleset(
                self.plan["read_only"], [self.base], _DEVICES, self.plan["landlock_abi"]
            )

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
            "size-limited tmpfs (Limits.disk_mb, at most half of memory_mb under a memory cgroup; "
            "it counts as memory too)",
        )
        r["read-only host files"] = (
            self._try(
                self._read_only_host,
                "active: every other mount is read-only in the worker's mount namespace, so a "
                "run cannot chmod, touch or change any file its uid owns outside its directory",
            )
            if self.tmpfs
            else "inactive: no private mount namespace"
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

    def _read_only_host(self) -> None:
        """Landlock does not cover chmod, utime or ownership: the run's uid owns most host files
        (root, or the user in a user namespace), so a review chmodded a root-owned file setuid
        from a run. Only in our own mount namespace: the run directory and the worker's own
        cgroups (each a bind mount of its own, not the host's whole cgroup tree) stay writable.
        As root, those are handed to an unprivileged owner, so a run (uid 0 without capabilities)
        cannot chmod, touch or flag them either; the worker keeps its capabilities."""
        own = [p for p in (self.pidscg, self.memcg) if p]
        for path in own:
            iso.mount(path, path, None, iso.MS_BIND, None)
        iso.mount_setattr("/", add=iso.MOUNT_ATTR_RDONLY, recursive=True)
        for path in [self.base, *own]:
            iso.mount_setattr(path, clear=iso.MOUNT_ATTR_RDONLY)
        if os.geteuid() == 0 and _initial_user_namespace():
            for path in [self.base, *own]:
                _hand_over(path)
            self.base_mode = 0o711  # runs traverse it to their directory; nothing more
            os.chmod(self.base, self.base_mode)
        self.read_only = True

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
                    f"run directory only (emptied after each run){extra}"
                )
                if ok
                else "inactive: not supported here"
            )
        else:
            self.plan["seccomp"] = ok
            self.report[name] = (
                (
                    "active: socket(), ptrace, mount, unshare, setns, clone into new "
                    "namespaces, bpf, keyctl, kexec, module loading, io_uring, System V IPC and "
                    "extended attributes denied"
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
            self.oom_seen = oom_kills(self.memcg)
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

    def close(self) -> None:
        """Undo the set-up. The zygote calls it after its last run has been killed and reaped:
        only then may the mounts it made read-only be written again, to remove what it made."""
        if self.read_only:
            for path in [self.base, *self.cgroup_dirs]:
                try:
                    parent = iso.mount_point(os.path.dirname(path))
                    iso.mount_setattr(parent, clear=iso.MOUNT_ATTR_RDONLY)
                except OSError:
                    pass
            for path in self.cgroup_dirs:
                try:
                    iso.umount(path)  # our bind mount over it
                except OSError:
                    pass
        if self.tmpfs:
            try:
                iso.umount(self.base)  # then the host's own (empty) directory is what goes
            except OSError:
                pass
        remove_tree(self.base)
        for path in self.cgroup_dirs:  # a cgroup with a member cannot go: move ourselves out first
            try:
                iso.cgroup_write(os.path.dirname(path), "cgroup.procs", "0")
            except OSError:
                pass
            try:
                os.rmdir(path)
            except OSError:
                pass


_NOBODY = 65534


def _initial_user_namespace() -> bool:
    """Whether every uid is mapped (the host's namespace), so nobody exists to own things."""
    try:
        with open("/proc/self/uid_map") as fh:
            return fh.read().split() == ["0", "0", "4294967295"]
    except OSError:
        return False


def _hand_over(path: str) -> None:
    """``path`` (and what is in it, one level: a cgroup's files) owned by nobody."""
    os.chown(path, _NOBODY, _NOBODY)
    if os.path.isdir(path):
        for entry in os.scandir(path):
            if entry.is_file(follow_symlinks=False):
                os.chown(entry.path, _NOBODY, _NOBODY)


def _private_dir(prefix: str) -> str:
    """A new mode-700 directory in the temporary directory (``tempfile.mkdtemp``'s choice of
    place, without importing ``tempfile``: see the warm modules in ``_zygote.py``)."""
    places = [os.environ.get(k) for k in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp"]
    for place in [p for p in places if p] + [os.getcwd()]:
        for _ in range(10):
            path = os.path.join(place, prefix + os.urandom(6).hex())
            try:
                os.mkdir(path, 0o700)
                return path
            except FileExistsError:
                continue
            except OSError:
                break  # not writable here: the next place
    raise OSError("no writable temporary directory for the sandbox worker")


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


def oom_kills(memcg: str) -> int:
    for line in iso.cgroup_read(memcg, "memory.oom_control").splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return 0
