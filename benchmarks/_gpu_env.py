"""Making passband importable on a bare GPU machine for ``gpu_check.py``: the checkout root and the
pure-Python wheels carried in ``build/gpu_wheels`` (``benchmarks/gpu_wheels.sh``). Standard
library only: it runs before passband or its dependencies can be imported.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def ensure_passband() -> str | None:
    """Make ``passband.*`` importable from this checkout when it is not installed (GPU box).

    ``passband/__init__.py`` finds the subpackages (top-level folders) in a source checkout, so the
    checkout root on ``sys.path`` is enough; pure-Python wheels carried in ``build/gpu_wheels``
    (``benchmarks/gpu_wheels.sh``) are unpacked into a temporary folder. Both go on ``sys.path``
    *and* ``PYTHONPATH``: the verifier worker processes import passband afresh.
    Returns None when ``passband.trainer`` imports, else what is missing and how to bring it.
    """
    try:
        import passband.trainer.grpo  # noqa: F401

        return None
    except ImportError:
        pass
    for name in [m for m in sys.modules if m == "passband" or m.startswith("passband.")]:
        del sys.modules[name]  # a half-imported package from the attempt above
    site = Path(tempfile.mkdtemp(prefix="passband-wheels-"))
    carried = _unpack_wheels(REPO / "build" / "gpu_wheels", site)
    sys.path[:0] = [str(REPO), str(site)]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO), str(site), os.environ.get("PYTHONPATH")])
    )
    importlib.invalidate_caches()
    try:
        import passband.trainer.grpo  # noqa: F401,F811
    except ImportError as exc:
        return (
            f"cannot import passband ({exc}; unpacked {carried} carried wheels); on a machine "
            "without network run benchmarks/gpu_wheels.sh where pip works and carry "
            "build/gpu_wheels"
        )
    return None


def _unpack_wheels(folder: Path, site: Path) -> int:
    """Unpack the pure-Python wheels in ``folder`` for this Python into ``site``; returns how many.

    A wheel is a zip of the files an install would write, so unpacking it is enough for
    ``py3-none-any`` wheels; one tagged for another Python (``py312``) is skipped elsewhere.
    A package that is already importable is left to the environment.
    """
    import zipfile

    here = f"py{sys.version_info.major}{sys.version_info.minor}"
    count = 0
    for wheel in sorted(folder.glob("*.whl")) if folder.is_dir() else ():
        name, _version, python_tag = wheel.name.split("-")[:3]
        if not ({"py3", here} & set(python_tag.split("."))):
            continue
        if importlib.util.find_spec(name.replace("-", "_").lower()) is not None:
            continue
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
        count += 1
    return count
