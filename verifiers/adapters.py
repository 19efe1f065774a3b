"""Plug passband rewards into other trainers (TRL's ``reward_funcs``, verl's ``compute_score``),
and TRL reward functions into passband (``_from_trl.py``).

``as_trl_reward`` and ``as_verl_compute_score`` wrap a registered verifier name, a ``Reward`` or a
plain callable, score through the hard-timeout worker machinery, and keep "could not check" apart
from "wrong": TRL gets ``None`` for ``error``/``timeout`` (it ignores those), verl gets a dict
whose ``checkable`` says so.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

from passband.verifiers import _deadline
from passband.verifiers._coerce import call_safely, describe
from passband.verifiers._from_trl import TRL_EXTRAS
from passband.verifiers.batch import verify_batch
from passband.verifiers.reward import NUM_TOKENS, Reward
from passband.verifiers.verdict import Verdict

__all__ = ["as_trl_reward", "as_verl_compute_score"]


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


class _TrlReward:
    wraps_passband = True  # from_trl_reward gives back the reward it wraps

    def __init__(self, reward: Reward, fields: dict, timeout: float, workers, name: str):
        self.reward, self.fields, self.timeout, self.workers = reward, fields, timeout, workers
        self.__name__ = name  # TRL names the reward column after it

    def __repr__(self) -> str:
        return f"as_trl_reward({self.reward!r}, fields={self.fields!r}, timeout={self.timeout:g})"

    def passband_reward(self) -> Reward:
        """The wrapped ``Reward`` with this adapter's ``fields`` (``from_trl_reward``)."""
        if not self.fields:
            return self.reward
        reward = copy.copy(self.reward)
        reward.fields = {**self.reward.fields, **self.fields}
        return reward

    def __call__(self, prompts, completions, completion_ids=None, **kwargs) -> list[float | None]:
        texts = [_completion_text(c) for c in completions]
        columns = {k: v for k, v in kwargs.items() if k not in TRL_EXTRAS}
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
