"""Dataset pre-scoring: sample k answers per prompt, verify them, write pass rates and band classes.

Generation is a plain callable ``generate(prompts, n) -> list[list[str]]`` (``n`` texts per prompt),
so this module needs no torch; ``passband score`` plugs in the trainer's rollout backend. If the
callable takes a ``seed`` keyword it gets one per batch, which makes results reproducible.

- Adaptive sampling: ``first`` answers per prompt, then the remaining ``k - first`` only for prompts
  whose first answers disagree. All right or all wrong on the first few is already a class.
- Resumable: batches are fixed by row order and seeded by their position, and finished rows go to an
  append-only journal next to the output (``journal.Journal``). Kill it, rerun the same call, and the
  output equals an uninterrupted run's.
- Rows that already carry a difficulty (``pass_rate``, or ``*_solve_rate`` columns as some public
  datasets have) are taken as they are, not re-scored, unless ``rescore=True``.
- Success is binary: ``Verdict.passed``. ``error``/``timeout`` verdicts are not trials (counted in
  ``unchecked``), since "could not check" is not "wrong".
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from passband.curriculum._journal import Journal
from passband.curriculum._success import (
    decides_by_verdict,
    describe_success_rule,
    success_source,
    with_success_rule,
)
from passband.curriculum.posterior import band_class
from passband.curriculum.prescore_config import (
    PrescoreConfig,
    PrescoreError,
    describe_verifier,
    prompt_digest,
    restore_score_cells,
)
from passband.curriculum.tables import check_writable, write_rows
from passband.errors import DataError

Generate = Callable[..., Sequence[Sequence[str]]]
SCORE_COLUMNS = ("passes", "trials", "pass_rate", "band_class", "unchecked", "score_source")


@dataclass
class PrescoreResult:
    """What a pre-scoring run produced, plus the figures for its summary table."""

    rows: list[dict]
    out_path: str
    plot_path: str | None
    band: tuple[float, float]
    k: int
    scored: int = 0
    from_prior: int = 0
    resumed: int = 0
    samples: int = 0
    unchecked: int = 0
    classes: dict = field(default_factory=dict)
    success_rule: str = ""

    def summary(self) -> str:
        """A small plain-text table: rows per band class, and samples saved by adaptive sampling."""
        total = max(1, sum(self.classes.values()))
        lines = [
            f"{'class':<10} {'rows':>8} {'share':>7}   band [{self.band[0]:g}, {self.band[1]:g}]"
        ]
        for name in ("too_hard", "in_band", "too_easy", "unscored"):
            count = self.classes.get(name, 0)
            if count or name != "unscored":
                lines.append(f"{name:<10} {count:>8} {count / total:>7.1%}")
        fixed = self.k * self.scored
        saved = 1 - self.samples / fixed if fixed else 0.0
        lines.append(
            f"sampled {self.scored} prompts: {self.samples} answers "
            f"(fixed k={self.k}: {fixed}, {saved:.1%} saved); "
            f"{self.from_prior} rows kept their existing difficulty column"
        )
        if self.unchecked:
            lines.append(
                f"{self.unchecked} answers could not be checked (verifier error or timeout): "
                "counted in 'unchecked', not as wrong"
            )
        if self.resumed:
            lines.append(f"resumed: {self.resumed} rows came from an earlier, interrupted run")
        if self.success_rule:
            lines.append(self.success_rule)
        lines.append(
            f"wrote {self.out_path}" + (f" and {self.plot_path}" if self.plot_path else "")
        )
        return "\n".join(lines)


def prescore(
    rows: Sequence[Mapping[str, Any]],
    generate: Generate,
    verifier,
    *,
    out_path: str | os.PathLike,
    plot_path: str | os.PathLike | None = None,
    progress: bool = True,
    **options,
) -> PrescoreResult:
    """Score every row and write the dataset with pass-rate columns to ``out_path``.

    ``verifier``: a registered verifier name, a ``Reward``, or a picklable callable
    ``(completion, **reference) -> Verdict | float | bool``; it runs through
    ``passband.verifiers.verify_batch`` (worker processes, hard per-item timeout).
    ``options`` are ``PrescoreConfig`` fields (``k``, ``band``, ``adaptive``, ``first``,
    ``references``, ``prompt_column``, ``batch_size``, ``seed``, ``settings``, ...).
    """
    cfg = PrescoreConfig(**options)
    verifier, rule, recorded = _with_rule(verifier, cfg)
    rows = [restore_score_cells(r) for r in rows]  # "4" from a CSV cell is the number 4 again
    cfg.check_columns(rows)
    priors = [None if cfg.rescore else _prior_of(cfg, i, row) for i, row in enumerate(rows)]
    todo = [i for i, p in enumerate(priors) if p is None]
    probe = {"passes": 0, "trials": 1, "unchecked": 0}  # the types scoring writes
    check_writable(  # before any sampling: a column the output format cannot hold is named
        [_output_row(r, priors[i], probe, cfg, recorded) for i, r in enumerate(rows)], out_path
    )
    journal = Journal(
        f"{os.fspath(out_path)}.journal.jsonl", _journal_settings(cfg, rows, todo, verifier)
    )
    resumed = sum(1 for i in todo if i in journal.done)
    _run_batches(rows, todo, generate, verifier, cfg, journal, progress)
    out_rows = [
        _output_row(row, priors[i], journal.done.get(i), cfg, recorded)
        for i, row in enumerate(rows)
    ]
    write_rows(out_rows, out_path)
    if plot_path is not None:
        _plot(out_rows, cfg, plot_path)
    journal.remove()  # only once the output is complete and in place
    classes = dict(Counter(r["band_class"] for r in out_rows))
    samples = sum(journal.done[i]["trials"] + journal.done[i]["unchecked"] for i in todo)
    return PrescoreResult(
        out_rows,
        os.fspath(out_path),
        plot_path and os.fspath(plot_path),
        cfg.band,
        cfg.k,
        scored=len(todo),
        from_prior=len(rows) - len(todo),
        resumed=resumed,
        samples=samples,
        unchecked=sum(journal.done[i]["unchecked"] for i in todo),
        classes=classes,
        success_rule=rule,
    )


def _with_rule(verifier, cfg: PrescoreConfig):
    """(the verifier under the trainer's success rule, the rule in words, the ``score_*`` columns
    that say what decided a success)."""
    from passband.verifiers._from_trl import adapted

    verifier = adapted(verifier)  # a TRL reward function as passband calls it
    rule = describe_success_rule(verifier, cfg.success_threshold)
    recorded = {"score_verifier": success_source(verifier)}  # beside the config's settings
    if decides_by_verdict(verifier):  # the threshold decided nothing: none is recorded
        recorded["score_success_threshold"] = None
    return with_success_rule(verifier, cfg.success_threshold), rule, recorded


def _plot(out_rows, cfg: PrescoreConfig, plot_path) -> None:
    from passband.curriculum.plot import plot_pass_rate_histogram

    rates = [r["pass_rate"] for r in out_rows]
    plot_pass_rate_histogram(rates, cfg.band, plot_path, title=f"Pass rate per prompt, k={cfg.k}")


def _prior_of(cfg: PrescoreConfig, i: int, row: Mapping[str, Any]):
    try:
        return cfg.prior_of(row)
    except PrescoreError as exc:
        raise PrescoreError(f"row {i}: {exc}") from None


def _run_batches(rows, todo, generate, verifier, cfg, journal, progress) -> None:
    from tqdm.auto import tqdm

    batches = [todo[s : s + cfg.batch_size] for s in range(0, len(todo), cfg.batch_size)]
    done = sum(1 for i in todo if i in journal.done)
    with tqdm(
        total=len(todo),
        initial=done,
        unit="prompt",
        desc="scoring",
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for b, batch in enumerate(batches):
            if all(i in journal.done for i in batch):
                continue
            # The whole batch is regenerated even if some of its rows are in the journal: the
            # seed belongs to the batch, so the missing rows come out as they would have.
            results = _score_batch([rows[i] for i in batch], batch, generate, verifier, cfg, b)
            before = len(journal.done)
            journal.record(results)
            bar.update(len(journal.done) - before)


def _score_batch(rows, indices, generate, verifier, cfg: PrescoreConfig, b: int) -> list[dict]:
    """Verdict counts for one batch; adaptive: a second round only for undecided prompts."""
    prompts = [cfg.prompt(row) for row in rows]
    first = cfg.first if cfg.adaptive else cfg.k
    counts = _round(prompts, rows, first, generate, verifier, cfg, _seed(cfg.seed, b, 0), b == 0)
    undecided = [j for j, c in enumerate(counts) if not _decided(c, first)]
    rest = cfg.k - first
    if rest > 0 and undecided:
        more = _round(
            [prompts[j] for j in undecided],
            [rows[j] for j in undecided],
            rest,
            generate,
            verifier,
            cfg,
            _seed(cfg.seed, b, 1),
        )
        for j, extra in zip(undecided, more):
            counts[j] = tuple(a + e for a, e in zip(counts[j], extra))
    return [
        {"i": i, "passes": c[0], "trials": c[1], "unchecked": c[2]} for i, c in zip(indices, counts)
    ]


def _round(prompts, rows, n, generate, verifier, cfg, seed, first=False) -> list[tuple[int, ...]]:
    """Generate ``n`` answers per prompt and count (passes, checked trials, unchecked). On the
    ``first`` round of the run, a verifier that fails on every answer stops it: that is the
    verifier or its wiring (a wrong name, a missing reference keyword), not the data."""
    from passband.verifiers import verify_batch

    texts = _call_generate(generate, prompts, n, seed)
    completions = [t for group in texts for t in group]
    refs = [_reference(cfg, row, verifier) for row in rows for _ in range(n)]
    verdicts = verify_batch(verifier, completions, refs, timeout=cfg.timeout, workers=cfg.workers)
    if first and verdicts and all(v.status == "error" for v in verdicts):
        raise PrescoreError(
            f"the verifier {describe_verifier(verifier)} failed on all {len(verdicts)} answers of "
            f"the first batch, e.g. {verdicts[0].detail}; try it on one answer with passband verify"
        )
    out = []
    for j in range(len(prompts)):
        group = verdicts[j * n : (j + 1) * n]
        checked = [v for v in group if v.checkable]
        out.append((sum(v.passed for v in checked), len(checked), len(group) - len(checked)))
    return out


def _decided(counts: tuple[int, int, int], first: int) -> bool:
    passes, trials, unchecked = counts
    return unchecked == 0 and trials == first and passes in (0, trials)


def _call_generate(generate, prompts, n, seed) -> list[list[str]]:
    try:
        takes_seed = "seed" in inspect.signature(generate).parameters
    except (TypeError, ValueError):
        takes_seed = False
    texts = generate(prompts, n, seed=seed) if takes_seed else generate(prompts, n)
    texts = [list(group) for group in texts]
    if len(texts) != len(prompts) or any(len(g) != n for g in texts):
        shape = [len(g) for g in texts]
        raise PrescoreError(
            f"generate(prompts, n={n}) must return {len(prompts)} lists of {n} texts; "
            f"got {len(texts)} lists of sizes {shape[:8]}"
        )
    return texts


def _seed(seed: int, batch: int, round_: int) -> int:
    digest = hashlib.sha256(f"{seed}:{batch}:{round_}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def _reference(cfg, row, verifier) -> dict:
    """What ``verifier`` gets besides the completion: the row's reference fields, and for a TRL
    reward function (``from_trl_reward``, under the success rule) the prompt as well."""
    from passband.verifiers._from_trl import is_adapted

    ref = cfg.reference(row)
    if is_adapted(verifier):  # as TRL gives it: the prompt, and no 'completion' column
        ref.pop("completion", None)
        ref["prompt"] = cfg.prompt(row)
    return ref


def _journal_settings(cfg, rows, todo, verifier) -> dict:
    """What must match for a journal to be resumed: settings, and the prompts being scored with
    what their verifier gets (an edited answer column makes the journal's counts stale)."""
    digest = hashlib.sha256()
    for i in todo:
        item = [i, cfg.prompt(rows[i]), cfg.reference(rows[i])]
        digest.update(json.dumps(item, default=str, sort_keys=True).encode())
    return {
        **cfg.fingerprint(),
        "verifier": describe_verifier(verifier),
        "rows": len(rows),
        "prompts_and_references_sha256": digest.hexdigest(),
    }


def _output_row(
    row: dict, prior, result: dict | None, cfg: PrescoreConfig, recorded: dict | None = None
) -> dict:
    """The row with its scores and the settings they were made with (``recorded``: what decided
    a success, beside the config's settings)."""
    out = dict(row)
    settings = {f"score_{k}": v for k, v in cfg.settings_columns().items()}
    settings.update(recorded or {})
    settings["score_prompt_sha256"] = None  # what was asked: training compares what it asks
    if prior is not None:
        rate, source = prior
        out.update(pass_rate=rate, band_class=band_class(rate, cfg.band), score_source=source)
        for name in ("passes", "trials", "unchecked", *settings):
            out.setdefault(name, None)  # a row scored before keeps what it was scored with
        return out
    passes, trials = result["passes"], result["trials"]
    rate = passes / trials if trials else None
    out.update(
        passes=passes,
        trials=trials,
        unchecked=result["unchecked"],
        pass_rate=rate,
        band_class=band_class(rate, cfg.band) if rate is not None else "unscored",
        score_source="sampled",
        **{**settings, "score_prompt_sha256": prompt_digest(cfg.prompt(row))},
    )
    return out


def priors_from_rows(
    rows: Sequence[Mapping[str, Any]], ids: Sequence | None = None, prior_trials: int = 8
) -> dict:
    """``{id: (passes, trials)}`` for ``Curriculum(priors=...)`` from a scored dataset.

    Uses ``passes``/``trials`` when present, else ``pass_rate`` (or the mean of ``*_solve_rate``
    columns) as if from ``prior_trials`` samples; see ``priors.row_prior``. ``ids`` default to row
    positions. Rows without a difficulty (absent or empty cells) are left out; a cell that holds
    no usable count or rate raises ``DataError`` naming the row, the column and the value. The
    trainer uses ``priors.training_priors``, which also weighs the settings the scores were made
    with.
    """
    from passband.curriculum._priors import row_prior

    ids = list(range(len(rows))) if ids is None else list(ids)
    out = {}
    for pos, (pid, row) in enumerate(zip(ids, rows)):
        try:
            found = row_prior(row, prior_trials)
        except ValueError as exc:
            raise DataError(f"row {pos} (id {pid!r}): {exc}") from None
        if found is not None:
            out[pid] = found[0]
    return out
