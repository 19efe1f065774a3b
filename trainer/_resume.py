"""Settings changed on resume: applied and named, named as ignored, or refused.

``passband train CONFIG --resume trainer.learning_rate=1e-6`` must not be silently dropped:
loading the optimizer state brings back the checkpoint's learning rate and weight decay, so they
are written back into the optimizer and the scheduler here. Every other setting is read from the
config at each step, so the new value simply holds. ``seed`` cannot take effect (the run continues
with the checkpoint's seed, which seeds every rollout, and its RNG states) and is named as
ignored; settings that change what the checkpoint holds (the sampler kind, the LoRA adapters) are
refused before anything is loaded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from passband.errors import ConfigError

__all__ = [
    "reconcile",
    "changed_settings",
    "check_resumable",
    "apply_to_optimizer",
    "check_same_data",
    "prompts_digest",
    "rows_digest",
    "reward_record",
    "changed_inputs",
]

# Changing these would leave nothing to continue: the checkpoint holds a different state.
_FIXED = ("use_curriculum", "lora_r", "lora_alpha", "lora_target_modules")
_WEIGHED = "the priors were weighed when the run started; the curriculum's saved state carries them"
_IGNORED = {
    "seed": "the run continues with the checkpoint's seed and random states",
    "curriculum.prior_weight": _WEIGHED,
    "curriculum.mismatch_prior_weight": _WEIGHED,
}
_UNTRACKED = ("resume", "overwrite", "progress")  # how to run, not what is trained


# What a checkpoint written before a setting existed ran with (the setting's old fixed value)
_IMPLIED = {"max_oversample": 1.5}


def changed_settings(saved: dict[str, Any], current: dict[str, Any]) -> dict[str, tuple]:
    """``name -> (checkpoint value, new value)`` for every trainer setting that differs; a setting
    the checkpoint predates counts with the value its run had (``_IMPLIED``)."""
    saved = {**{k: v for k, v in _IMPLIED.items() if k not in saved}, **saved}
    out = {}
    for k, v in current.items():
        if k not in saved or k in _UNTRACKED or _norm(saved[k]) == _norm(v):
            continue
        if isinstance(v, dict) and isinstance(saved[k], dict):  # a section (``curriculum``): the
            out.update(  # fields that changed, each on its own, not the whole table twice
                (f"{k}.{f}", (saved[k].get(f), v.get(f)))
                for f in sorted(set(v) | set(saved[k]))
                if _norm(saved[k].get(f)) != _norm(v.get(f))
            )
        else:
            out[k] = (saved[k], v)
    return out


def _norm(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def prompts_digest(prompts: Iterable[Any]) -> str:
    """SHA-256 over the prompts (text or chat messages) in order."""
    digest = hashlib.sha256()
    for prompt in prompts:
        digest.update(json.dumps(prompt, default=str, sort_keys=True).encode() + b"\n")
    return digest.hexdigest()


def check_same_data(state: dict[str, Any], checkpoint, rows: Sequence, digest: str) -> None:
    """Refuse a resume on other training prompts: the curriculum's state and the data position
    are by row, so other, reordered or added rows would give each prompt another's history.
    Checkpoints written before the digest was kept are checked by the sampler's own state."""
    saved = state.get("data")
    if saved is None or saved.get("prompts_sha256") == digest:
        return
    count = (
        f"{saved.get('rows')} rows then, {len(rows)} now"
        if saved.get("rows") != len(rows)
        else f"the same {len(rows)} rows, but their prompts or their order differ"
    )
    raise ConfigError(
        f"cannot resume {checkpoint}: the training data is not the run's ({count}); the "
        "curriculum's state is by row position. Train on the data the run started with, or "
        "start a new run (another output_dir, or overwrite = true)"
    )


def rows_digest(rows: Iterable[Any]) -> str:
    """SHA-256 over every row's columns but the prompt (``prompts_digest`` covers it, before any
    truncation), in order: references and gold answers. Any cell is read the same in every
    process: dicts with mixed keys, sets, objects whose text holds a memory address."""
    digest = hashlib.sha256()
    for row in rows:
        cells = {k: v for k, v in dict(row).items() if k not in ("prompt", "messages")}
        digest.update(json.dumps(_canonical(cells)).encode() + b"\n")
    return digest.hexdigest()


