"""``passband doctor``: a GRPO config against the ranges practitioners recommend, explained.

Two tiers, one source per tier:
- ``passband.trainer.config.RECOMMENDED`` holds the bounds outside which the trainer itself warns
  at construction; a value outside them is a ``warn`` finding and carries the trainer's own text.
- ``TYPICAL`` below holds the narrower ranges most published GRPO recipes use (G 8-16, KL
  coefficient 0.001-0.01, clip 0.2-0.3, temperature 0.9-1.2, 64-512 prompts per step); outside
  them is a ``note``: legitimate for smoke tests and small models, but the user should know what
  it costs.

The learning rate depends on the model's size (``LEARNING_RATE_BY_SIZE``): GRPO recipes use
1e-6 to 5e-6 for 1B-8B models, up to 2e-5 for small ones (<= 0.5B), 5e-7 to 1e-6 from 30B. When
the parameter count is known, a learning rate above the range for that size is a ``warn``: the
trainer warns too, at start-up, once it has loaded the model and knows its size (the ranges live in
``passband.trainer._recommended``); unknown, the 1B-8B range applies as a ``note``.
"""

from __future__ import annotations

from dataclasses import dataclass

from passband.trainer._recommended import (
    LARGE_MODEL_PARAMS,
    LEARNING_RATE_BY_SIZE,
    SMALL_MODEL_PARAMS,
    count_text,
    learning_rate_range,
)

__all__ = [
    "Finding",
    "TYPICAL",
    "LEARNING_RATE_BY_SIZE",
    "SMALL_MODEL_PARAMS",
    "LARGE_MODEL_PARAMS",
    "count_text",
    "learning_rate_range",
    "check_settings",
    "format_findings",
    "dominant_phase",
]

# Per-phase seconds the trainer logs in every metrics line, what the phase is, and what to try
# when it dominates: (advice, whether it is still open given the run's settings).
_PHASES = {
    "sample": "the curriculum's draw",
    "generate": "generation",
    "score": "the verifiers",
    "update": "the update",
    "sync": "the weight sync to the rollout engine",
}
_PHASE_ADVICE = {
    "sample": [("a very large dataset? (see curriculum/* metrics)", lambda v: True)],
    "generate": [
        ('rollout_backend = "vllm" on a GPU', lambda v: v.get("rollout_backend") != "vllm"),
        ("a larger rollout_batch_size", lambda v: True),
        ("a smaller max_new_tokens", lambda v: True),
    ],
    "score": [
        ("raise verifier_workers", lambda v: True),
        ("make the reward cheaper", lambda v: True),
    ],
    "update": [
        ("bf16 on a GPU", lambda v: not v.get("bf16", False)),
        ("a smaller grad_accum", lambda v: v.get("grad_accum", 2) > 1),
        ("beta = 0 (no reference forward)", lambda v: v.get("beta", 1) > 0),
        ("mu = 1", lambda v: v.get("mu", 2) > 1),
    ],
    "sync": [("expected with vLLM on a large model", lambda v: True)],
}


def _advice(phase: str, settings: dict | None) -> str:
    """What to try for ``phase``, leaving out what ``settings`` (GRPOConfig fields) already do."""
    settings = settings or {}
    items = [text for text, still_open in _PHASE_ADVICE[phase] if still_open(settings)]
    if not items:  # every knob already at its cheapest
        return (
            f"{_PHASES[phase]}: its settings are already at their cheapest here; fewer tokens "
            "per step (prompts_per_step, group_size, max_new_tokens) or a smaller model"
        )
    return f"{_PHASES[phase]}: {', '.join(items)}"


# field -> (low, high, what happens below, what happens above)
TYPICAL: dict[str, tuple[float, float, str, str]] = {
    "group_size": (
        8,
        16,
        "fewer samples per prompt: more groups with identical rewards (no gradient) and a "
        "noisier group mean/std baseline",
        "rollout cost grows linearly with G while the baseline barely improves; spend it on "
        "more prompts instead",
    ),
    "beta": (
        0.001,
        0.01,
        "little or no KL penalty: nothing pulls the policy back to the reference (common for "
        "verifiable rewards, e.g. DAPO, Dr. GRPO), so watch the kl metric and the kl_high alert",
        "a strong KL penalty holds the policy near the reference and cancels much of the reward "
        "signal",
    ),
    "clip_low": (
        0.2,
        0.3,
        "a narrow clip range clips most token updates: slow learning, high clip_fraction",
        "a wide clip range lets one update move token probabilities far off-policy: unstable",
    ),
    "clip_high": (
        0.2,
        0.3,
        "a narrow upper clip stops low-probability tokens from growing: entropy collapses "
        "(clip-higher uses ~0.28)",
        "a wide upper clip lets single updates inflate rare tokens: unstable training",
    ),
    "temperature": (
        0.9,
        1.2,
        "low temperature makes the G samples of a group alike: more zero-variance groups "
        "and less exploration",
        "high temperature produces incoherent samples: rewards drop and lengths grow",
    ),
    "max_oversample": (
        1.0,
        2.0,
        "no margin: a step short of groups with reward variance is topped up in serial rounds",
        "a wide roll-out budget decodes many prompts whose groups are dropped: on a CPU every "
        "extra row costs its whole decode (on a GPU, where a wider decode costs little, it may pay)",
    ),
    "learning_rate": (  # for a model of unknown size; see learning_rate_range
        *LEARNING_RATE_BY_SIZE["medium"],
        "updates this small barely move a pretrained model in a short run",
        "a pretrained model drifts fast: collapsed outputs, exploding KL, lost skills",
    ),
    "prompts_per_step": (
        64,
        512,
        "few prompts per step: a noisy gradient dominated by a handful of prompts "
        "(fine for smoke tests and the demo)",
        "long steps and few optimizer updates per hour; the curriculum reacts late",
    ),
}


