"""Whether a path the user names can be written as the flag means it, asked before any work."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["path_problem"]


def path_problem(path: str | os.PathLike, *, folder: bool) -> str | None:
    """Why ``path`` cannot be written as a folder (``folder=True``) or as a file, or None: it
    exists as the other kind, or a folder above it is a file (missing folders are created)."""
    p = Path(path)
    if p.exists():
        if folder and not p.is_dir():
            return "is a file, not a folder"
        if not folder and p.is_dir():
            return "is a directory, not a file"
        return None
    for parent in p.parents:
        if parent.exists():
            return None if parent.is_dir() else f"cannot be made: {str(parent)!r} is a file"
    return None
