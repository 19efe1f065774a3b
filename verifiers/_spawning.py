"""How passband starts its worker processes: forkserver (spawn as fallback), never the user's script.

Split from ``_deadline`` because it leans on multiprocessing internals and deserves its own
explanation. Two choices:
- ``forkserver``, not ``fork``: forking a process that has torch or other threads loaded can
  deadlock. The server preloads ``passband.verifiers._preload`` (the verifiers, with sympy's lazy
  start-up already paid), so a replacement worker is ready in milliseconds and fast from its first call.
- No ``__main__`` re-import in workers (see ``_NoMainSpawn``), so unguarded scripts and notebooks
  can call verifiers.
"""

from __future__ import annotations

import importlib
import multiprocessing
import types

__all__ = ["METHOD", "WorkerProcess", "context"]

_PRELOAD = "passband.verifiers._preload"  # the verifiers, with sympy warmed up (see there)
METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def context():
    ctx = multiprocessing.get_context(METHOD)
    if METHOD != "forkserver":
        return ctx
    # Add to whatever preload list others set (effective only before the server starts), minus
    # "__main__": the server must never re-run the user's script.
    from multiprocessing import forkserver

    preload = [
        m for m in getattr(forkserver._forkserver, "_preload_modules", []) if m != "__main__"
    ]
    if _PRELOAD not in preload:
        ctx.set_forkserver_preload(preload + [_PRELOAD])
    return ctx


class _NoMainSpawn:
    """``multiprocessing.spawn`` whose preparation data leaves out the parent's ``__main__``.

    By default a spawn/forkserver child re-runs the parent's main script as ``__mp_main__``; a
    script without an ``if __name__ == "__main__"`` guard would then recurse (or redo its work) in
    every worker. Our workers only ever need importable functions, so they skip it. The price:
    functions defined in ``__main__`` cannot be sent to a worker (``NotPortable`` says so).
    """

    def __getattr__(self, name: str):
        from multiprocessing import spawn

        return getattr(spawn, name)

    @staticmethod
    def get_preparation_data(name):
        from multiprocessing import spawn

        data = spawn.get_preparation_data(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data


def _process_class(method: str):
    """The ``Process`` class for ``method``, with a Popen whose ``_launch`` uses ``_NoMainSpawn``.

    The stdlib ``_launch`` is reused (same code object, other globals) rather than copied, so it
    follows the running Python version; if its shape is not the expected one, fall back to the
    plain class. Built at import time because the child unpickles the class by name.
    """
    base = multiprocessing.get_context(method).Process
    try:
        module_name = {"forkserver": "popen_forkserver", "spawn": "popen_spawn_posix"}[method]
        popen_module = importlib.import_module(f"multiprocessing.{module_name}")
        launch = popen_module.Popen._launch
        if launch.__code__.co_freevars or "spawn" not in launch.__code__.co_names:
            return base
    except (KeyError, ImportError, AttributeError):
        return base
    namespace = dict(popen_module.__dict__, spawn=_NoMainSpawn())
    popen_cls = type(
        "_Popen",
        (popen_module.Popen,),
        {
            "_launch": types.FunctionType(
                launch.__code__, namespace, "_launch", launch.__defaults__
            ),
            "__module__": __name__,
        },
    )
    return type(
        "WorkerProcess", (base,), {"_Popen": staticmethod(popen_cls), "__module__": __name__}
    )


WorkerProcess = _process_class(METHOD)
