"""TRL reward functions in passband: ``from_trl_reward`` and the rule that applies it.

A function written for TRL's ``reward_funcs`` (``(prompts, completions, **columns) -> list``, one
value per sample) becomes a passband reward ``(completion, **row)``, called once per completion.
A callable whose first parameter is ``completions`` or ``completion_ids`` (or ``prompts``, then
one of them) is one (``is_trl_reward``): training, ``passband score``, ``passband verify``,
``check_verifier`` and a ``Reward``'s terms apply ``from_trl_reward`` to it by themselves
(``adapted``), so a TRL reward function can be passed as it is. ``asked_messages`` is the one
rule for what of a chat row the model is asked.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping

__all__ = [
    "adapted",
    "from_trl_reward",
    "is_trl_reward",
    "is_adapted",
    "asked_messages",
    "as_chat",
    "TRL_EXTRAS",
    "TOKEN_IDS",
]

TOKEN_IDS = "_completion_ids"  # the reference key the trainer gives a completion's token ids in
# Keyword arguments TRL adds next to the dataset columns; they are not reference fields.
TRL_EXTRAS = frozenset(
    {"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"}
)


def is_trl_reward(fn: object) -> bool:
    """Whether ``fn`` is written for TRL's ``reward_funcs``: a plain callable whose first
    parameter is ``completions`` (a list, one per sample) or ``completion_ids``, or ``prompts``
    followed by one of them. A passband reward's first parameter is the completion itself, so a
    passband reward that reads a column named ``completions`` is not one."""
    if isinstance(fn, (str, _FromTrl)) or not callable(fn):
        return False
    try:  # its own signature: a passband reward wrapping a TRL one (functools.wraps) is not one;
        own = inspect.signature(fn, follow_wrapped=False).parameters  # a bare (*args, **kwargs)
        if all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in own.values()):
            own = inspect.signature(fn).parameters  # decorator says nothing: the wrapped one does
        names = list(own)
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False
    if not names or "completion" in names:
        return False
    batch = {"completions", "completion_ids"}  # TRL's overlong penalty reads only the ids
    return names[0] in batch or (names[0] == "prompts" and bool(batch & set(names)))


def adapted(reward):
    """``reward`` as passband calls it: a TRL reward function through ``from_trl_reward``,
    anything else as it is. Every entry point (training, ``passband score`` and ``verify``, a
    ``Reward``'s terms, ``check_verifier``) goes through it."""
    return from_trl_reward(reward) if is_trl_reward(reward) else reward


def is_adapted(reward: object) -> bool:
    """Whether ``reward`` is (or, under the success rule's wrapper, holds) ``from_trl_reward``'s
    callable: its callers give it the prompt, and leave out a ``completion`` column as TRL does."""
    return isinstance(reward, _FromTrl) or isinstance(getattr(reward, "fn", None), _FromTrl)


def from_trl_reward(fn: Callable[..., object]) -> Callable[..., object]:
    """A passband reward ``(completion, **row) -> value`` from a TRL reward function.

    Each call passes one sample, as TRL passes a batch: ``prompts=[prompt]``,
    ``completions=[completion]`` and every other column of the row as a one-item list (a
    ``completion`` column, TRL's prompt-completion data, is left out as TRL leaves it out). A row
    whose prompt is a list of chat messages (``messages`` without a final assistant message, as
    the trainer prompts it, or a conversational ``prompt``) gets its completion as
    ``[{"role": "assistant", "content": completion}]``, as TRL gives it. The one value returned
    (an async function's is awaited) is read like any reward's: a number (a pass at or above
    ``success_threshold``; a NumPy or 0-d tensor one too), a bool, a ``Verdict``, or ``None``,
    TRL's "not applicable", which passband counts as ``error`` (not a trial, not a zero).

    What differs from TRL: each call sees one completion, so a reward that compares the
    completions of a batch with each other scores each alone; ``completion_ids`` are passed in
    training only (``passband score`` and ``verify`` have text alone); ``trainer_state``,
    ``log_metric`` and ``log_extra`` are not passed. The prompt reaches the
    function in training, ``passband score`` and ``passband verify``; a ``Reward``'s terms get
    ``prompts=[None]`` and text completions (a ``Reward`` gives its terms no prompt column).
    ``as_trl_reward``'s functions give back the reward they wrap, with their ``fields``.
    """
    if getattr(fn, "wraps_passband", False) is True:  # as_trl_reward's
        return fn.passband_reward()
    if isinstance(fn, _FromTrl):
        return fn
    if not callable(fn):
        raise TypeError(f"from_trl_reward needs a callable, got {type(fn).__name__}")
    return _FromTrl(fn)


class _FromTrl:
    """``from_trl_reward``'s callable (picklable when ``fn`` is)."""

    def __init__(self, fn: Callable[..., object]) -> None:
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)  # journal keys stay put
        self.__module__ = getattr(fn, "__module__", None) or type(self).__module__
        self.reference_fields = _trl_columns(fn)  # the columns a row must have
        self.takes_ids = _takes(fn, "completion_ids")  # TRL's own functions all take **kwargs

    def __repr__(self) -> str:
        return f"from_trl_reward({self.fn!r})"

    def __call__(self, completion: str, **row: object) -> object:
        prompt = _prompt(row.pop("prompt", None), row.pop("messages", None))
        chat = isinstance(prompt, (list, tuple))
        sample = [{"role": "assistant", "content": completion}] if chat else completion
        ids = row.pop(TOKEN_IDS, None)  # the trainer's, never a dataset column's
        columns = {k: [v] for k, v in row.items() if k not in _NOT_COLUMNS}
        if ids is not None and self.takes_ids:
            columns["completion_ids"] = [ids]
        values = self.fn(prompts=[prompt], completions=[sample], **columns)
        if inspect.isawaitable(values):  # TRL awaits async reward functions too
            values = asyncio.run(_awaited(values))
        if hasattr(values, "tolist") and not isinstance(values, (list, tuple)):
            values = values.tolist()  # a NumPy array or a tensor, one value per completion
        if not isinstance(values, (list, tuple)) or len(values) != 1:
            got = f"{len(values)} values" if isinstance(values, (list, tuple)) else repr(values)
            raise TypeError(
                f"a TRL reward function returns a list with one value per completion; "
                f"{self.__name__} returned {got} for one completion"
            )
        return values[0]


