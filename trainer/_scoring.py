"""Score completions: a ``Reward``, a verifier name (plus reference columns) or a plain callable.

Everything goes through ``passband.verifiers.verify_batch``, so each completion is checked in a
killable worker under ``verifier_timeout``. The trainer never trains on ``error`` / ``timeout``
verdicts as if they were zeros: ``Verdict.checkable`` marks them, and ``GroupScores`` carries the
mask used by the advantages and the loss.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passband.curriculum._success import describe_success_rule, with_success_rule
from passband.curriculum.prescore_config import describe_verifier
from passband.errors import UsageError, WrongTypeError
from passband.trainer._data import prompt_of
from passband.verifiers import Reward, Verdict, get, is_trl_reward, verify_batch
from passband.verifiers._from_trl import TOKEN_IDS, adapted, is_adapted

__all__ = ["Scorer", "RewardSpec", "PROMPT_COLUMNS"]

RewardSpec = str | Callable[..., Any]
PROMPT_COLUMNS = ("prompt", "messages")


@dataclass
class Scorer:
    """Turns (completion, dataset row) pairs into Verdicts.

    reward: a registered verifier name, a ``passband.verifiers.Reward``, or a plain callable
        ``(completion, **row) -> float | bool | Verdict``.
    references: verifier keyword -> dataset column (e.g. ``{"answer": "solution"}``). Default: a
        name or ``Reward`` gets every column except the prompt; a plain callable gets the whole row.
    success_threshold: the curriculum's success rule for plain numbers (``score >= it`` passes;
        ``passband.curriculum._success``); verdicts pass on ``passed``. ``success_rule`` says which.
    """

    reward: RewardSpec
    references: Mapping[str, str] | None = None
    timeout: float = 10.0
    workers: int | None = None
    success_threshold: float = 0.5

    def __post_init__(self) -> None:
        if isinstance(self.reward, str):
            get(self.reward)  # unknown name: KeyError listing the known ones, before any rollout
        elif not callable(self.reward):
            several = isinstance(self.reward, (list, tuple))
            raise WrongTypeError(
                "reward must be a verifier name, a Reward or a callable "
                "(completion, **row) -> float | Verdict (or a TRL reward function); got "
                f"{type(self.reward).__name__}"
                + (
                    ". To add several rewards, as TRL's reward_funcs list does, compose them: "
                    "passband.verifiers.Reward({'correct': f1, 'format': (f2, 0.5)}) (the "
                    "first term decides success)"
                    if several
                    else ""
                )
            )
        self.reward = adapted(self.reward)  # a TRL function per completion; as_trl_reward's Reward
        resolved = get(self.reward) if isinstance(self.reward, str) else self.reward
        self._trl = is_adapted(resolved) or is_trl_reward(resolved)  # a registered one, too
        self._is_reward = isinstance(self.reward, Reward)
        self._plain = not isinstance(self.reward, str) and not self._is_reward
        self._ids = self._trl or (self._is_reward and _holds_trl(self.reward))  # token ids to it
        self.success_rule = describe_success_rule(self.reward, self.success_threshold)
        self._checked = with_success_rule(self.reward, self.success_threshold)
        self._first = True  # the first scored batch is checked for a reward that always fails

    def check_columns(self, columns: Sequence[str]) -> None:
        """Fail before training when a mapped reference column is missing from the dataset."""
        missing = [c for c in (self.references or {}).values() if c not in columns]
        if missing:
            raise ValueError(
                f"reference column(s) {missing} are not in the dataset; "
                f"its columns are: {', '.join(columns)}"
            )
        if self.references is None and "completion" in columns and not self._trl:
            raise ValueError(
                "the dataset has a column named 'completion', which would clash with the "
                "completion the reward is called with; rename it, or map the reward's fields "
                "with reference_columns (a TRL reward function leaves it out, as TRL does)"
            )

    def reference(self, row: Mapping[str, Any], tokens: int | Sequence[int]) -> dict[str, Any]:
        """What the reward gets besides the completion; ``tokens``: the completion's token ids,
        or their count."""
        num_tokens = tokens if isinstance(tokens, int) else len(tokens)
        if self.references is not None:
            ref = {key: row[col] for key, col in self.references.items()}
        elif self._plain:
            ref = dict(row)
        else:  # the prompt columns too where a Reward maps a field to one (its fields=)
            mapped = set(self.reward.fields.values()) if self._is_reward else set()
            ref = {k: v for k, v in row.items() if k not in PROMPT_COLUMNS or k in mapped}
        if self._trl:  # the prompt the model saw, as TRL passes it; no 'completion' column
            ref.pop("completion", None)
            ref.pop("messages", None)
            ref["prompt"] = prompt_of(row)
        if self._ids and not isinstance(tokens, int):  # as TRL gives them: its overlong penalty
            ref[TOKEN_IDS] = [int(t) for t in tokens]  # reads them (the reference's own key)
        if self._is_reward:
            ref["num_tokens"] = int(num_tokens)  # reserved key: penalties count real tokens
        return ref

    def __call__(
        self,
        completions: Sequence[str],
        rows: Sequence[Mapping[str, Any]],
        tokens: Sequence[int | Sequence[int]],
    ) -> list[Verdict]:
        """Verdicts of ``completions`` (one per row of ``rows``); ``tokens``: each completion's
        token ids (or their count)."""
        refs = [self.reference(r, n) for r, n in zip(rows, tokens)]
        return verify_batch(
            self._checked, list(completions), refs, timeout=self.timeout, workers=self.workers
        )

    def check_first(self, verdicts: Sequence[Verdict]) -> None:
        """On the first scored rollout of the run (every rank's verdicts, so all ranks agree):
        a reward that failed on every answer raises (``_refuse_if_all_failed``)."""
        if self._first and verdicts:
            self._first = False
            _refuse_if_all_failed(self.reward, verdicts)


def _holds_trl(reward: Reward) -> bool:
    """Whether a term of ``reward`` is a TRL reward function (``from_trl_reward``'s)."""
    found: list = []
    reward.with_verifiers(lambda fn: found.append(is_adapted(fn)) or fn)
    return any(found)


def _refuse_if_all_failed(reward: RewardSpec, verdicts: Sequence[Verdict]) -> None:
    """A reward that fails on every answer of the first batch is its wiring (a wrong reference
    column, a missing keyword, a bug), not the data: training on would run every step with no
    signal while the step messages blamed reward variance. ``passband score`` stops the same way."""
    if all(v.status == "error" for v in verdicts):
        raise UsageError(
            f"the reward {describe_verifier(reward)} failed on all {len(verdicts)} answers of the "
            f"first rollout, e.g. {verdicts[0].detail!r}; try it on one answer with "
            "passband verify (or check_verifier) before training"
        )
    if all(v.status in ("error", "timeout") for v in verdicts):  # never one answer scored
        raise UsageError(
            f"the reward {describe_verifier(reward)} timed out (or failed) on all "
            f"{len(verdicts)} answers of the first rollout, e.g. {verdicts[0].detail!r}: every "
            "step would train on nothing; raise verifier_timeout, or time it on one answer "
            "with passband verify"
        )
