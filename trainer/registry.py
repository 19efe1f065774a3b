"""Registries of the trainer's named variants: advantage estimators and loss aggregations.

``GRPOConfig`` validates ``advantage`` / ``loss_aggregation`` here, before torch loads: the config
is read by the CLI and by ``passband doctor`` first. So each registry knows the names its built-in
module registers without importing it, and imports that module (torch) only to hand a function
out. A name registered by a user (``@register_advantage("mine")``) is accepted like a built-in.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator

from passband.errors import UnknownNameError

__all__ = [
    "Registry",
    "ADVANTAGE_REGISTRY",
    "AGGREGATION_REGISTRY",
    "register_advantage",
    "register_aggregation",
]


class Registry:
    """Name -> function, with a duplicate check and an unknown-name error that suggests a name."""

    def __init__(self, kind: str, module: str, builtins: tuple[str, ...]) -> None:
        self.kind = kind
        self.functions: dict[str, Callable] = {}
        # Why the built-in names are spelled here: see the module docstring; a test pins that
        # importing ``module`` registers exactly these.
        self._module = module
        self._builtins = builtins

    def register(self, name: str) -> Callable[[Callable], Callable]:
        """Decorator: ``@register_advantage("mine")``; a name already taken raises."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r}")

        def decorator(fn: Callable) -> Callable:
            if name in self.functions or (name in self._builtins and fn.__module__ != self._module):
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self.functions[name] = fn
            return fn

        return decorator

    def names(self) -> list[str]:
        """Every accepted name: the built-ins first, then the registered ones in order."""
        return [*self._builtins, *(n for n in self.functions if n not in self._builtins)]

    def __contains__(self, name: object) -> bool:
        return name in self._builtins or name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> Callable:
        """The function registered as ``name``; an unknown name raises and lists the known ones."""
        if name not in self.functions:
            importlib.import_module(self._module)  # registers the built-ins
        try:
            return self.functions[name]
        except KeyError:
            close = difflib.get_close_matches(str(name), self.names(), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}.{hint} Known: {', '.join(self.names())}"
            ) from None


ADVANTAGE_REGISTRY = Registry(
    "advantage", "passband.trainer.advantages", ("group", "no_std", "batch_std")
)
AGGREGATION_REGISTRY = Registry(
    "loss aggregation",
    "passband.trainer.losses",
    ("token_mean", "seq_mean_token_mean", "constant_norm"),
)
register_advantage = ADVANTAGE_REGISTRY.register
register_aggregation = AGGREGATION_REGISTRY.register
