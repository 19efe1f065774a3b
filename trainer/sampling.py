"""Which prompts each step trains on: the pass-rate curriculum, or uniform epochs without it.

The seam is ``Sampler`` (in ``_sampler_api``, with the checks made on a given one): ``sample`` /
``observe`` / ``state_dict`` / ``load_state_dict`` / ``metrics`` (plus ``estimates`` for
``curriculum.json``, empty by default). ``Curriculum`` and
``UniformSampler`` implement it, and ``GRPOTrainer(..., sampler=...)`` takes any object that has
those methods, so the loop never asks which one it has.

``make_sampler`` builds the default one from a ``GRPOConfig``: the curriculum with
``config.curriculum`` (one ``CurriculumConfig``, reached from TOML ``[curriculum]``), and with the
pre-scores the rows carry (``passband score`` output) or the ``priors`` given, printed at start.
"""

from __future__ import annotations

import dataclasses
import math
import random
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from passband.curriculum import Curriculum, CurriculumConfig
from passband.curriculum._priors import row_prior, training_priors
from passband.curriculum._success import decides_by_verdict, success_source
from passband.errors import ConfigError
from passband.trainer._data import prompt_of
from passband.trainer._sampler_api import (  # noqa: F401 - the seam, re-exported
    Sampler,
    check_ids,
    check_sampler,
    check_sampler_rows,
    round_group_sizes,
)

__all__ = [
    "Sampler",
    "UniformSampler",
    "make_sampler",
    "check_sampler",
    "check_ids",
    "resolve_curriculum",
    "round_group_sizes",
]


class UniformSampler(Sampler):
    """Shuffled passes over the dataset (``use_curriculum = false``); the data position is state.
    ``exclude`` is honoured: an excluded prompt is skipped and stays next in line."""

    def __init__(self, prompt_ids: Iterable[Any], *, seed: int = 0):
        self._ids = list(prompt_ids)
        self._rng = random.Random(seed)
        self._order: list[int] = []
        self._pos = 0
        self._epoch = 0
        self._counts: dict[Any, list[int]] = {}
        self._groups = [0, 0]  # groups observed, of which not unanimous

    def sample(self, n: int, exclude: Iterable[Any] = ()) -> list:
        blocked, out, seen, skipped = set(exclude), [], set(), []
        budget = len(self._ids)  # positions skipped at most before repeats are allowed
        while len(out) < n:
            if self._pos >= len(self._order):
                self._reshuffle(front=skipped)
                skipped = []
            k = self._order[self._pos]
            self._pos += 1
            pid = self._ids[k]
            if budget > 0 and (pid in blocked or pid in seen):
                skipped.append(k)
                budget -= 1
                continue
            out.append(pid)
            seen.add(pid)
        self._order[self._pos : self._pos] = skipped  # next in line, not lost for this epoch
        return out

    def _reshuffle(self, front: list[int]) -> None:
        skip = set(front)
        rest = [k for k in range(len(self._ids)) if k not in skip]
        self._rng.shuffle(rest)
        self._order, self._pos, self._epoch = front + rest, 0, self._epoch + 1

    def observe(self, prompt_id: Any, successes: int, trials: int) -> None:
        s, t = self._counts.get(prompt_id, [0, 0])
        self._counts[prompt_id] = [s + int(successes), t + int(trials)]
        self._groups = [self._groups[0] + 1, self._groups[1] + int(0 < successes < trials)]

    def signal_chance(self, prompt_ids: Iterable[Any]) -> list[float]:
        """The share of groups observed so far that were not unanimous, for every prompt (no
        per-prompt posterior here: a uniform pass sees each prompt once an epoch); 1.0 before
        any group is observed, so nothing is oversampled on no evidence."""
        groups, signal = self._groups
        share = signal / groups if groups else 1.0
        return [share for _ in prompt_ids]

    def estimates(self) -> dict:
        """Empirical pass rate of every prompt seen so far."""
        return {pid: s / t for pid, (s, t) in self._counts.items() if t}

    def metrics(self) -> dict:
        return {"epoch": self._epoch, "position": self._pos}

    def state_dict(self) -> dict:
        version, internal, gauss = self._rng.getstate()
        return {
            "format": "uniform-1",
            "rng": [version, list(internal), gauss],
            "order": self._order,
            "pos": self._pos,
            "epoch": self._epoch,
            "counts": [[pid, c] for pid, c in self._counts.items()],
            "groups": self._groups,
        }

    def load_state_dict(self, state: dict) -> None:
        version, internal, gauss = state["rng"]
        self._rng.setstate((version, tuple(internal), gauss))
        self._order, self._pos, self._epoch = list(state["order"]), state["pos"], state["epoch"]
        self._counts = {pid: list(c) for pid, c in state["counts"]}
        self._groups = list(
            state.get("groups", [0, 0])
        )  # older states lack it: start counting afresh


_DEFAULT_BAND = (0.2, 0.8)


