"""Settings of one pre-scoring run, validated up front, plus how rows map to verifier inputs."""

from __future__ import annotations

import hashlib
import json
import math
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from passband.curriculum.posterior import check_band
from passband.errors import first_few
from passband.sandbox._worker_limits import TIMEOUT_ALLOWED, WORKERS_ALLOWED, timeout_ok, workers_ok

SOLVE_RATE_SUFFIX = "_solve_rate"
_OWN_COLUMNS = ("passes", "trials", "pass_rate", "band_class", "unchecked", "score_source")


class PrescoreError(ValueError):
    """A mistake the user can fix (a column, a setting, a stale journal); the CLI shows it plainly."""


@dataclass(frozen=True)
class PrescoreConfig:
    k: int = 8
    """Answers sampled per prompt (fewer when adaptive sampling stops early)."""
    band: tuple[float, float] = (0.2, 0.8)
    """Pass-rate band for the ``band_class`` column."""
    adaptive: bool = True
    """Stop after ``first`` answers when they are all right or all wrong."""
    first: int = 4
    """Answers looked at before the adaptive stop; 1 <= first <= k."""
    batch_size: int = 16
    """Prompts per ``generate`` call. Part of the resume key: batches are seeded by position."""
    seed: int = 0
    """Seeds the batches (by position), so a resumed run draws what the interrupted one would."""
    prompt_column: str = "prompt"
    """Column holding the prompt text (or chat messages, asked as they are)."""
    messages_column: str | None = None
    """Column holding SFT-style chat messages instead (as ``[data] messages_column``): a final
    assistant message, the row's reference answer, is not shown to the model, as training does
    with a ``messages`` column. A ``prompt_column`` named ``messages`` is read this way too."""
    prompt_template: str | None = None
    """Build each prompt from row fields with ``str.format`` instead, e.g. ``"{question} Think
    step by step."`` (double literal braces): score with the prompt the trainer will use."""
    references: Mapping[str, str] | None = None
    """Verifier keyword -> dataset column (``{"answer": "solution"}``). None: every column except
    the prompt is passed, and verifiers ignore what they do not use."""
    rescore: bool = False
    """Score rows even when they already carry a difficulty column."""
    prior_column: str | None = None
    """Read difficulty from this column only; None: ``pass_rate``, else the mean of the
    ``*_solve_rate`` columns."""
    timeout: float = 10.0
    """Seconds per verification (hard, the worker is killed)."""
    workers: int | None = None
    """Verifier processes; None: one per CPU."""
    success_threshold: float = 0.5
    """A plain-number reward passes at ``score >= success_threshold`` (``curriculum.success``: the
    rule training uses too); verdicts pass on ``passed``. Recorded as ``score_success_threshold``."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Recorded in ``score_<key>`` columns, e.g. model, temperature, max_tokens."""

    def __post_init__(self) -> None:
        if not 1 <= self.k <= 10_000:
            raise PrescoreError(f"k={self.k!r} must be between 1 and 10000")
        if not 1 <= self.first <= self.k:
            raise PrescoreError(f"first={self.first!r} must be between 1 and k={self.k}")
        object.__setattr__(
            self, "band", check_band(self.band, owner="PrescoreConfig", error=PrescoreError)
        )
        if self.batch_size < 1:
            raise PrescoreError(f"batch_size={self.batch_size!r} must be >= 1")
        if not timeout_ok(self.timeout):
            raise PrescoreError(f"timeout={self.timeout!r} must be {TIMEOUT_ALLOWED}")
        if not workers_ok(self.workers):
            raise PrescoreError(f"workers={self.workers!r} must be None or {WORKERS_ALLOWED}")
        problem = None if self.prompt_template is None else template_problem(self.prompt_template)
        if problem:
            raise PrescoreError(f"prompt_template={self.prompt_template!r} {problem}")
        threshold = self.success_threshold
        if isinstance(threshold, bool) or not (
            isinstance(threshold, (int, float)) and math.isfinite(threshold)
        ):
            raise PrescoreError(f"success_threshold={threshold!r} must be a finite number")

    def check_columns(self, rows: list[dict]) -> None:
        """Before any generation: every row gives a prompt (text or chat messages) and the
        reference columns; the rows that do not are named, each with its own columns."""
        if not rows:
            raise PrescoreError("the dataset holds no rows: nothing to score")
        wanted = [*(self.references or {}).values()]
        if self.prompt_template is None:
            wanted.insert(0, self._source)
        present = wanted + ([self.prior_column] if self.prior_column else [])
        absent = [c for c in present if not any(c in row for row in rows)]
        if absent:  # a wrong flag or column name, not a few bad rows
            raise PrescoreError(
                f"column(s) {absent} not in the dataset; its columns are: {', '.join(rows[0])}"
            )
        for name in _template_fields(self.prompt_template):
            if not any(name in row for row in rows):
                raise PrescoreError(
                    f"prompt template uses {name!r}, which the dataset lacks; its "
                    f"columns are: {', '.join(rows[0])}"
                )
        bad = []
        for i, row in enumerate(rows):
            try:
                if not self.rescore and self.prior_of(row) is not None:
                    continue  # taken as it is, never sampled: needs no prompt or reference
            except PrescoreError as exc:  # a rate that is no rate: named before any generation
                bad.append(f"row {i}: {exc}")
                continue
            missing = [c for c in wanted if c not in row]
            problem = (
                f"lacks column(s) {missing} (its columns: {', '.join(map(str, row))})"
                if missing
                else self._prompt_problem(row)
            )
            if problem:
                bad.append(f"row {i} {problem}")
        if bad:
            raise PrescoreError(
                f"{len(bad)} of {len(rows)} rows cannot be scored: {first_few(bad)}"
            )

    def _prompt_problem(self, row: Mapping[str, Any]) -> str | None:
        try:
            prompt = self.prompt(row)
        except (KeyError, IndexError) as exc:
            return f"lacks {exc}, which the prompt template uses (its columns: {', '.join(row)})"
        if isinstance(prompt, str):
            return None if prompt else "has an empty prompt"
        if isinstance(prompt, list) and prompt:
            return None
        return f"has the prompt {prompt!r}; expected text or a list of chat messages"

    def prior_of(self, row: Mapping[str, Any]) -> tuple[float, str] | None:
        """(pass rate, source) from an existing difficulty column, or None to sample. Counts
        (``passes`` / ``trials``) are read too, as training reads them: a row that holds them
        alone keeps them, and counts that cannot be are refused rather than overwritten."""
        counts = None if self.prior_column else _counts_rate(row)
        if self.prior_column:
            cols = [self.prior_column]
        elif "pass_rate" in row:
            cols = ["pass_rate"]
        else:
            cols = sorted(c for c in row if c.endswith(SOLVE_RATE_SUFFIX))
            if counts is not None and all(_empty(row.get(c)) for c in cols):
                return counts, "prior:passes/trials"
        found = [(c, x) for c in cols if (x := number_or_none(row.get(c))) is not None]
        for c in cols:
            value = row.get(c)
            if number_or_none(value) is None and not _empty(value):  # "abc" is no rate
                raise PrescoreError(
                    f"difficulty column {c!r} holds {value!r}; expected a rate in [0, 1] "
                    "(pass --rescore to ignore it)"
                )
        if not found:
            return None
        for c, x in found:
            if not 0.0 <= x <= 1.0:
                raise PrescoreError(
                    f"difficulty column {c!r} holds {x!r}; expected a rate in [0, 1] "
                    "(pass --rescore to ignore it)"
                )
        rate = sum(x for _, x in found) / len(found)
        return rate, "prior:" + "+".join(c for c, _ in found)

    @property
    def _source(self) -> str:
        return self.messages_column or self.prompt_column

    def prompt(self, row: Mapping[str, Any]):
        """What the model is asked: the template filled in, or the prompt column; from a messages
        column, the messages without a final assistant message, as training asks. Chat messages
        stored as JSON text (a CSV cell) are read as messages, as training reads them."""
        if self.prompt_template is not None:
            return self.prompt_template.format(**row)
        from passband.verifiers._from_trl import as_chat, asked_messages

        prompt = as_chat(row[self._source])
        sft = self.messages_column is not None or self.prompt_column == "messages"
        return asked_messages(prompt) if sft and isinstance(prompt, (list, tuple)) else prompt

    def reference(self, row: Mapping[str, Any]) -> dict:
        if self.references is not None:
            return {key: row[col] for key, col in self.references.items()}
        return {
            k: v
            for k, v in row.items()
            if k != self._source and k not in _OWN_COLUMNS and not k.startswith("score_")
        }

    def settings_columns(self) -> dict:
        return {
            "k": self.k,
            "success_threshold": self.success_threshold,
            **dict(self.settings),
            "prompt_template": self.prompt_template,
        }

    def fingerprint(self) -> dict:
        """The settings a resumed run must share with the interrupted one."""
        return {
            "k": self.k,
            "band": list(self.band),
            "adaptive": self.adaptive,
            "first": self.first,
            "batch_size": self.batch_size,
            "seed": self.seed,
            "prompt_column": self.prompt_column,
            **({"messages_column": self.messages_column} if self.messages_column else {}),
            "prompt_template": self.prompt_template,
            "references": dict(self.references) if self.references is not None else None,
            "success_threshold": self.success_threshold,
            "settings": {k: str(v) for k, v in dict(self.settings).items()},
        }


