"""What ``passband train`` checks before it loads the model, one problem per config field.

The data (``[data] path``, then its prompt column, template or messages), the reward
(``[reward] verifier``, then its penalties), the reference columns the reward reads against the
data's columns and rows, and the model and tokenizer folders. Each check is the one training
itself runs (``passband.config.read_table`` / ``prompt_rows``, ``RewardSection.build``, the
trainer's ``check_scorable`` and its local-folder rule): ``passband train`` raises the first
problem found, ``passband doctor`` prints every one as a FAIL line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from passband.errors import DataError, PassbandError

__all__ = ["Problem", "Preflight", "preflight"]


@dataclass(frozen=True)
class Problem:
    field: str
    """The config field to change, as an override names it (``data.prompt_column``)."""
    value: Any
    """Its value in the config."""
    error: PassbandError
    """What training raises for it."""


@dataclass
class Preflight:
    rows: list | None = None
    """The training rows (``load_rows``'s), or None when they could not be read."""
    reward: Any = None
    """The reward ``GRPOTrainer`` gets (``RewardSection.build``'s), or None."""
    reference_columns: dict[str, str] | None = None
    """Verifier keyword -> column, as ``RewardSection.build`` returns it."""
    problems: list[Problem] = field(default_factory=list)
    """Every problem found, in the order training meets them."""

    def raise_first(self) -> None:
        if self.problems:
            raise self.problems[0].error

    def attempt(self, name: str, value: Any, check: Callable[[], Any]) -> Any:
        """``check()``'s result, or None with its problem recorded against the field ``name``."""
        try:
            return check()
        except PassbandError as exc:
            self.problems.append(Problem(name, value, exc))
            return None


def preflight(cfg) -> Preflight:
    """Run every check on the loaded config ``cfg`` (a ``RunConfig``); nothing is loaded but
    the data table and the reward's module."""
    from passband._verifier_spec import resolve_verifier
    from passband.config import prompt_rows, read_table
    from passband.trainer.models import local_dir

    found = Preflight()
    data, reward = cfg.data, cfg.reward
    table = found.attempt("data.path", data.path, lambda: read_table(data))
    if table is not None:
        name, value = _prompt_field(data)
        found.rows = found.attempt(name, value, lambda: prompt_rows(data, table))
    verifier = found.attempt(
        "reward.verifier",
        reward.verifier,
        lambda: resolve_verifier(reward.verifier, where="[reward] verifier"),
    )
    built = (
        None
        if verifier is None
        else found.attempt("reward.penalties", dict(reward.penalties), reward.build)
    )
    if built is not None:
        found.reward, found.reference_columns = built
    if found.rows is not None and found.reward is not None:
        try:
            _check_rows(cfg, found)
        except PassbandError as exc:  # a column the reward reads, or the rows' prompts
            name, value = ("reward.references", dict(reward.references))
            if "reference column" not in str(exc):
                name, value = _prompt_field(data)
            found.problems.append(Problem(name, value, exc))
    found.attempt("model.path", cfg.model.path, lambda: local_dir(cfg.model.path, "model"))
    if cfg.model.tokenizer is not None:
        tokenizer = cfg.model.tokenizer
        found.attempt("model.tokenizer", tokenizer, lambda: local_dir(tokenizer, "tokenizer"))
    return found


def _prompt_field(data) -> tuple[str, Any]:
    """The ``[data]`` field the prompts come from, as ``prompt_rows`` reads them."""
    if data.prompt_template is not None:
        return "data.prompt_template", data.prompt_template
    if data.messages_column is not None:
        return "data.messages_column", data.messages_column
    return "data.prompt_column", data.prompt_column


def _check_rows(cfg, found: Preflight) -> None:
    """The trainer's own row checks that need no tokenizer, with its scorer; a row is named by
    its position in the file, as ``passband train`` names it."""
    from passband.trainer._data import check_scorable
    from passband.trainer._scoring import Scorer

    t = cfg.trainer
    scorer = Scorer(
        found.reward,
        found.reference_columns,
        t.verifier_timeout,
        t.verifier_workers,
        success_threshold=t.curriculum.success_threshold,
    )
    try:
        check_scorable(found.rows, scorer, t.skip_bad_rows)
    except DataError as exc:
        raise DataError(f"[data] {cfg.data.path} (rows counted from 0): {exc}") from None
