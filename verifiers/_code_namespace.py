"""The globals test code runs in: its own names, then builtins, then the candidate's module.

A name the tests use without importing it that names a module (the prompt imported it: ``math``,
``np``) is the harness's own module, never the program's object of that name: a program's ``np``
whose ``allclose`` is always True must not grade the program. ``sp`` is scipy in some datasets and
sympy in others: a test that uses it without importing it cannot be run (``NotRunnable``). A
builtin the tests call is the builtin, whatever the program binds to that name, except in the
second reading ``_code_calls`` runs for a task function named like a builtin (``shadowed``).
A name of a standard-library helper (``library_named``: ``isclose``, ``sqrt``, ``Counter``,
``median``) that the tests use unimported and the program binds is the harness's own object
(``stand_in``: from the module the program imported it from, else one the program or the tests
import, else the first naming it), except in the reading that swaps in the program's
(``swapped``, one name at a time: ``_code_calls``); ``used`` lists those the tests looked up.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import sys

from passband.sandbox import Session
from passband.verifiers._code_suite import COMPARATORS, NotRunnable

__all__ = ["MODULE_NAMES", "Namespace", "Prefer", "library_named", "prefer", "stand_in"]

# Module aliases tests use without importing them (the prompt did): the harness's own module,
# never the program's object of that name (a program's ``np`` whose ``allclose`` is always True).
_ALIASES = {
    "np": "numpy",
    "pd": "pandas",
    "plt": "matplotlib.pyplot",
    "nx": "networkx",
    "sns": "seaborn",
    "tf": "tensorflow",
    "jnp": "jax.numpy",
}
_THIRD_PARTY = frozenset(
    {"numpy", "pandas", "scipy", "sympy", "networkx", "matplotlib", "seaborn", "sklearn", "torch"}
    | {"tensorflow", "jax"}
)  # module names the harness imports itself
_AMBIGUOUS = {"sp": "scipy or sympy"}  # aliases whose module cannot be told
MODULE_NAMES = frozenset(_ALIASES) | _THIRD_PARTY | frozenset(_AMBIGUOUS)
# standard-library modules whose helpers tests use unimported (the prompt or the program imported
# them). Not ``random``: its functions share the program's generator (the tests' ``seed(0)`` seeds
# the program's), so they stay the program's, as does any name the program binds from it.
_HELPER_MODULES = (
    "math collections itertools functools heapq bisect statistics fractions decimal string copy "
    "operator re datetime typing cmath html"
).split()
# an endless iterator (a task's ``def count`` read as ``itertools.count``: ``list()`` never ends)
# and decimal's context (the harness's own state)
_NEVER = frozenset({"count", "cycle", "repeat", "getcontext", "setcontext", "localcontext"})
Prefer = tuple[tuple[tuple[str, str], ...], tuple[str, ...]]  # (name, module) pairs, modules


@functools.cache
def _index() -> dict[str, tuple[str, ...]]:
    """name -> the helper modules that define it, in ``_HELPER_MODULES`` order (``escape``: re,
    html). Not a builtin or module name, not one letter (``e``)."""
    found: dict[str, list[str]] = {}
    for module in _HELPER_MODULES:
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", None) or dir(mod):
            if len(name) > 1 and not name.startswith("_") and hasattr(mod, name):
                found.setdefault(name, []).append(module)
    for name, (module, _) in COMPARATORS.items():
        found.setdefault(name, []).append(module)
    return {
        n: tuple(ms)
        for n, ms in found.items()
        if n not in _NEVER and not hasattr(builtins, n) and n not in sys.stdlib_module_names
    }


def library_named(name: str) -> bool:
    """A name the standard library's helpers (or ``COMPARATORS``) define."""
    return name in _index()


