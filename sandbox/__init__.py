"""Run untrusted programs (model-written code) in isolation, fast, from a pool of warm workers.

``run(code, *, stdin="", limits=Limits(...)) -> ExecResult`` runs one program; ``Pool.session``
keeps a Python program alive so a harness can call its functions with plain data (the ``code``
verifier grades that way, so expected values and comparisons never enter the sandbox).

How a run works: a pool of zygote workers (one warm ``python -I`` each, default one per core)
forks one child per run; the child sets up the sandbox below and then executes the program inside
the already-warm interpreter (Python) or compiles and execs it (C, C++). A fork costs about a
millisecond where a fresh interpreter costs tens. ``compile_once`` (``build.py``) compiles a C or
C++ program once, under the compiler's own limits, and runs the binary on each input.

What is isolated (each item is tried when a worker starts; what fails is reported, never assumed):

- Process tree: the run is its own session and process group, and the init of a fresh PID
  namespace, so when it exits or is killed the kernel kills everything it started, daemons
  included. Without PID namespaces the worker is a child subreaper and kills every re-parented
  process after the run. It cannot signal anything outside (PID namespace; landlock ABI >= 6).
- Resources: wall-clock deadline (the tree is SIGKILLed), RLIMIT_CPU, RLIMIT_AS (``memory_mb`` on
  top of the interpreter), RLIMIT_FSIZE, RLIMIT_NOFILE, core dumps off; a cgroup v1 ``pids``
  controller caps processes and threads (RLIMIT_NPROC is ignored for root), a cgroup v1 ``memory``
  controller caps all processes together. stdout and stderr are capped; past the cap the run ends.
- Filesystem: a fresh temporary working directory and the worker's run directory that holds it
  (nothing else while a run is on; all of it is emptied after each run) are the only writable place;
  reads are limited to the interpreter's prefix, system directories (/usr, /lib, /bin, the loader
  cache) and the files handed over (landlock); everything else, e.g. /proc, /sys, /etc, /home,
  /tmp, /dev/shm, is out of reach. Landlock does not cover chmod, utime or ownership, and the
  run's uid owns most host files, so every mount but the run directory's tmpfs is read-only in the
  worker's mount namespace. Working directories sit on a tmpfs in the worker's private
  mount namespace, so all files of a run together are capped (``disk_mb``) and count as its
  memory. The environment is scrubbed (PATH, HOME/TMPDIR = working directory, LANG), and workers
  start with an empty environment, so nothing of the harness's environment is in their memory.
- Network: a network namespace of the worker (no interfaces up), plus landlock TCP rules and a
  seccomp filter denying ``socket()`` (``socketpair`` stays allowed).
- Privileges: no-new-privs, every capability dropped (bounding set too); seccomp also denies
  ptrace, mount, unshare/setns, clone into new namespaces (``clone3``, whose flags it cannot
  read, answers ENOSYS so libc uses ``clone``), bpf, keyctl, kexec, module loading, io_uring and
  System V IPC (a worker's runs share its IPC namespace) and setting extended attributes.

What is *not* isolated: CPU time is shared with the host (no CPU quota or pinning); the run can see
the kernel version and the CPU model; timing side channels, and covert channels that two runs of one
worker would both have to build (the run directory's inode numbers count the files earlier runs
made); a kernel exploit defeats all of it.
A run inherits the memory of its warm worker, which never reads a job or a result: each child reads
its own job from the harness, and its stdout and stderr pipes are moved into memfds and on to the
harness in the kernel, so a child's inherited memory holds nothing of earlier runs (their code,
stdin or output) and nothing of the harness (no environment, no expected outputs; the code verifier
keeps those in the harness process). Programs that need
/dev/shm (``multiprocessing`` locks and pools) or ``socket()`` fail. Without root, the worker makes
itself root of a new user namespace (mapped to the real uid) and gets the same namespaces; only the
cgroups are lost (processes are then capped by RLIMIT_NPROC, per user, and memory per process
only). Where user namespaces are disabled too, the run relies on landlock, seccomp, rlimits and the
subreaper; without landlock, files readable by the user are readable by the run. bubblewrap is not
used: it needs the same kernel features (user namespaces) that the worker already uses directly.
``passband sandbox doctor`` and ``capabilities()`` report what each worker actually has active on
this machine.
"""

import sys as _sys
import types as _types

from passband.sandbox._isolation import cheap_probe as _cheap_probe
from passband.sandbox.build import COMPILE_LIMITS, Build, compile_once
from passband.sandbox.languages import LANGUAGES, Language, register_language
from passband.sandbox.limits import ExecResult, Limits
from passband.sandbox.pool import Pool, SandboxError, default_pool, run
from passband.sandbox.session import CandidateError, CandidateGone, RemoteObject, Session

__all__ = [
    "Build",
    "COMPILE_LIMITS",
    "CandidateError",
    "CandidateGone",
    "ExecResult",
    "LANGUAGES",
    "Language",
    "Limits",
    "Pool",
    "RemoteObject",
    "SandboxError",
    "Session",
    "capabilities",
    "compile_once",
    "default_pool",
    "register_language",
    "run",
]


def capabilities(pool: Pool | None = None) -> dict[str, str]:
    """Each isolation mechanism -> "active: ..." or "inactive: why", as a live worker reports it."""
    pool = pool or default_pool()
    worker = pool._acquire()
    try:
        return dict(worker.report)
    finally:
        pool._release(worker)


class _Package(_types.ModuleType):
    """The docstring ends with what this machine offers, probed when it is first read (``help``,
    ``pydoc``), not at import: importing the sandbox makes no system calls."""

    @property
    def __doc__(self) -> str:  # type: ignore[override]
        if "_probed_doc" not in self.__dict__:
            probe = "\n".join(
                f"- {name}: {'available' if ok else 'not available'}"
                for name, ok in _cheap_probe().items()
            )
            self.__dict__["_probed_doc"] = (
                f"{self.__dict__['__doc__']}\nProbed on this machine "
                f"(cheap checks; the doctor runs the real ones):\n\n{probe}"
            )
        return self.__dict__["_probed_doc"]


_sys.modules[__name__].__class__ = _Package
