"""TRL reward functions in passband: ``from_trl_reward`` and the rule that applies it.

A function written for TRL's ``reward_funcs`` (``(prompts, completions, **columns) -> list``, one
value per sample) becomes a passband reward ``(completion, **row)``, called once per completion.
A callable that takes ``completions`` and not ``completion`` is one (``is_trl_reward``): training,
``passband score``, ``passband verify`` and a ``Reward``'s terms apply ``from_trl_reward`` to it by
themselves, so a TRL reward function can be passed as it is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

__all__ = ["from_trl_reward", "is_trl_reward", "TRL_EXTRAS"]

# Keyword arguments TRL adds next to the dataset columns; they are not reference fields.
TRL_EXTRAS = frozenset(
    {"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"}
)


def is_trl_reward(fn: object) -> bool:
    """Whether ``fn`` is written for TRL's ``reward_funcs``: a plain callable whose parameters
    name ``completions`` (a list, one per sample) and not passband's ``completion``."""
    if isinstance(fn, (str, _FromTrl)) or not callable(fn):
        return False
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False
    return "completions" in params and "completion" not in params


def from_trl_reward(fn: Callable[..., object]) -> Callable[..., object]:
    """A passband reward ``(completion, **row) -> value`` from a TRL reward function.

    Each call passes one sample, as TRL passes a batch: ``prompts=[prompt]``,
    ``completions=[completion]`` and every other column of the row as a one-item list; a row
    whose prompt is a list of chat messages (``messages``, or a conversational ``prompt``) gets its
    completion as ``[{"role": "assistant", "content": completion}]``, as TRL gives it. The one
    value returned is read like any reward's: a number (a pass at or above
    ``success_threshold``), a bool, a ``Verdict``, or ``None``, TRL's "not applicable", which
    passband counts as ``error`` (not a trial, not a zero). TRL's ``completion_ids`` and
    ``trainer_state`` are not passed. ``passband score`` gives no prompt column to a verifier:
    there ``prompts`` is ``[None]``. ``as_trl_reward``'s functions give back the reward they wrap.
    """
    if getattr(fn, "wraps_passband", False) is True:  # as_trl_reward's
        return fn.reward
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
        self.reference_fields = _trl_columns(fn)  # the columns a row must have

    def __repr__(self) -> str:
        return f"from_trl_reward({self.fn!r})"

    def __call__(self, completion: str, **row: object) -> object:
        prompt = row.pop("prompt", None)
        messages = row.pop("messages", None)
        prompt = messages if prompt is None else prompt
        chat = isinstance(prompt, (list, tuple))
        sample = [{"role": "assistant", "content": completion}] if chat else completion
        columns = {k: [v] for k, v in row.items() if k not in TRL_EXTRAS and k != "num_tokens"}
        values = self.fn(prompts=[prompt], completions=[sample], **columns)
        if not isinstance(values, (list, tuple)) or len(values) != 1:
            got = f"{len(values)} values" if isinstance(values, (list, tuple)) else repr(values)
            raise TypeError(
                f"a TRL reward function returns a list with one value per completion; "
                f"{self.__name__} returned {got} for one completion"
            )
        return values[0]


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