def resolve_curriculum(config: Any) -> CurriculumConfig:
    """The one ``CurriculumConfig`` of a ``GRPOConfig``: ``config.curriculum`` (an object, a dict
    of its fields, or None for the defaults), with ``group_size_hint`` set to the run's
    ``group_size``. ``band`` lives there; the deprecated ``GRPOConfig.band`` is forwarded to it
    (with a warning) and must not contradict it."""
    cur = config.curriculum
    # a band the caller named: a dict's "band", or a CurriculumConfig they built
    explicit = (isinstance(cur, Mapping) and "band" in cur) or isinstance(cur, CurriculumConfig)
    if cur is None:
        cur = CurriculumConfig()
    elif isinstance(cur, Mapping):
        try:
            cur = CurriculumConfig.from_options(**dict(cur))
        except TypeError as exc:
            raise ValueError(str(exc)) from None
    elif not isinstance(cur, CurriculumConfig):
        raise ValueError(
            f"GRPOConfig.curriculum = {cur!r} must be a CurriculumConfig, a dict of "
            "its fields, or None"
        )
    band = tuple(float(b) for b in config.band)
    if band not in (_DEFAULT_BAND, cur.band):
        if cur.band != _DEFAULT_BAND or explicit:
            raise ValueError(
                f"GRPOConfig.band = {band} contradicts curriculum.band = {cur.band}; "
                "set the band once, in [curriculum] band"
            )
        warnings.warn(
            "trainer.band (GRPOConfig.band) is deprecated; set [curriculum] band "
            "(CurriculumConfig.band) instead",
            DeprecationWarning,
            stacklevel=4,
        )
        cur = dataclasses.replace(cur, band=band)
    if cur.adaptive_group_size and config.group_size < cur.min_group_size:
        raise ValueError(
            f"adaptive_group_size = true needs group_size >= min_group_size: "
            f"group_size = {config.group_size} < min_group_size = {cur.min_group_size} "
            "(the budget per prompt is group_size; no prompt goes below the floor)"
        )
    return dataclasses.replace(cur, group_size_hint=config.group_size)


def _with_run_length(config) -> CurriculumConfig:
    """``config.curriculum`` with ``run_groups`` (unless set): the most groups this run can roll
    out, which ``spaced_reuse`` compares with the in-band walk."""
    cur_cfg = config.curriculum
    if cur_cfg.run_groups:
        return cur_cfg
    budget = config.max_steps * config.prompts_per_step * config.max_oversample
    return dataclasses.replace(cur_cfg, run_groups=math.ceil(budget))


def make_sampler(
    rows: Sequence[Mapping[str, Any]],
    config: Any,
    *,
    priors: Mapping | None = None,
    model: Any = None,
    log: Callable[[str], None] = print,
    kept: Sequence[int] | None = None,
    given: Any = None,
    reward: Any = None,
):
    """The run's sampler: ``UniformSampler`` when ``use_curriculum`` is off, else a
    ``Curriculum`` with ``config.curriculum`` and priors: ``priors`` when given (prompt
    position -> (passes, trials) or a pass rate), else the pre-scores in ``rows`` weighted by the
    settings they were made with (``model``: the path or object being trained). Says at start
    how many prompts got a prior. ``given``: a sampler passed to ``GRPOTrainer``; ``kept``:
    each row's position in the user's dataset, when ``skip_bad_rows`` dropped some (``priors``
    keys are those positions); ``reward``: the run's reward, for which settings of a
    pre-score matter (``success_threshold`` does not for verdicts)."""
    if kept is not None and (not kept or kept[-1] == len(kept) - 1):
        kept = None  # no row before the last kept one was skipped: positions are unchanged
    if config.prompts_per_step > len(rows):
        log(_more_than_the_data(config.prompts_per_step, len(rows)))
    if given is not None:  # GRPOTrainer(sampler=...): checked by check_sampler already
        log(f"sampler: {type(given).__name__}, given to GRPOTrainer (its own priors)")
        return check_sampler_rows(given, kept)
    ids = list(range(len(rows)))
    if priors and kept is not None:
        priors = _to_kept_positions(priors, kept, log)
    if not config.use_curriculum:
        if priors:
            warnings.warn(
                "priors= given but use_curriculum is off: uniform sampling ignores them",
                stacklevel=3,
            )
        log(_uniform_note(rows, config))
        return UniformSampler(ids, seed=config.seed)
    cur_cfg = _with_run_length(config)
    texts = [prompt_of(row) for row in rows] if cur_cfg.predict_fresh else None
    if priors is None:
        found = _data_priors(rows, config, model, log, kept, reward)
        return Curriculum(ids, priors=found, seed=config.seed, config=cur_cfg, texts=texts)
    return _given_priors(rows, priors, cur_cfg, config.seed, texts, log)


