"""One run per ``output_dir``: an exclusive lock, no silent overwrite, leftovers swept at start.

A run takes ``output_dir/.lock`` with ``flock`` (released by the kernel when the process dies,
even by ``kill -9``, so a crashed run never leaves a stale lock). A second run on the same directory
is refused with the holder's pid. A directory that holds a previous run's files (metrics, groups,
config, checkpoints) is continued only with ``resume=True`` and replaced only with
``overwrite=True`` (its ``report/`` page too); otherwise the run refuses before writing
anything. A ``config.json`` alone is a run that stopped before finishing a step (a reward that
fails at the first rollout, say): it holds nothing a new run could lose, so the next run
replaces it.

Holding the lock also makes it safe to sweep what killed runs leave behind: half-written
checkpoints (``checkpoints/.tmp_step_*``, ``.old_step_*``) and temporary log files
(``.metrics.jsonl.tmp*``, ``.groups.jsonl.tmp*`` ...). Only rank 0 claims the directory.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import warnings
from pathlib import Path

from passband.errors import RunDirError

__all__ = ["OutputDirLock", "claim_output_dir", "RUN_FILES"]

# What a run writes; any of these means the directory holds a run.
RUN_FILES = (
    "metrics.jsonl",
    "groups.jsonl",
    "config.json",
    "curriculum.json",
    "checkpoints",
    "tensorboard",
)
_LEFTOVERS = (".*.tmp*", "checkpoints/.tmp_step_*", "checkpoints/.old_step_*")
# Made from a run's files, not by the run: ``passband report``'s default folder. It alone is no
# run, but a replaced run takes it along (its page would describe the old run).
_DERIVED = ("report",)


class OutputDirLock:
    """The held lock; ``release()`` (or process exit) frees the directory for the next run."""

    def __init__(self, path: Path | None, fd: int | None):
        self.path, self._fd = path, fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def claim_output_dir(
    output_dir: str | os.PathLike, *, resume: bool, overwrite: bool = False, enabled: bool = True
) -> OutputDirLock:
    """Lock ``output_dir`` for this run, refuse to clobber a previous run, sweep leftovers.

    ``enabled=False`` (ranks other than 0) takes no lock and changes nothing. It refuses a
    directory with checkpoints as rank 0 does, so those ranks stop too instead of waiting for it;
    it looks at nothing else, because rank 0 may already be writing a fresh run's logs there.
    """
    root = Path(output_dir)
    if root.exists() and not root.is_dir():
        raise RunDirError(f"output_dir {str(root)!r} is a file, not a directory")
    if not enabled:
        if not (resume or overwrite) and any((root / "checkpoints").glob("step_*/state.json")):
            raise RunDirError(
                f"output_dir {str(root)!r} holds a previous run (checkpoints); "
                "pass --resume or --overwrite, or choose another output_dir"
            )
        return OutputDirLock(None, None)
    root.mkdir(parents=True, exist_ok=True)
    lock = _lock(root)
    try:
        for name in _previous_run(root, resume, overwrite):  # only with overwrite = true
            _remove(root / name)
        sweep_leftovers(root)
    except BaseException:
        lock.release()
        raise
    return lock


def check_output_dir(output_dir: str | os.PathLike, *, resume: bool, overwrite: bool) -> None:
    """What ``claim_output_dir`` would refuse, found without touching anything: the CLI asks it
    before loading a model, so a run that cannot start says so in a second, not after minutes.
    (Only where the claim will be made, rank 0: the other ranks may see its fresh logs.)"""
    root = Path(output_dir)
    if root.exists() and not root.is_dir():
        raise RunDirError(f"output_dir {str(root)!r} is a file, not a directory")
    if (root / ".lock").exists():
        fd = os.open(root / ".lock", os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # taken and dropped: nobody holds it
        except BlockingIOError:
            raise _in_use(root, fd) from None
        finally:
            os.close(fd)
    if root.is_dir():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the claim warns about a resume with no checkpoint
            _previous_run(root, resume, overwrite)


def _previous_run(root: Path, resume: bool, overwrite: bool) -> list[str]:
    """The previous run's files to remove; ``RunDirError`` when they may not be touched."""
    previous = [name for name in RUN_FILES if (root / name).exists()]
    resumable = any((root / "checkpoints").glob("step_*/state.json"))
    if previous == ["config.json"]:  # a run that stopped before its first step: nothing to lose
        if resume:
            warnings.warn(f"resume=True but {root} has no checkpoint; starting fresh", stacklevel=4)
        return previous
    if not previous:
        if resume:
            warnings.warn(f"resume=True but {root} has no checkpoint; starting fresh", stacklevel=4)
        return []
    if resume and resumable:
        return []
    if overwrite:
        return previous + [name for name in _DERIVED if (root / name).exists()]
    listed = ", ".join(previous)
    if resume:  # a fresh start would replace logs that no checkpoint can continue
        raise RunDirError(
            f"output_dir {str(root)!r} holds a previous run ({listed}) but no "
            "checkpoint to resume from; pass --overwrite (overwrite = true) to "
            "replace it, or choose another output_dir"
        )
    if not resumable:  # killed before its first checkpoint: --resume would only fail
        raise RunDirError(
            f"output_dir {str(root)!r} holds a previous run ({listed}) that stopped before "
            "its first checkpoint, so there is nothing to resume; pass --overwrite (overwrite "
            "= true) to replace it, or choose another output_dir"
        )
    raise RunDirError(
        f"output_dir {str(root)!r} holds a previous run ({listed}); pass --resume "
        "(resume = true) to continue it, --overwrite (overwrite = true) to replace "
        "it, or choose another output_dir"
    )


def _lock(root: Path) -> OutputDirLock:
    path = root / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        error = _in_use(root, fd)
        os.close(fd)
        raise error from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return OutputDirLock(path, fd)


def _in_use(root: Path, fd: int) -> RunDirError:
    """The refusal for a directory whose lock (open as ``fd``) a live run holds."""
    holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
    return RunDirError(
        f"output_dir {str(root)!r} is in use by another run (pid {holder}); "
        "wait for it to finish or choose another output_dir"
    )


def sweep_leftovers(root: Path) -> list[Path]:
    """Remove temporary files and directories that killed runs left in ``root``."""
    swept = []
    for pattern in _LEFTOVERS:
        for path in root.glob(pattern):
            _remove(path)
            swept.append(path)
    return swept


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
