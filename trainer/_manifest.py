"""A checkpoint's ``manifest.json``: the size and SHA-256 of every file, checked before loading.

A checkpoint is renamed into place only when complete, but a disk can still corrupt or truncate a
file afterwards (a full disk on a network file system, a copy cut short, a bad sector). Loading
such a file fails deep inside safetensors, pickle or json with messages that name no file
("incomplete metadata", ``EOFError``, ``JSONDecodeError``); the manifest turns that into one
sentence that names the file and says what is wrong with it, before any state is touched.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from passband.errors import CheckpointError

__all__ = ["MANIFEST", "write_manifest", "verify_manifest"]

MANIFEST = "manifest.json"


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST)


def write_manifest(root: Path) -> None:
    """Record every file under ``root`` (written last, so its presence means "complete")."""
    files = {
        p.relative_to(root).as_posix(): {"size": p.stat().st_size, "sha256": _digest(p)}
        for p in _files(root)
    }
    (root / MANIFEST).write_text(json.dumps({"version": 1, "files": files}, indent=1))


def verify_manifest(root: Path) -> bool:
    """Check ``root`` against its manifest; ``CheckpointError`` naming the first bad file.

    Returns False for a checkpoint written before manifests existed (nothing to check against).
    """
    path = root / MANIFEST
    if not path.exists():
        return False
    try:
        files = json.loads(path.read_text())["files"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{path} is damaged ({exc})") from None
    for rel, want in sorted(files.items()):
        f = root / rel
        if not f.is_file():
            raise CheckpointError(f"{f} is missing (listed in {MANIFEST})")
        size = f.stat().st_size
        if size != want["size"]:
            raise CheckpointError(
                f"{f} is {size} bytes, the manifest says {want['size']} (truncated or overwritten)"
            )
        if _digest(f) != want["sha256"]:
            raise CheckpointError(f"{f} does not match its SHA-256 in {MANIFEST} (corrupted)")
    return True