def _given_priors(rows, priors: Mapping, cur_cfg, seed, texts, log: Callable[[str], None]):
    """The curriculum on ``priors=`` (``GRPOTrainer``'s), and its start line: how many prompts
    got one, the keys that name no prompt (all of them: a ``ConfigError``), and the rows' own
    pre-scores it replaces."""
    ids = list(range(len(rows)))
    with warnings.catch_warnings():  # the line below names the keys that match no prompt
        warnings.filterwarnings("ignore", r".* prior keys match no prompt id")
        curriculum = Curriculum(ids, priors=priors, seed=seed, config=cur_cfg, texts=texts)
    counts = curriculum.metrics()
    used, unused = int(counts["priors/used"]), int(counts["priors/unused"])
    line = (
        f"curriculum: priors for {used} of {len(ids)} prompts (given to GRPOTrainer); "
        f"counts weighted x{cur_cfg.prior_weight:g}"
    )
    if unused:
        known = set(ids)
        odd = next((k for k in priors if k not in known), None)
        what = (
            f"{unused} of the {len(priors)} keys match no prompt position (0..{len(ids) - 1}), "
            f"e.g. {odd!r}" + (" (a string: positions are ints)" if isinstance(odd, str) else "")
        )
        if not used:  # not one prior would reach the curriculum: a mistake, not a choice
            raise ConfigError(f"GRPOTrainer: priors= {what}; key them by row position")
        line += f"; {what}"
    scored = sum(1 for row in rows if _has_prior(row))
    if scored:
        line += f"; the pre-scores of {scored} rows are not used (priors= replaces them)"
    log(line)
    return curriculum


def _data_priors(
    rows, config: Any, model: Any, log: Callable[[str], None], kept=None, reward=None
) -> dict:
    """The pre-scores in ``rows``, weighted by the settings they were made with (``model``: the
    path or object being trained); logs how many prompts got one."""
    cur_cfg = config.curriculum
    name = (
        model
        if isinstance(model, str)
        else getattr(getattr(model, "config", None), "_name_or_path", None)
    )
    found = training_priors(
        rows,
        {
            "model": name or None,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "top_k": config.top_k,
            "stop": list(config.stop),
            "max_tokens": config.max_new_tokens,
            # a reward that always gives verdicts passes on them: the threshold decides nothing
            "success_threshold": None if decides_by_verdict(reward) else cur_cfg.success_threshold,
            "verifier": None if reward is None else success_source(reward),
        },
        mismatch_weight=cur_cfg.mismatch_prior_weight,
        positions=kept,
        asked=prompt_of,  # compared with the prompt each row was scored on
    )
    line = found.summary(cur_cfg.prior_weight, cur_cfg.mismatch_prior_weight)
    # resume = true: a checkpoint, if the run has one, brings back the curriculum's own state
    log(
        line
        + ("; resuming: a checkpoint's curriculum state replaces this" if config.resume else "")
    )
    return found.priors


def _more_than_the_data(per_step: int, rows: int) -> str:
    return (
        f"passband: prompts_per_step = {per_step} but the data holds {rows} prompts: each step "
        "draws some prompts more than once, each draw its own group of group_size answers; set "
        f"prompts_per_step to at most {rows} (and raise group_size for more answers per prompt)"
    )


def _uniform_note(rows: Sequence[Mapping[str, Any]], config: Any) -> str:
    """The start-up line of a run without the curriculum: what in the data and the config it
    leaves unused, so a scored file or a ``[curriculum]`` section is not dropped in silence."""
    line = "sampling: uniform passes over the data (use_curriculum = false)"
    scored = sum(1 for row in rows if _has_prior(row))
    if scored:
        line += f"; the pre-scores of {scored} rows are not used"
    default = dataclasses.replace(CurriculumConfig(), group_size_hint=config.group_size)
    changed = [
        f.name
        for f in dataclasses.fields(CurriculumConfig)
        if getattr(config.curriculum, f.name) != getattr(default, f.name)
    ]
    if changed:
        line += f"; curriculum settings not used: {', '.join(changed)}"
    return line


def _has_prior(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` holds a usable pre-score (empty cells and 0 passes in 0 trials do not)."""
    try:
        return row_prior(row) is not None
    except ValueError:
        return True  # a bad cell is still a pre-score left unused


def _to_kept_positions(priors: Mapping, kept: Sequence[int], log: Callable[[str], None]) -> dict:
    """``priors`` keyed by dataset position, re-keyed by position among the kept rows. The keys
    of skipped rows are dropped, and said; a key that is no position at all is passed on as it
    is, so the curriculum counts (and warns about) it as matching no prompt."""
    where = {old: new for new, old in enumerate(kept)}
    out, skipped = {}, 0
    for k, v in priors.items():
        if k in where:
            out[where[k]] = v
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 0 <= k <= kept[-1]:
            skipped += 1  # a row skip_bad_rows dropped
        else:
            out[k] = v  # beyond the kept positions (k > kept[-1] >= len(kept) - 1) or no int
    if skipped:
        log(f"curriculum: {skipped} priors= keys are rows skipped as unusable (skip_bad_rows)")
    return out
