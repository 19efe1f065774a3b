"""Programmatic reward functions: a registry, the ``Verdict`` type, built-in verifiers.

Import-light by design: no torch, no transformers. Built-in verifier modules register themselves
on import below.
"""

from passband.verifiers.registry import get, names, register
from passband.verifiers.verdict import Verdict

__all__ = ["Verdict", "get", "names", "register"]
