"""Kernel isolation primitives through ctypes: namespaces, landlock, seccomp, capabilities, cgroups.

Standard library only: this file is imported by the zygote worker (started with ``python -I``) as a
top-level module, and by ``passband.sandbox`` for the cheap probe shown in its docstring. Each
primitive is tried at worker start; what fails is reported as inactive, never silently assumed.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000

_X86_64 = platform.machine() == "x86_64"
_GENERIC_SYSCALLS = platform.machine() in ("x86_64", "aarch64")  # landlock is 444-446 on both
_NR = {"landlock_create_ruleset": 444, "landlock_add_rule": 445, "landlock_restrict_self": 446}

_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP = 1, 38, 22
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4


def _check(ret: int, what: str) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def enter_user_namespace() -> int:
    """unshare(user + pid namespaces) and map our uid/gid to root inside; returns the outer uid.
    The next fork becomes init of the new PID namespace."""
    uid, gid = os.getuid(), os.getgid()
    unshare(CLONE_NEWUSER | CLONE_NEWPID)
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)
    return uid


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(fd, nstype), "setns")


MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 32, 4096, 16384, 1 << 18
MNT_DETACH = 2


def mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    def enc(x: str | None) -> bytes | None:
        return x.encode() if x is not None else None

    _check(
        _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount({target})",
    )


def umount(target: str) -> None:
    _check(_libc.umount2(target.encode(), MNT_DETACH), f"umount({target})")


_NR_MOUNT_SETATTR, _AT_FDCWD, _AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 1


def mount_setattr(path: str, *, add: int = 0, clear: int = 0, recursive: bool = False) -> None:
    """Set (``add``) or clear mount attributes on the mount at ``path`` (and those below it)."""
    attr = struct.pack("QQQQ", add, clear, 0, 0)  # struct mount_attr: set, clr, propagation, userns
    flags = _AT_RECURSIVE if recursive else 0
    ret = _libc.syscall(_NR_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags, attr, len(attr))
    _check(ret, f"mount_setattr({path})")


def mount_point(path: str) -> str:
    """The mount point that holds ``path`` (the longest one that is a prefix of it)."""
    best = "/"
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = line.split()[4].replace("\\040", " ")
            inside = path == point or path.startswith(point.rstrip("/") + "/")
            if inside and len(point) > len(best):
                best = point
    return best


def prctl(option: int, arg2: int = 0, arg3: int = 0) -> None:
    _check(
        _libc.prctl(option, ctypes.c_ulong(arg2), ctypes.c_ulong(arg3), 0, 0), f"prctl({option})"
    )


def set_parent_death_signal(sig: int) -> None:
    prctl(_PR_SET_PDEATHSIG, sig)


def no_new_privs() -> None:
    prctl(_PR_SET_NO_NEW_PRIVS, 1)


def drop_capabilities() -> None:
    """Empty every capability set, including the bounding set, so exec cannot regain any."""
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 and ctypes.get_errno() == 22:
            break  # EINVAL: past the last capability this kernel knows
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # two {effective, permitted, inheritable} triples, all zero
    _check(_libc.capset(header, data), "capset")


# ---- landlock ------------------------------------------------------------------------------------
_FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16, 6: 16, 7: 16}
_FS_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read_file, read_dir
_FS_WRITE_DEV = (1 << 1) | (1 << 2)  # write_file, read_file (for /dev/null and friends)
_NET_ALL = (1 << 0) | (1 << 1)  # bind_tcp, connect_tcp
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets, signals


def landlock_abi() -> int:
    """The landlock ABI version, 0 when the kernel has none (or forbids it)."""
    ret = _libc.syscall(_NR["landlock_create_ruleset"], None, 0, 1) if _GENERIC_SYSCALLS else -1
    return int(ret) if ret > 0 else 0


def landlock_restrict(
    read_only: list[str], read_write: list[str], devices: list[str], abi: int
) -> None:
    """Allow reads (and exec) below ``read_only``, everything below ``read_write``; deny the rest.

    With ABI >= 4 TCP bind/connect are denied; with ABI >= 6 signals to processes outside the
    sandbox and abstract unix sockets are denied as well.
    """
    ruleset = landlock_ruleset(read_only, read_write, devices, abi)
    try:
        landlock_enforce(ruleset)
    finally:
        os.close(ruleset)


def landlock_ruleset(
    read_only: list[str], read_write: list[str], devices: list[str], abi: int
) -> int:
    """The ruleset of ``landlock_restrict`` as an fd, to enforce later (once built, for every run)."""
    handled_fs = (1 << _FS_BITS_BY_ABI[min(abi, 7)]) - 1
    attr = struct.pack(
        "QQQ", handled_fs, _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0
    )
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _check(
        _libc.syscall(_NR["landlock_create_ruleset"], buf, size, 0), "landlock_create_ruleset"
    )
    try:
        for paths, access in (
            (read_only, _FS_READ),
            (read_write, handled_fs),
            (devices, _FS_WRITE_DEV),
        ):
            for path in paths:
                _landlock_allow(ruleset, path, access & handled_fs)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def landlock_enforce(ruleset: int) -> None:
    """Restrict this process (and what it forks or execs) to ``ruleset``, for good."""
    no_new_privs()
    _check(_libc.syscall(_NR["landlock_restrict_self"], ruleset, 0), "landlock_restrict_self")


def _landlock_allow(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path this machine does not have needs no rule
    try:
        if not os.path.isdir(path):  # file rules may only carry file rights
            access &= (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15)
        rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
        _check(
            _libc.syscall(_NR["landlock_add_rule"], ruleset, 1, rule, 0),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(fd)


# ---- seccomp -------------------------------------------------------------------------------------
# Syscalls a test program has no business making. With namespaces and capabilities gone most of them
# fail anyway; the filter is the second wall, and ``socket`` is the network wall when there is no
# network namespace (AF_UNIX path sockets could reach host daemons; socketpair stays allowed).
_DENY_X86_64 = {
    "socket": 41,
    # System V IPC: every run of a worker shares its IPC namespace, so a segment or queue left by
    # one run (a group mate's answer) could be read by the next
    "shmget": 29,
    "shmat": 30,
    "shmctl": 31,
    "semget": 64,
    "semop": 65,
    "semctl": 66,
    "shmdt": 67,
    "msgget": 68,
    "msgsnd": 69,
    "msgrcv": 70,
    "msgctl": 71,
    "semtimedop": 220,
    # extended attributes: stored on the run directory (or a host file the run's uid owns) they
    # would outlive the run, a channel to the next one
    "setxattr": 188,
    "lsetxattr": 189,
    "fsetxattr": 190,
    "removexattr": 197,
    "lremovexattr": 198,
    "fremovexattr": 199,
    "setxattrat": 463,
    "removexattrat": 466,
    "ptrace": 101,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "init_module": 175,
    "delete_module": 176,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
}
_AUDIT_ARCH_X86_64 = 0xC000003E
_SECCOMP_RET_ALLOW, _SECCOMP_RET_KILL_PROCESS, _SECCOMP_RET_ERRNO = (
    0x7FFF0000,
    0x80000000,
    0x00050000,
)
_EPERM, _ENOSYS = 1, 38
_NR_CLONE, _NR_CLONE3 = 56, 435
_CLONE_NAMESPACES = 0x02000000 | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC  # NEWCGROUP too
_CLONE_NAMESPACES |= CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET


def seccomp_available() -> bool:
    return _X86_64


def seccomp_deny() -> None:
    """Load a BPF filter: wrong architecture or x32 ABI -> kill; listed syscalls -> EPERM."""
    ld_abs, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06

    def ins(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("HBBI", code, jt, jf, k)

    denied = sorted(_DENY_X86_64.values())
    prog = [
        ins(ld_abs, 0, 0, 4),
        ins(jeq, 1, 0, _AUDIT_ARCH_X86_64),
        ins(ret, 0, 0, _SECCOMP_RET_KILL_PROCESS),
    ]
    prog += [
        ins(ld_abs, 0, 0, 0),
        ins(jge, 0, 1, 0x40000000),
        ins(ret, 0, 0, _SECCOMP_RET_KILL_PROCESS),
    ]
    # clone with a namespace flag (args[0], low word) -> EPERM: a new user namespace would hand the
    # program a full capability set there, the attack surface that denying unshare closes; clone3
    # passes its flags in memory the filter cannot read -> ENOSYS, and libc falls back to clone
    prog += [
        ins(jeq, 0, 3, _NR_CLONE),
        ins(ld_abs, 0, 0, 16),
        ins(jset, 0, 1, _CLONE_NAMESPACES),
        ins(ret, 0, 0, _SECCOMP_RET_ERRNO | _EPERM),
        ins(ld_abs, 0, 0, 0),
        ins(jeq, 0, 1, _NR_CLONE3),
        ins(ret, 0, 0, _SECCOMP_RET_ERRNO | _ENOSYS),
    ]
    for i, nr in enumerate(denied):
        prog.append(ins(jeq, len(denied) - i, 0, nr))  # jump to the shared EPERM return
    prog += [ins(ret, 0, 0, _SECCOMP_RET_ALLOW), ins(ret, 0, 0, _SECCOMP_RET_ERRNO | _EPERM)]
    filt = ctypes.create_string_buffer(b"".join(prog))
    fprog = struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(filt))
    no_new_privs()
    _check(_libc.prctl(_PR_SET_SECCOMP, 2, ctypes.c_char_p(fprog), 0, 0), "seccomp")


# ---- cgroup v1 -----------------------------------------------------------------------------------
def cgroup_v1_dir(controller: str) -> str | None:
    """Where this process's cgroup for ``controller`` lives, when cgroup v1 mounts it writable."""
    root = f"/sys/fs/cgroup/{controller}"
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                _, names, path = line.rstrip("\n").split(":", 2)
                if controller in names.split(","):
                    full = os.path.join(root, path.lstrip("/"))
                    return full if os.access(full, os.W_OK) else None
    except OSError:
        return None
    return None


def cgroup_create(controller: str, name: str) -> str | None:
    parent = cgroup_v1_dir(controller)
    if parent is None:
        return None
    path = os.path.join(parent, name)
    try:
        os.makedirs(path, exist_ok=True)
        return path
    except OSError:
        return None


def cgroup_write(path: str, key: str, value: str) -> None:
    with open(os.path.join(path, key), "w") as fh:
        fh.write(value)


def cgroup_read(path: str, key: str) -> str:
    with open(os.path.join(path, key)) as fh:
        return fh.read()


def cheap_probe() -> dict[str, bool]:
    """What this machine appears to offer, without forking (used for the module docstring)."""
    root = os.geteuid() == 0
    return {
        "namespaces (pid, net, mount, ipc)": root or os.path.exists("/proc/self/ns/user"),
        "landlock": landlock_abi() > 0,
        "seccomp": seccomp_available(),
        "cgroup v1 pids": root and os.path.isdir("/sys/fs/cgroup/pids"),
        "cgroup v1 memory": root and os.path.isdir("/sys/fs/cgroup/memory"),
    }
