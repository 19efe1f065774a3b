"""The globals test code runs in: its own names, then builtins, then the candidate's module.

A name the tests use without importing it that names a module (the prompt imported it: ``math``,
``np``) is the harness's own module, never the program's object of that name: a program's ``np``
whose ``allclose`` is always True must not grade the program. ``sp`` is scipy in some datasets and
sympy in others: a test that uses it without importing it cannot be run (``NotRunnable``). A
builtin the tests call is the builtin, whatever the program binds to that name, except in the
second reading ``_code_calls`` runs for a task function named like a builtin (``shadowed``).
"""

from __future__ import annotations

import builtins
import importlib
import sys

from passband.sandbox import Session
from passband.verifiers._code_suite import NotRunnable

__all__ = ["MODULE_NAMES", "Namespace"]

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
    ) -> None:
        super().__init__()
        self._session, self.called, self._entry = session, called, entry
        self.shadowed = shadowed  # builtin names read as the program's (the second reading)
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
            return self._session.lookup(key)
        raise KeyError(key)
