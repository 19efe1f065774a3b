"""A program's changes to its arguments, applied to the caller's own objects (``Session``).

A call in one interpreter changes the caller's list when the function changes its argument; the
sandbox ships arguments as plain data, so the child reports each changed argument
(``args_after``) and ``write_back`` applies it: only genuine list/dict/set/bytearray objects are
updated, with plain data; anything malformed is ignored (the caller keeps its unchanged copy).
"""

from __future__ import annotations

from passband.sandbox import _wire as wire


def write_back(session, changes: list, args: tuple, kwargs: dict) -> None:
    from passband.sandbox.session import RemoteObject

    for change in changes[: len(args) + len(kwargs)]:
        if not isinstance(change, dict):
            continue
        i, k = change.get("i"), change.get("k")
        target = (
            args[i]
            if type(i) is int and 0 <= i < len(args)
            else kwargs.get(k)
            if type(k) is str
            else None
        )
        try:
            new = wire.decode(  # a result's depth: the test may pass it in again
                change.get("v"),
                lambda h: RemoteObject(session, handle=h),
                limit=wire.RESULT_DEPTH,
                budget_s=wire.MORE,  # the reply's budget: what its value left
            )
        except (wire.WireError, TypeError):
            continue
        if (
            type(target) is list
            and type(new) is list
            or type(target) is bytearray
            and type(new) is bytes
        ):
            target[:] = new
        elif type(target) in (dict, set) and type(new) is type(target):
            target.clear()
            target.update(new)