_NUMBER_CELLS = ("passes", "trials", "unchecked", "pass_rate")
_NUMBER_SETTINGS = ("k", "temperature", "top_p", "top_k", "max_tokens", "success_threshold")


def restore_score_cells(row: Mapping[str, Any]) -> dict:
    """A copy of ``row`` whose score cells read back from a CSV file (every cell is text there)
    are what was written: numbers for the counts and numeric ``score_*`` settings, a list for
    ``score_stop``, nothing for an empty cell. A cell that holds no number is left as it is (the
    checks that follow name it)."""
    out = dict(row)
    for name in (*_NUMBER_CELLS, *(f"score_{s}" for s in _NUMBER_SETTINGS)):
        value = out.get(name)
        if isinstance(value, str):
            out[name] = _number_text(value)
    stop = out.get("score_stop")
    if isinstance(stop, str):
        try:
            decoded = json.loads(stop) if stop.strip() else None
        except json.JSONDecodeError:
            decoded = stop
        out["score_stop"] = decoded if decoded is None or isinstance(decoded, list) else stop
    return out


def _number_text(text: str):
    """``"4"`` -> 4, ``"0.5"`` -> 0.5, ``""`` -> None; other text as it is."""
    if not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _counts_rate(row: Mapping[str, Any]) -> float | None:
    """``passes / trials`` of a row that holds counts; None without them (or at 0 of 0: scoring
    got no verdict); counts that cannot be raise."""
    passes, trials = row.get("passes"), row.get("trials")
    if _empty(passes) and _empty(trials):
        return None
    a, b = number_or_none(passes), number_or_none(trials)
    if a == 0 and b == 0:
        return None
    if a is None or b is None or not (b > 0 and 0 <= a <= b):
        raise PrescoreError(
            f"'passes' = {passes!r} with 'trials' = {trials!r}: expected counts with "
            "0 <= passes <= trials and trials > 0 (pass --rescore to score the row afresh)"
        )
    return a / b


