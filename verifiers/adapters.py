"""Plug passband rewards into other trainers (TRL's ``reward_funcs``, verl's ``compute_score``),
and TRL reward functions into passband.

``as_trl_reward`` and ``as_verl_compute_score`` wrap a registered verifier name, a ``Reward`` or a
plain callable, score through the hard-timeout worker machinery, and keep "could not check" apart
from "wrong": TRL gets ``None`` for ``error``/``timeout`` (it ignores those), verl gets a dict
whose ``checkable`` says so.

``from_trl_reward`` goes the other way: a function written for TRL's ``reward_funcs``
(``(prompts, completions, **columns) -> list``, one value per sample) becomes a passband reward
``(completion, **row)``, called once per completion. Training, ``passband score`` and
``passband verify`` apply it by themselves to a callable that takes ``completions`` and not
``completion`` (``is_trl_reward``), so a TRL reward function can be passed as it is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from passband.verifiers import _deadline
from passband.verifiers._coerce import call_safely, describe
from passband.verifiers.batch import verify_batch
from passband.verifiers.reward import NUM_TOKENS, Reward
from passband.verifiers.verdict import Verdict

__all__ = ["as_trl_reward", "as_verl_compute_score", "from_trl_reward", "is_trl_reward"]

# Keyword arguments TRL adds next to the dataset columns; they are not reference fields.
_TRL_EXTRAS = frozenset(
    {"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"}
)


def as_trl_reward(
    reward: str | Reward | Callable[..., object],
    *,
    fields: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    workers: int | None = None,
    name: str | None = None,
):
    """A TRL ``GRPOTrainer`` reward function: ``(prompts, completions, **columns) -> list[float | None]``.

    Dataset columns arrive as reference fields (``fields`` maps verifier field -> column, e.g.
    ``{"answer": "solution"}``); conversational completions are reduced to the assistant text;
    TRL's ``completion_ids`` become the exact ``num_tokens`` for length penalties. Each component
    of a ``Reward`` and the error/timeout rates are logged through TRL's ``log_metric``.
    """
    composed = reward if isinstance(reward, Reward) else Reward.from_verifier(reward)
    return _TrlReward(
        composed, dict(fields or {}), float(timeout), workers, name or _default_name(reward)
    )


def as_verl_compute_score(
    reward: str | Reward | Callable[..., object],
    *,
    ground_truth_field: str = "answer",
    timeout: float = 10.0,
):
    """verl's ``compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict``.

    The ground truth becomes reference field ``ground_truth_field``; a dict ``extra_info`` adds
    its keys as further fields. Returns ``{"score", "acc", "checkable", <components>}`` (verl
    takes ``score`` as the reward and logs the other keys).
    """
    composed = reward if isinstance(reward, Reward) else Reward.from_verifier(reward)
    return _VerlComputeScore(composed, ground_truth_field, float(timeout))


def is_trl_reward(fn: object) -> bool:
    """Whether ``fn`` is written for TRL's ``reward_funcs``: a plain callable whose parameters
    name ``completions`` (a list, one per sample) and not passband's ``completion``."""
    if isinstance(fn, (str, Reward, _FromTrl)) or not callable(fn):
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
    if isinstance(fn, _TrlReward):
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
        columns = {k: [v] for k, v in row.items() if k not in _TRL_EXTRAS and k != NUM_TOKENS}
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
    own = _TRL_EXTRAS | {"prompts", "completions"}
    return tuple(
        p.name
        for p in params
        if p.kind in named and p.default is inspect.Parameter.empty and p.name not in own
    )


class _TrlReward:
    def __init__(self, reward: Reward, fields: dict, timeout: float, workers, name: str):
        self.reward, self.fields, self.timeout, self.workers = reward, fields, timeout, workers
        self.__name__ = name  # TRL names the reward column after it

    def __repr__(self) -> str:
        return f"as_trl_reward({self.reward!r}, fields={self.fields!r}, timeout={self.timeout:g})"

    def __call__(self, prompts, completions, completion_ids=None, **kwargs) -> list[float | None]:
        texts = [_completion_text(c) for c in completions]
        columns = {k: v for k, v in kwargs.items() if k not in _TRL_EXTRAS}
        references = []
        for i in range(len(texts)):
            ref = {key: values[i] for key, values in columns.items()}
            for field, column in self.fields.items():
                if column in ref:
                    ref[field] = ref[column]
            ref.pop(NUM_TOKENS, None)  # a length comes from the completion, never from its row
            if completion_ids is not None:
                ref[NUM_TOKENS] = len(completion_ids[i])
            references.append(ref)
        verdicts = verify_batch(
            self.reward, texts, references, timeout=self.timeout, workers=self.workers
        )
        _log(kwargs.get("log_metric"), self.__name__, verdicts)
        return [v.score if v.checkable else None for v in verdicts]


class _VerlComputeScore:
    def __init__(self, reward: Reward, ground_truth_field: str, timeout: float):
        self.reward, self.ground_truth_field, self.timeout = reward, ground_truth_field, timeout

    def __repr__(self) -> str:
        return f"as_verl_compute_score({self.reward!r}, ground_truth_field={self.ground_truth_field!r})"

    def __call__(
        self, data_source, solution_str, ground_truth, extra_info=None, **_ignored
    ) -> dict:
        reference = dict(extra_info) if isinstance(extra_info, Mapping) else {}
        reference.pop(NUM_TOKENS, None)  # verl passes no length: a row's would be believed
        reference[self.ground_truth_field] = ground_truth
        verdict = _score_one(self.reward, solution_str, reference, self.timeout)
        out = {
            "score": verdict.score,
            "acc": float(verdict.passed),
            "checkable": float(verdict.checkable),
        }
        out.update(verdict.components)
        for name in self.reward.component_names:
            out.setdefault(name, 0.0)
        return out


def _score_one(reward: Reward, completion: str, reference: dict, timeout: float) -> Verdict:
    if _deadline.in_worker():
        return call_safely(reward, completion, reference, "reward")
    return verify_batch(reward, [completion], [reference], timeout=timeout, workers=1)[0]


def _completion_text(completion) -> str:
    """Plain text of a TRL completion: a string, or a list of chat messages (assistant content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        messages = [m for m in completion if isinstance(m, Mapping)]
        assistant = [m for m in messages if m.get("role", "assistant") == "assistant"] or messages
        return "".join(_content_text(m.get("content")) for m in assistant)
    return str(completion)


def _content_text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):  # content blocks: [{"type": "text", "text": "..."}]
        return "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in content)
    return str(content)


def _log(log_metric, name: str, verdicts: list[Verdict]) -> None:
    if not callable(log_metric) or not verdicts:
        return
    n = len(verdicts)
    log_metric(f"{name}/error_rate", sum(v.status == "error" for v in verdicts) / n)
    log_metric(f"{name}/timeout_rate", sum(v.status == "timeout" for v in verdicts) / n)
    log_metric(f"{name}/pass_rate", sum(v.passed for v in verdicts) / n)
    for component in sorted({k for v in verdicts for k in v.components}):
        log_metric(
            f"{name}/{component}", sum(v.components.get(component, 0.0) for v in verdicts) / n
        )


def _default_name(reward) -> str:
    if isinstance(reward, str):
        return reward
    if isinstance(reward, Reward):
        return "passband_reward"
    return describe(reward)