@dataclass(frozen=True)
class Finding:
    field: str
    value: object
    status: str  # ok | low | high | n/a
    severity: str  # ok | note | warn
    typical: str  # the typical range as text
    message: str  # why it matters (empty when ok)
    default: bool  # the value was not set in the file (GRPOConfig default)


def _range_text(low, high) -> str:
    return f"{low:g}..{high:g}"


def _recommended() -> dict:
    try:
        from passband.trainer.config import RECOMMENDED
    except ImportError:  # trainer config missing: the typical ranges alone still apply
        return {}
    return RECOMMENDED


def _outside(value: float, low, high) -> str | None:
    if low is not None and value < low:
        return "low"
    if high is not None and value > high:
        return "high"
    return None


def _check_learning_rate(value: float, explicit: bool, params, recommended: dict) -> Finding:
    """Against the range for the model's size, the one the trainer checks at start-up; above
    ``GRPOConfig``'s own bound (the top of every range) its text is kept."""
    low, high, whom = learning_rate_range(params)
    typical = f"{_range_text(low, high)} {whom}"
    r_high, risk = recommended.get("learning_rate", (None, None, ""))[1:]

    def found(status: str, severity: str, message: str) -> Finding:
        return Finding("learning_rate", value, status, severity, typical, message, not explicit)

    usual = f"GRPO recipes use {_range_text(low, high)} {whom}"
    if r_high is not None and value > r_high:
        return found("high", "warn", f"{usual}; {risk} (the trainer warns too)")
    if value > high:
        if params is None:  # the trainer checks the real size once it has loaded the model
            return found("high", "note", f"{usual}; above it {TYPICAL['learning_rate'][3]}")
        return found(
            "high",
            "warn",
            f"{usual}; above it {TYPICAL['learning_rate'][3]} (the trainer warns too)",
        )
    if value < low:
        return found("low", "note", TYPICAL["learning_rate"][2])
    return found("ok", "ok", "")


def _check_one(
    name: str, value, explicit: bool, pretrained: bool, recommended: dict, params=None
) -> Finding:
    low, high, below, above = TYPICAL.get(name, (None, None, "", ""))
    typical = _range_text(low, high) if low is not None else "-"
    if name == "learning_rate" and not pretrained:
        return Finding(
            name,
            value,
            "n/a",
            "ok",
            typical,
            "pretrained = false: the pretrained-model range does not apply",
            not explicit,
        )
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return Finding(name, value, "n/a", "ok", typical, "not a number; not checked", not explicit)
    if name == "learning_rate":
        return _check_learning_rate(value, explicit, params, recommended)
    if name in recommended:
        r_low, r_high, risk = recommended[name]
        side = _outside(value, r_low, r_high)
        if side:
            return Finding(
                name, value, side, "warn", typical, f"{risk} (the trainer warns too)", not explicit
            )
    side = _outside(value, low, high) if low is not None else None
    if side is None:
        return Finding(name, value, "ok", "ok", typical, "", not explicit)
    return Finding(
        name, value, side, "note", typical, below if side == "low" else above, not explicit
    )


def check_settings(
    values: dict, explicit: set[str] | None = None, params: float | None = None
) -> list[Finding]:
    """One finding per checked field of ``values`` (a GRPOConfig as a dict, defaults included).
    ``params``: the model's parameter count, which sets the learning-rate range (None: unknown)."""
    explicit = set(values) if explicit is None else explicit
    pretrained = bool(values.get("pretrained", True))
    recommended = _recommended()
    names = list(TYPICAL) + [n for n in recommended if n not in TYPICAL]
    return [
        _check_one(n, values[n], n in explicit, pretrained, recommended, params)
        for n in names
        if n in values
    ]


def format_findings(findings: list[Finding]) -> str:
    """Aligned text: one line per setting, the explanation indented under anything not ok."""
    marks = {"ok": "ok  ", "note": "NOTE", "warn": "WARN"}
    width = max((len(f"{f.field} = {f.value!r}") for f in findings), default=10)
    lines = []
    for f in findings:
        setting = f"{f.field} = {f.value!r}"
        origin = " (default)" if f.default else ""
        side = {"low": "below", "high": "above"}.get(f.status, "")
        where = (
            f"{side} typical {f.typical}"
            if side
            else (f"typical {f.typical}" if f.typical != "-" else "")
        )
        lines.append(f"  {marks[f.severity]}  {setting:<{width}}  {where}{origin}")
        if f.message:
            lines.append(f"          {f.message}")
    return "\n".join(lines)


def dominant_phase(metrics_lines: list[dict], settings: dict | None = None) -> str | None:
    """Which phase (``time/<phase>_s``) takes most of a run's step time, with its share and what
    to try; ``None`` when the lines carry no phase times. The first step (start-up) is left out
    when there are others. ``settings`` (GRPOConfig fields): advice they already follow (``mu =
    1`` where mu is 1) is left out."""
    lines = [m for m in metrics_lines if "time/generate_s" in m]
    lines = lines[1:] if len(lines) > 1 else lines
    if not lines:
        return None
    totals = {p: sum(m.get(f"time/{p}_s") or 0.0 for m in lines) for p in _PHASES}
    step = sum(m.get("time/step_s") or 0.0 for m in lines) or sum(totals.values()) or 1.0
    name = max(totals, key=totals.get)
    shares = ", ".join(f"{p} {totals[p] / step:.0%}" for p in _PHASES)
    return (
        f"time: {name} dominates ({totals[name] / step:.0%} of step time over {len(lines)} "
        f"steps; {shares}); to speed it up: {_advice(name, settings)}"
    )
