"""Prompt-id and config helpers of the curriculum state: plain JSON ids, the id index, and a
JSON form of a ``CurriculumConfig``."""

from __future__ import annotations

import numbers
from collections.abc import Iterable


def plain_ids(ids: Iterable) -> list:
    """Ids as plain ``int`` / ``str`` (numpy scalars included), so the state is JSON."""
    out = []
    for pid in ids:
        if isinstance(pid, numbers.Integral) and not isinstance(pid, bool):
            out.append(int(pid))
        elif isinstance(pid, str):
            out.append(str(pid))
        else:
            raise TypeError(f"prompt ids must be int or str (for a JSON state), got {pid!r}")
    return out


def build_index(ids: list) -> dict:
    index: dict = {}
    for i, pid in enumerate(ids):
        if pid in index:
            raise ValueError(f"duplicate prompt id {pid!r}")
        index[pid] = i
    return index


def jsonable(config: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in config.items()}
