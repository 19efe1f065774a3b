"""The worker's files where any user can read them (a worker started under another uid).

The warm worker (``_zygote.py`` and the standard-library modules it imports) is started from the
package directory. A worker started as a different, unprivileged user (``nobody``, as the
no-root isolation test does, or a service account) must be able to read those files, but a
checkout in a private directory (mode 700, as ``mktemp -d`` and many home directories are) is
unreadable to it: the worker dies with ``ModuleNotFoundError: No module named '_wire'``.
``worker_dir(readable_by_all=True)`` returns the package directory when every other user can
already read it, and otherwise a copy of the worker's files in the system temporary directory
(directories 755, files 644, named by their content hash, so it is made once and never stale).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile

__all__ = ["WORKER_FILES", "worker_dir"]

WORKER_FILES = (
    "_zygote.py",
    "_zygote_setup.py",
    "_child.py",
    "_collect.py",
    "_isolation.py",
    "_wire.py",
    "_wire_checks.py",
    "_rmtree.py",
)
_HERE = os.path.dirname(os.path.abspath(__file__))


def _readable_by_others(directory: str) -> bool:
    path = directory
    while True:  # every ancestor must let others through (x), the directory itself be listable
        mode = os.stat(path).st_mode
        if not mode & stat.S_IXOTH or (path == directory and not mode & stat.S_IROTH):
            return False
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return all(os.stat(os.path.join(directory, f)).st_mode & stat.S_IROTH for f in WORKER_FILES)


def worker_dir(readable_by_all: bool = False) -> str:
    """Directory holding the worker's files; with ``readable_by_all`` one every user can read."""
    if not readable_by_all or _readable_by_others(_HERE):
        return _HERE
    digest = hashlib.sha256()
    for name in WORKER_FILES:
        with open(os.path.join(_HERE, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    base = os.path.join(tempfile.gettempdir(), f"passband-sandbox-{digest.hexdigest()[:16]}")
    target = os.path.join(base, "worker")
    if os.path.isfile(os.path.join(target, WORKER_FILES[-1])):
        return target
    staging = tempfile.mkdtemp(prefix=".passband-sandbox-", dir=tempfile.gettempdir())
    os.makedirs(os.path.join(staging, "worker"))
    for name in WORKER_FILES:
        shutil.copyfile(os.path.join(_HERE, name), os.path.join(staging, "worker", name))
        os.chmod(os.path.join(staging, "worker", name), 0o644)
    for d in (staging, os.path.join(staging, "worker")):
        os.chmod(d, 0o755)
    try:
        os.rename(staging, base)  # atomic: a concurrent caller either wins or finds it complete
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return target
