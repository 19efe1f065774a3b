"""Multiprocessing's temporary directory, somewhere a later run can sweep.

Each process that starts workers (forkserver, pools) makes ``/tmp/pymp-XXXXXX`` and removes it at
a clean exit; ``kill -9`` leaves it behind for good, and its random name says nothing about who
made it. The CLI points multiprocessing at ``<tmp>/passband-mp-<uid>/<pid>`` instead, and every
start removes the directories there whose process is gone.
"""

from __future__ import annotations

import multiprocessing.process
import multiprocessing.util
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["use_swept_tempdir"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def use_swept_tempdir() -> Path | None:
    """Sweep the directories of dead runs, then make this process's and hand it to
    multiprocessing; None (multiprocessing's default) when the temporary directory is unusable."""
    config = multiprocessing.process.current_process()._config  # where get_temp_dir() looks
    if config.get("tempdir"):
        return Path(config["tempdir"])
    base = Path(tempfile.gettempdir()) / f"passband-mp-{os.getuid()}"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        for entry in base.iterdir():
            if entry.name.isdigit() and not _alive(int(entry.name)):
                shutil.rmtree(entry, ignore_errors=True)
        mine = base / str(os.getpid())
        mine.mkdir(exist_ok=True)
    except OSError:
        return None
    config["tempdir"] = str(mine)
    # multiprocessing removes a directory it made itself; this one is ours to remove
    multiprocessing.util.Finalize(None, shutil.rmtree, args=(str(mine), True), exitpriority=-100)
    return mine
