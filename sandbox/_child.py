"""What happens inside a freshly forked run, from the fork to the program's exit.

Runs in the zygote's forked child: it reads its own job from the harness (the zygote never holds a
job, so no run inherits another's code or input) and writes its files; then the trusted setup
(process group, cgroups, file descriptors, environment, rlimits, then no-new-privs, capabilities,
landlock, seccomp), then the untrusted program. Any setup step that the zygote reported as active
and that fails here ends the child with exit code 125 (fail closed): a run is never started with
less isolation than reported.
"""

from __future__ import annotations

import binascii
import builtins
import io
import os
import resource
import signal
import sys
import traceback
import types

import _isolation as iso
import _wire as wire

SETUP_FAILED = 125
_RPC_FD = 3
SETUP_FD = 4
LANDLOCK_FD = 5


def receive(ctrl, paths: dict, plan: dict, fds: dict, theirs: list) -> None:
    """Never returns: read this run's job (and the session socket, if any) from the harness,
    write the program's files into the run's directory, then ``enter``. ``theirs``: the zygote's
    own descriptors, closed first; the parent-death signal is set first too, so a child whose
    zygote dies never waits on the harness's socket."""
    try:
        iso.set_parent_death_signal(signal.SIGKILL)
        for fd in theirs:
            os.close(fd)
        job, passed = wire.recv(ctrl, want_fds=1)
        job.update(paths)
        if job["refused"]:
            raise OSError(job["refused"])
        lang = job["language"]
        files = dict(job.get("files") or {}, **{lang["source_file"]: job["code"]})
        for name, content in files.items():
            path = os.path.join(job["workdir"], name)
            with open(path, "w", encoding="utf-8", errors="replace") as fh:
                fh.write(content)
        for name, content in (job.get("binaries") or {}).items():
            fd = os.open(os.path.join(job["workdir"], name), os.O_WRONLY | os.O_CREAT, 0o755)
            with open(fd, "wb") as fh:
                fh.write(binascii.a2b_base64(content))
        spill = os.path.join(job["workdir"], ".passband-stdin")  # goes with the directory
        fds = {**fds, 0: _stdin_fd(job.get("stdin") or "", spill)}
        if passed:
            fds[_RPC_FD] = passed[0]
        plan = {**plan, "base_vm": _vm_size()}
    except BaseException as exc:  # noqa: BLE001 - no job, no run
        os.write(fds[2], f"passband sandbox: cannot prepare the run: {exc!r}\n".encode())
        os._exit(SETUP_FAILED)
    enter(job, plan, fds)


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


def enter(job: dict, plan: dict, fds: dict) -> None:
    """Never returns: sets the sandbox up, runs the program, exits with its status."""
    try:
        _setup(job, plan, fds)
    except BaseException as exc:  # noqa: BLE001 - anything here means the sandbox is not in place
        os.write(2, f"passband sandbox: setup failed: {exc!r}\n".encode())
        os._exit(SETUP_FAILED)
    _run_program(job)