def _canonical(value: Any) -> Any:
    """``value`` as JSON whose text does not depend on the process: keys and set members sorted
    by their canonical text; anything else by its type and, unless it shows an address, its text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        items = [[_canonical(k), _canonical(v)] for k, v in value.items()]
        return {"dict": sorted(items, key=lambda kv: json.dumps(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"set": sorted((_canonical(v) for v in value), key=json.dumps)}
    text = str(value)
    return {type(value).__name__: None if " at 0x" in text else text}


def reward_record(reward: Any, references: Any) -> dict[str, Any]:
    """What a checkpoint records of the run's reward: what decides a success, a ``Reward``'s
    terms and penalties, and the reference columns given."""
    from passband.curriculum._success import success_source

    names = getattr(reward, "component_names", None)
    return {
        "decides": success_source(reward),
        "terms": list(names) if names is not None else None,
        "references": dict(references or {}),
    }


def changed_inputs(state: dict[str, Any], reward: dict[str, Any], rows_sha256: str) -> list[str]:
    """One line per input that changed since the checkpoint but that resuming keeps: the reward
    (the curriculum's pass rates were measured with the old one) and the data's other columns
    (the same prompts, other references). Checkpoints from before these were kept say nothing."""
    lines = []
    saved = state.get("reward")
    if saved is not None and saved != reward:
        lines.append(
            f"applied reward {_said(reward)} (checkpoint {_said(saved)}); the curriculum's pass "
            "rates so far were measured with the checkpoint's reward"
        )
    saved_rows = state.get("data", {}).get("rows_sha256")
    if saved_rows is not None and saved_rows != rows_sha256:
        lines.append(
            "the data's prompts are the run's but other columns changed (reference answers, "
            "tests): the curriculum's pass rates so far were measured against the old ones"
        )
    return lines


def _said(record: dict[str, Any]) -> str:
    terms = f" terms {record['terms']}" if record.get("terms") else ""
    refs = f" references {record['references']}" if record.get("references") else ""
    return f"{record.get('decides')!r}{terms}{refs}"


def check_resumable(changes: dict[str, tuple], checkpoint) -> None:
    fixed = {k: v for k, v in changes.items() if k in _FIXED}
    if fixed:
        said = ", ".join(
            f"trainer.{k} (checkpoint {a!r}, now {b!r})" for k, (a, b) in fixed.items()
        )
        raise ConfigError(
            f"cannot resume {checkpoint} with changed {said}: the checkpoint holds "
            "state for the old value; put them back or start a new run"
        )


def apply_to_optimizer(changes: dict[str, tuple], config, optimizer, scheduler) -> list[str]:
    """Write a changed learning rate / weight decay over the loaded optimizer state; returns
    one line per change, saying whether it was applied or ignored."""
    if "learning_rate" in changes:
        scheduler.base_lrs = [config.learning_rate for _ in optimizer.param_groups]
        factor = config.lr_factor(scheduler.last_epoch)
        for group in optimizer.param_groups:
            group["initial_lr"] = config.learning_rate
            group["lr"] = config.learning_rate * factor
        scheduler._last_lr = [g["lr"] for g in optimizer.param_groups]
    if "weight_decay" in changes:
        for group in optimizer.param_groups:
            group["weight_decay"] = config.weight_decay
    lines = []
    for name, (old, new) in changes.items():
        if name in _IGNORED:
            lines.append(f"ignored trainer.{name} = {new!r} (checkpoint {old!r}): {_IGNORED[name]}")
        else:
            lines.append(f"applied trainer.{name} = {new!r} (checkpoint {old!r})")
    return lines


def reconcile(
    state: dict[str, Any], checkpoint, config, optimizer, scheduler, *, say=print
) -> list[str]:
    """After loading ``checkpoint`` (its ``state.json`` is ``state``): refuse, apply or name as
    ignored each changed setting; ``say`` gets one line per change (the trainer's console)."""
    changes = changed_settings(state.get("config", {}), config.to_dict())
    check_resumable(changes, checkpoint)
    lines = apply_to_optimizer(changes, config, optimizer, scheduler)
    for line in lines:
        say(f"passband: resume: {line}")
    return lines
