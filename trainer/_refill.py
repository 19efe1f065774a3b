"""How many prompts to roll out so that one ``generate`` round usually fills the step.

Zero-variance groups carry no gradient and are dropped. Refilling them in serial rounds costs one
more ``generate`` call each (a full decode for a few groups: on a GPU the decode's latency, not
its batch, sets its cost). Instead the first round draws extra prompts, as DAPO's generation batch
does, but sized from what the sampler predicts: the curriculum's P(signal) of each drawn prompt
(``Curriculum.signal_chance``, from its posteriors). The number drawn is the smallest whose count
of groups with signal reaches the target at about the 70th percentile (half a standard deviation).

Generation is most of a step, so a step's roll-out has a budget: ``GRPOConfig.max_oversample``
(default 1.25) times ``prompts_per_step`` prompts over all its rounds together (``rollout_room``).
The first round may use all of it; a top-up round runs only on a real shortfall (more than
``SHORTFALL_SHARE`` of ``prompts_per_step`` missing; any group missing below 8 prompts per step)
and only from what is left. On a hard task (few groups with signal) the step then trains on the
groups it found rather than paying more decodes for a few more groups: an extra prompt costs its
whole decode and brings a group with signal only at the prompt's P(signal), so past a small margin
a wider roll-out buys no more signal per completion, only slower steps. Measured
(BENCHMARKS.md): the old per-round cap of 2x with two top-ups rolled out 4.6 completions per one
trained and spent 80% of the step generating; a budget of 1.5x against 1.25x cost the spread task
0.63x against 0.50x of TRL's completions to reach TRL's accuracy and the >= 64-token task 0.55-0.58x
against 0.41-0.48x of TRL's time per step. On a GPU, where a wider decode costs little, a larger
budget may pay. A step short of groups trains on what it has (the loss is a token mean, so a
smaller batch is not mis-scaled). Surplus groups with signal are observed (the curriculum learns
from them) but not trained on: the batch keeps ``prompts_per_step`` groups.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = [
    "draws_for",
    "predicted_signal",
    "short_batch_note",
    "real_shortfall",
    "rollout_room",
    "SHORTFALL_SHARE",
    "AUTO_ROLLOUT_ROWS",
    "rollout_rows",
]

SHORTFALL_SHARE = 1 / 8  # missing groups a step tolerates before a top-up round, as a share
AUTO_ROLLOUT_ROWS = 256  # rows per generate call when rollout_batch_size is None (one process)
_Z = 0.5  # margin in standard deviations of the count of groups with signal
_FLOOR = 0.05  # a prediction below this is not trusted to size a draw


def real_shortfall(missing: int, prompts_per_step: int, first_round: bool) -> bool:
    """Whether to roll out (again): always for the first round, else when more than the
    tolerated share of the step's groups is missing."""
    return missing > 0 and (first_round or missing > int(prompts_per_step * SHORTFALL_SHARE))


def rollout_room(rolled: int, prompts_per_step: int, oversample: float) -> int:
    """Prompts the step may still roll out: its budget of ``oversample`` x ``prompts_per_step``
    (``GRPOConfig.max_oversample``; at least one more than ``prompts_per_step``) less those
    ``rolled``."""
    budget = max(math.floor(prompts_per_step * oversample), prompts_per_step + 1)
    return max(0, budget - rolled)


def rollout_rows(config: Any, world_size: int = 1) -> int:
    """Sequences per ``generate`` call: ``config.rollout_batch_size``, or when it is ``None``: in
    one process the step's whole roll-out budget (``prompts_per_step`` x G plus the refill
    margin), so a round is one call; with N ranks the budget split evenly over them, or
    ``prompts_per_step`` x G split evenly where that would leave a rank without a chunk of a
    ``prompts_per_step`` round. At most ``AUTO_ROLLOUT_ROWS``, at least one group. Measured
    on 2 CPU cores (BENCHMARKS.md) one call of 192 rows decodes faster than three of 64; on a
    GPU the decode's latency, not its width, sets its cost."""
    if config.rollout_batch_size is not None:
        return int(config.rollout_batch_size)
    G, n = int(config.group_size), int(config.prompts_per_step)
    budget = rollout_room(0, n, config.max_oversample)
    prompts = budget if world_size <= 1 else -(-budget // world_size)
    if world_size > 1 and -(-n // prompts) < world_size:  # a round of n prompts must reach every
        prompts = -(-n // world_size)  # rank: then a budget round makes one more chunk
    return max(G, min(AUTO_ROLLOUT_ROWS, G * prompts))


def predicted_signal(sampler: Any, prompt_ids: Sequence[Any]) -> float | None:
    """Mean P(signal) of ``prompt_ids`` as the sampler predicts it; ``None`` when it cannot.

    ``signal_chance(ids) -> list[float]`` is an optional sampler method (the curriculum and the
    uniform sampler have it); a custom sampler without it gets serial top-ups only.
    """
    chance = getattr(sampler, "signal_chance", None)
    if chance is None or not prompt_ids:
        return None
    values = [float(p) for p in chance(list(prompt_ids))]
    return sum(values) / len(values) if values else None


def draws_for(needed: int, chance: float | None, available: int, oversample: float) -> int:
    """Prompts to draw so that about ``needed`` of them have signal, given each has ``chance``;
    at most ``oversample`` x ``needed`` and ``available`` (the prompts left, capped by
    ``rollout_room``)."""
    if needed <= 0:
        return 0
    if chance is None or chance >= 0.999:
        return min(needed, available)
    p = max(chance, _FLOOR)
    cap = min(available, math.ceil(needed * oversample))
    k = needed
    while k < cap and k * p - _Z * math.sqrt(k * p * (1 - p)) < needed:
        k += 1
    return max(min(k, cap), min(needed, available))


def short_batch_note(step: int, kept: int, rounds: int, times: int, config: Any) -> str:
    """The line the trainer prints when a step trains on fewer groups than ``prompts_per_step``
    (``config``: the trainer's ``GRPOConfig``). It states the step's real roll-out: exactly
    ``prompts_per_step`` prompts without refills (``max_refill_rounds = 0``)."""
    wanted, oversample = config.prompts_per_step, config.max_oversample
    what = "skipping the update" if kept == 0 else "training on the smaller batch"
    if config.max_refill_rounds > 0 and config.filter_zero_variance:
        why = (
            f"a step rolls out at most {rollout_room(0, wanted, oversample)} prompts "
            f"(max_oversample = {oversample:g}), in 1 + max_refill_rounds rounds"
        )
    else:
        why = f"no refills: a step rolls out exactly {wanted} prompts; raise max_refill_rounds"
    return (
        f"step {step}: {kept}/{wanted} groups have reward variance after {rounds} refill "
        f"round(s); {what} (happened {times}x; {why}; see groups/zero_variance_share)"
    )