def _setup(job: dict, plan: dict, fds: dict) -> None:
    iso.set_parent_death_signal(
        signal.SIGKILL
    )  # the zygote dies -> the run (and its namespace) dies
    os.setsid()
    _arrange_fds(fds)
    os.chdir(job["workdir"])
    os.umask(0o077)
    os.environ.clear()
    os.environ.update(
        {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": job["workdir"],
            "TMPDIR": job["workdir"],
            "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    _set_rlimits(job["limits"], plan)
    iso.no_new_privs()
    if plan["drop_caps"]:
        iso.drop_capabilities()
    if plan["landlock_abi"]:  # the zygote's ruleset: read-write below the run's parent only
        iso.landlock_enforce(LANDLOCK_FD)
        os.close(LANDLOCK_FD)
    if plan["seccomp"]:
        iso.seccomp_deny()
    os.write(SETUP_FD, b"1")  # the only proof the zygote accepts that setup completed
    os.close(SETUP_FD)


def _arrange_fds(fds: dict) -> None:
    # Move every source above the targets first, so a source that already sits on 0..3 is not
    # clobbered, then close everything else: the zygote's control socket must not be reachable.
    import fcntl

    high = {target: fcntl.fcntl(src, fcntl.F_DUPFD, 100) for target, src in fds.items()}
    for target, src in high.items():
        os.dup2(src, target, inheritable=True)
    for fd in range(max(fds)):
        if fd not in fds:
            try:
                os.close(fd)
            except OSError:
                pass
    os.closerange(max(fds) + 1, 1 << 16)


def _set_rlimits(limits: dict, plan: dict) -> None:
    mb = 1 << 20
    address_space = plan["base_vm"] + limits["memory_mb"] * mb
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["max_file_mb"] * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["max_open_files"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if not plan["pids_cgroup"]:  # ignored for root, and shared per user: the weaker fallback
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["max_processes"],) * 2)


def _run_program(job: dict) -> None:
    lang = job["language"]
    if lang["compile"]:
        import subprocess  # not warm: see the warm modules in _zygote.py

        done = subprocess.run(lang["compile"], stdin=subprocess.DEVNULL, stdout=2, stderr=2)
        if done.returncode != 0:
            os._exit(done.returncode if done.returncode > 0 else 1)
    if lang["run"]:
        for sig in (
            signal.SIGPIPE,
            signal.SIGXFSZ,
        ):  # Python ignores these; a native program must not
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execve(lang["run"][0], lang["run"], dict(os.environ))
        except OSError as exc:
            os.write(2, f"cannot execute {lang['run'][0]}: {exc}\n".encode())
            os._exit(127)
    os._exit(_run_python(job))


def _run_python(job: dict) -> int:
    """Execute the program in this (warm) interpreter; in session mode, then serve calls."""
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", errors="replace", closefd=False)
    sys.stdout = sys.__stdout__ = open(
        1, "w", encoding="utf-8", errors="backslashreplace", closefd=False
    )
    sys.stderr = sys.__stderr__ = open(
        2, "w", encoding="utf-8", errors="backslashreplace", closefd=False
    )
    session = job["mode"] == "session"
    if session:  # only return values grade a session: debug prints must not fill the output cap
        sys.stdout = sys.__stdout__ = open(os.devnull, "w", encoding="utf-8")
    path = os.path.join(job["workdir"], job["language"]["source_file"])
    module = types.ModuleType("solution" if session else "__main__")
    module.__file__, module.__builtins__ = path, builtins
    sys.modules[module.__name__] = module
    sys.argv, sys.path[0] = [path], job["workdir"]
    sys.path[:] = [p for p in sys.path if p != job["zygote_dir"]]
    # (tempfile reads TMPDIR, the run's directory, on first use: the zygote never imports it)
    status, exited = _exec_module(job["code"], path, module)
    if session:  # a program that calls sys.exit while loading is not ready to be tested
        status = _serve(module, status if not exited else (status or 1))
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream must not change the status
            pass
    return status


def _exec_module(code: str, path: str, module: types.ModuleType) -> tuple[int, bool]:
    """(exit status, whether the program called sys.exit)."""
    try:
        exec(compile(code, path, "exec"), module.__dict__)
        return 0, False
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return int(exc.code or 0) & 0xFF, True
        print(exc.code, file=sys.stderr)
        return 1, True
    except BaseException:  # noqa: BLE001 - the program's own error: report it like python would
        traceback.print_exc()
        return 1, False


def _serve(module: types.ModuleType, status: int) -> int:
    """Answer the harness's calls over fd 3. Only plain data goes back (see ``_wire.encode``)."""
    import socket

    sock = socket.socket(fileno=_RPC_FD)
    handles: list[object] = []

    def handle(obj: object) -> int:
        handles.append(obj)
        return len(handles) - 1

    names = [n for n in list(module.__dict__) if not n.startswith("__")]
    wire.send(sock, {"ready": status == 0, "status": status, "names": names})
    while status == 0:
        try:
            request, _ = wire.recv(sock)
        except (wire.WireError, OSError):
            break
        if request.get("op") == "exit":
            break
        wire.send(sock, _answer(request, module, handles, handle))
    return status


_CAPTURE_BYTES = 1 << 20  # per stream; beyond it the text is cut (a test comparing it fails)
_CAPTURED: list = []  # (stdout, stderr) capture streams, once a test asked for ``capsys``


class _Capped(io.BytesIO):
    """The bytes under a capture stream (C-level writes; a program that prints without end runs
    into its memory limit); ``fileno`` is the replaced stream's, so ``faulthandler.enable()``
    still works."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def fileno(self) -> int:
        return self._fd


def _captured_output(start: bool) -> list[str]:
    """What the program printed since the last read (pytest's ``capsys.readouterr``), the first
    ``_CAPTURE_BYTES`` of each stream. Printing is captured from the first ``start`` (a test's
    ``capsys`` fixture) on: before it, stdout goes nowhere and stderr to the run's, as for every
    test that does not ask. Streams as pytest's: UTF-8 text over bytes (``.buffer``,
    ``.encoding``, ``write(42)`` a ``TypeError``)."""
    if start and not _CAPTURED:
        streams = []
        for name, fd in (("stdout", 1), ("stderr", 2)):
            try:  # the program may have replaced the stream with one that has no descriptor
                fd = int(getattr(sys, name).fileno())
            except Exception:  # noqa: BLE001 - then the process's own
                pass
            streams.append(
                io.TextIOWrapper(_Capped(fd), encoding="utf-8", newline="", write_through=True)
            )
        _CAPTURED[:] = streams
        sys.stdout, sys.stderr = streams
    out = []
    for stream in _CAPTURED:
        stream.flush()
        raw = stream.buffer
        out.append(raw.getvalue()[:_CAPTURE_BYTES].decode("utf-8", "replace"))
        raw.seek(0)
        raw.truncate(0)
    return out or ["", ""]


def _index(obj: object) -> int:
    import operator

    return operator.index(obj)


def _changed_arguments(request: dict, args: list, kwargs: dict, handle) -> list:
    """Mutable arguments (list, dict, set, bytearray) the call changed, so the harness's copies
    change too: a test may check an in-place sort, or that its input was left alone."""
    changed = []
    for where, key, obj in [("i", i, a) for i, a in enumerate(args)] + [
        ("k", k, v) for k, v in kwargs.items()
    ]:
        if type(obj) not in (list, dict, set, bytearray):
            continue  # (so the arguments were not sent as one flat list of scalars, see _wire._flat)
        sent = (
            request["args"][1][key]
            if where == "i"
            else dict((k[1], v) for k, v in request["kwargs"][1])[key]
        )
        try:
            now = wire.encode(obj, handle)
        except Exception:  # noqa: BLE001 - e.g. nested too deeply now: the harness keeps its copy
            continue
        if now != sent:
            changed.append({where: key, "v": now})
    return changed


def _answer(request: dict, module: types.ModuleType, handles: list, handle) -> dict:
    try:
        op = request["op"]
        if op == "output":  # printed since the last read (pytest's ``capsys.readouterr``)
            return {"value": wire.encode(_captured_output(bool(request.get("start"))), handle)}
        if op == "global":
            return {"value": ["h", handle(module.__dict__[request["name"]])]}
        target = handles[request["handle"]]
        if op == "getattr":
            value = getattr(target, request["attr"])
        elif op == "iter":  # a generator or map object comes back as the list it yields
            value = list(target)
        elif op == "len":
            value = len(target)
        elif op == "getitem":
            value = target[wire.decode(request["key"], handles.__getitem__)]
        elif op == "next":
            value = next(target)
        elif op in ("str", "float", "int", "index"):  # the harness checks the type of the answer
            value = {"str": str, "float": float, "int": int, "index": _index}[op](target)
        elif op == "setattr":
            value = setattr(
                target, request["attr"], wire.decode(request["value"], handles.__getitem__)
            )
        elif op == "setitem":
            key, item = (wire.decode(request[k], handles.__getitem__) for k in ("key", "value"))
            target[key] = item
            value = None
        else:
            args = wire.decode(request["args"], handles.__getitem__)
            kwargs = wire.decode(request["kwargs"], handles.__getitem__)
            value = target(*args, **kwargs)
            reply = {"value": wire.encode(value, handle)}
            changed = _changed_arguments(request, args, kwargs, handle)
            if changed:
                reply["args_after"] = changed
            return reply
        return {"value": wire.encode(value, handle)}
    except BaseException as exc:  # noqa: BLE001 - SystemExit included: exiting is a failed call
        # The built-in classes it derives from, so a program's own ``ValueError`` subclass is still
        # caught by the test's ``except ValueError`` (the harness rebuilds a genuine built-in).
        bases = [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]
        return {"raised": [type(exc).__name__, str(exc)[:500], bases[:8]]}
