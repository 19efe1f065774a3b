"""Remove a directory tree of any depth (standard library only: the zygote imports it as a
top-level module, the pool as ``passband.sandbox._rmtree``).

A program can nest directories thousands deep (``os.mkdir('d'); os.chdir('d')`` in a loop).
``shutil.rmtree`` recurses once per level and raises ``RecursionError`` there, which its
``ignore_errors`` does not catch: the worker died and a wrong program's verdict became a masked
``error``. Here the walk is a loop: one directory descriptor open at a time (paths relative to
it, so no path grows past ``PATH_MAX``), a stack of the names still to visit, each directory
listed once. Errors are ignored, as ``rmtree(ignore_errors=True)`` ignores them.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["remove_tree"]

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def remove_tree(path: str) -> None:
    """``rm -rf path``, without recursion; never raises."""
    try:
        shutil.rmtree(path, ignore_errors=True)  # the common, shallow case
    except RecursionError:
        pass
    if os.path.lexists(path):  # too deep for its recursion (or its descriptors): a loop
        try:
            _remove_deep(path)
        except OSError:
            pass


def _remove_deep(path: str) -> None:
    fd = os.open(path, _DIR_FLAGS)
    pending = [_subdirs_after_files(fd)]  # per open level: the subdirectories left to remove
    names: list[str] = []  # the name of each level below ``path``, in its parent
    while True:
        if pending[-1]:
            name = pending[-1].pop()
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:  # gone, or a symlink: unlink what is there
                _quiet(os.unlink, name, fd)
                continue
            os.close(fd)
            fd = child
            names.append(name)
            pending.append(_subdirs_after_files(fd))
            continue
        pending.pop()
        if not names:
            os.close(fd)
            _quiet(os.rmdir, path, None)
            return
        parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
        os.close(fd)
        fd = parent
        _quiet(os.rmdir, names.pop(), fd)


def _subdirs_after_files(fd: int) -> list[str]:
    """Unlink the files of the directory open at ``fd``; return its subdirectories' names."""
    subdirs = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(entry.name)
            else:
                _quiet(os.unlink, entry.name, fd)
    return subdirs


def _quiet(op, name: str, dir_fd: int | None) -> None:
    try:
        op(name, dir_fd=dir_fd)
    except OSError:
        pass