def _empty(value) -> bool:
    """An empty difficulty cell: absent, None, blank text or NaN (an unscored row)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    return isinstance(value, float) and math.isnan(value)


def template_problem(template: str) -> str | None:
    """What makes ``template`` unusable as a ``str.format`` prompt template, or None: a brace
    that does not pair, or a positional field (``{}``, ``{0}``) that no row can fill; a literal
    brace is written doubled."""
    hint = "write a literal brace doubled: {{ and }} (e.g. \\boxed{{}})"
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        return f"{exc}; {hint}"
    positional = [f for f in fields if f == "" or f.split(".")[0].split("[")[0].isdigit()]
    if positional:
        return f"has a positional field {{{positional[0]}}}; name a column ({{question}}) or {hint}"
    return None


def _template_fields(template: str | None) -> list[str]:
    """The column names a ``str.format`` template reads (``{question}``, ``{row[x]}`` -> row)."""
    if template is None:
        return []
    names = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    return [n.split(".")[0].split("[")[0] for n in names if not n.isdigit()]


def prompt_digest(prompt) -> str:
    """A short fingerprint of what the model was asked (text or chat messages), recorded as
    ``score_prompt_sha256`` and compared by training with what it asks. Message keys left empty
    (None) are dropped: Parquet and saved datasets add them to messages that lack a key."""
    text = json.dumps(_canonical(prompt), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _canonical(value):
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        return [_canonical(v) for v in value]
    return value


def describe_verifier(verifier) -> str:
    if isinstance(verifier, str):
        return verifier
    return getattr(verifier, "__qualname__", None) or type(verifier).__qualname__


def number_or_none(value) -> float | None:
    """A table cell as a float; None for empty, missing, NaN, boolean or non-numeric cells."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x
