"""Prompt-id and config helpers of the curriculum state: plain JSON ids, the id index, and a
JSON form of a ``CurriculumConfig``."""

from __future__ import annotations

import numbers
import operator
from collections.abc import Iterable

import numpy as np


def plain_ids(ids: Iterable) -> list:
    """Ids as plain ``int`` / ``str`` (numpy scalars included), so the state is JSON."""
    if isinstance(ids, range):
        return list(ids)
    out = []
    for pid in ids:
        if type(pid) is int or type(pid) is str:  # the common case, without the ABC checks
            out.append(pid)
        elif isinstance(pid, numbers.Integral) and not isinstance(pid, bool):
            out.append(int(pid))
        elif isinstance(pid, str):
            out.append(str(pid))
        else:
            raise TypeError(f"prompt ids must be int or str (for a JSON state), got {pid!r}")
    return out


def build_index(ids: list) -> dict:
    index = dict(zip(ids, range(len(ids))))
    if len(index) != len(ids):
        seen: set = set()
        for pid in ids:
            if pid in seen:
                raise ValueError(f"duplicate prompt id {pid!r}")
            seen.add(pid)
    return index


def jsonable(config: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in config.items()}


def whole_number(x) -> int | None:
    """``x`` as an int when it is a whole number (3, 3.0, numpy ints, a 0-d tensor), else None
    (0.7, "3", True)."""
    if isinstance(x, (bool, np.bool_, str, bytes)):
        return None
    try:
        return operator.index(x)
    except TypeError:
        pass
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return int(f) if f.is_integer() else None


def plain_id(prompt_id):
    """``prompt_id`` as the index holds it; a bool, refused as an id, matches none (``True``
    would otherwise look up id 1)."""
    if isinstance(prompt_id, (bool, np.bool_)):
        return (bool(prompt_id),)  # a key no id has
    return int(prompt_id) if isinstance(prompt_id, np.integer) else prompt_id