_NOT_COLUMNS = TRL_EXTRAS | {"num_tokens", "completion"}


def _prompt(prompt, messages):
    """The prompt as the trainer gives it to the model: ``prompt``, else ``asked_messages``."""
    return prompt if prompt is not None or messages is None else asked_messages(messages)


def asked_messages(messages) -> list | str:
    """The chat messages of a ``messages`` column that the model is asked: all but a final
    assistant message (an SFT row's reference answer, which the model must not see). Training,
    ``passband score`` and TRL reward functions all read a messages column this way. Messages
    stored as JSON text (a CSV cell) are read as messages (``as_chat``); other text is a text
    prompt, never a list of its characters."""
    messages = as_chat(messages)
    if not isinstance(messages, (list, tuple)):  # text, or no prompt at all (NaN, a number):
        return messages  # the row check names it
    messages = list(messages)
    if messages and isinstance(messages[-1], Mapping) and messages[-1].get("role") == "assistant":
        messages = messages[:-1]
    return messages


def as_chat(value):
    """``value``, or the chat messages it holds as JSON text: a list of ``{"role", "content"}``
    objects (``"tool_calls"`` in place of the content too) written into one cell (a CSV cell, as
    ``passband score`` writes lists there, or a JSON-encoded conversation). Any other value is
    returned as it is."""
    if not isinstance(value, str) or not value.lstrip().startswith("["):
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    chat = (
        isinstance(parsed, list)
        and bool(parsed)
        and all(
            isinstance(m, dict) and "role" in m and ("content" in m or "tool_calls" in m)
            for m in parsed
        )
    )
    return parsed if chat else value


async def _awaited(awaitable):
    return await awaitable


def _takes(fn, name: str) -> bool:
    """Whether ``fn`` accepts the keyword ``name`` (by name or through ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True  # no signature to read: as TRL, pass it
    return any(p.name == name or p.kind == p.VAR_KEYWORD for p in params)


def _trl_columns(fn) -> tuple[str, ...]:
    """The dataset columns a TRL reward function cannot do without: its parameters without a
    default, other than what TRL itself passes."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    own = TRL_EXTRAS | {"prompts", "completions"}
    return tuple(
        p.name
        for p in params
        if p.kind in named and p.default is inspect.Parameter.empty and p.name not in own
    )