@functools.lru_cache(maxsize=1024)
def prefer(*sources: str) -> Prefer:
    """Where ``sources`` (the program, then the tests) take library names from: ``from cmath
    import isclose`` -> ("isclose", "cmath"), and the modules they import (``import html``), so
    an ambiguous name is read from the module meant (cmath's ``isclose``, html's ``escape``)."""
    pairs, modules = [], []
    for source in sources:
        try:
            tree = ast.parse(source or "")
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                pairs += [(a.asname or a.name, node.module) for a in node.names]
                modules.append(node.module)
            elif isinstance(node, ast.Import):
                modules += [a.name for a in node.names]
    return tuple(pairs), tuple(modules)


def stand_in(name: str, where: Prefer) -> tuple[bool, object]:
    """(found, the harness's object) for a ``library_named`` name: from the module ``where``
    says it was imported from, else one imported there, else the first that defines it. Not
    found where that module is not installed here (numpy's ``allclose``)."""
    modules = _index()[name]
    pairs, imported = where
    chosen = [m for n, m in pairs if n == name and m in modules]
    chosen += [m for m in imported if m in modules] + list(modules)
    attr = COMPARATORS[name][1] if chosen[0] not in _HELPER_MODULES else name
    try:
        return True, getattr(importlib.import_module(chosen[0]), attr)
    except (ImportError, AttributeError):
        return False, None


class Namespace(dict):
    """Globals for test code: its own names, then builtins, then the candidate's module.

    A module name the tests use but do not import (they relied on the program's ``import math``
    or the prompt's ``import numpy as np``) is the harness's own module, never the program's object
    of that name, unless the tests call the name itself (then it is the program's function that
    happens to share it).
    """

    def __init__(
        self,
        session: Session,
        called: frozenset[str] = frozenset(),
        entry: str = "",
        shadowed: frozenset[str] = frozenset(),
        swapped: frozenset[str] = frozenset(),
        where: Prefer = ((), ()),
    ) -> None:
        super().__init__()
        self._session, self.called, self._entry = session, called, entry
        self.shadowed = shadowed  # builtin names read as the program's (the second reading)
        self.swapped, self.where = swapped, where  # library names read as the program's
        self.used: set[str] = set()  # library names the program binds, read as the harness's
        self.refused: list[str] = []  # why a test cannot be run, even if the test caught it

    def refuse(self, why: str) -> NotRunnable:
        """Note that the tests cannot be run as their author meant (``Runner`` turns it into a
        harness check after the unit, so test code that catches the exception, such as
        ``pytest.raises(Exception)``, cannot make it pass) and return the exception to raise."""
        self.refused.append(why)
        return NotRunnable(why)

    def __missing__(self, key: str):
        if (key == self._entry or key in self.shadowed) and key in self._session.names:
            return self._session.lookup(key)  # the function under test, named like a builtin
        if hasattr(builtins, key):  # the builtin, whatever the program binds to its name: a
            return getattr(builtins, key)  # program's ``len`` never answers for the tests
        if key in sys.stdlib_module_names and key not in self.called and not key.startswith("_"):
            try:
                module = importlib.import_module(key)
            except ImportError:
                pass
            else:
                self[key] = module
                return module
        if (key in _ALIASES or key in _THIRD_PARTY) and key not in self.called:
            try:  # not installed here: the name is undefined, as it is for the tests
                module = importlib.import_module(_ALIASES.get(key, key))
            except ImportError:
                raise KeyError(key) from None
            self[key] = module
            return module
        if key in _AMBIGUOUS and key not in self.called:
            why = f"the tests use {key!r} ({_AMBIGUOUS[key]}?) without importing it"
            raise self.refuse(f"{why}: the harness cannot tell which module is meant")
        if key in self._session.names:
            return self.program(key)
        raise KeyError(key)

    def program(self, key: str):
        """The program's ``key`` for the tests; for a ``library_named`` one not ``swapped`` in
        this reading (nor the entry point), the harness's own object (``stand_in``)."""
        if library_named(key) and key not in self.swapped and key != self._entry:
            found, value = stand_in(key, self.where)
            if not found:
                raise KeyError(key)
            self.used.add(key)
            self[key] = value
            return value
        return self._session.lookup(key)
