"""Guardrails: turn the per-step metrics into warnings that say what is wrong and what to try.

The trainer calls ``AlertMonitor.update(metrics)`` once per optimizer step with the same flat dict
it writes to ``metrics.jsonl``; ``passband report`` replays a finished file through a fresh monitor
to place markers on its charts. Pure Python on purpose (no torch, no numpy): it must be cheap
enough to run every step and importable by the report without the training stack.

An alert fires when its condition becomes true and again only after ``cooldown_steps`` if the
condition still holds, so a run stuck in one pathology prints one line every ``cooldown_steps``
steps, not one per step. A missing or non-numeric metric silences the check that needs it (a run
without a curriculum or without a verifier timeout rate is not an error).

What to investigate first is the same for every alert, in this order: the per-prompt reward
distributions and the share of groups that carry signal (``passband report``), then the reward
scaling, then the learning rate.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, fields, replace

__all__ = ["Alert", "AlertMonitor", "AlertThresholds", "ALERT_NAMES"]

ALERT_NAMES = (
    "length_inflation",
    "zero_variance",
    "kl_high",
    "reward_collapse",
    "verifier_errors",
    "verifier_timeouts",
)

_FIRST_LOOK = (
    "Look first at the per-prompt reward distributions and the effective-group share "
    "(passband report RUN_DIR), then at the reward scaling, then at the learning rate."
)


@dataclass(frozen=True)
class Alert:
    """One fired guardrail. ``str(alert)`` is the line the trainer stores in ``metrics['alerts']``."""

    name: str  # one of ALERT_NAMES
    message: str  # what is wrong and what to try
    step: int  # optimizer step at which it fired
    value: float  # the measured quantity that crossed its threshold

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


@dataclass(frozen=True)
class AlertThresholds:
    """When each alert fires. Defaults suit GRPO on reasoning tasks; all are per optimizer step."""

    length_window: int = 20
    """Steps compared for length inflation (first vs last quarter)."""
    length_growth: float = 0.3
    """Relative growth of length/mean over the window that is suspicious."""
    pass_rate_tolerance: float = 0.02
    """Pass-rate gain (absolute) below which accuracy "did not move"."""
    zero_variance_share: float = 0.8
    """Share of rolled groups with identical rewards ..."""
    zero_variance_steps: int = 5
    """... for this many consecutive steps."""
    kl_max: float = 0.5
    """Per-token KL to the reference above which the policy is drifting away."""
    kl_steps: int = 1
    """Consecutive steps above kl_max before firing."""
    reward_std_min: float = 1e-3
    """Reward/std below this means every completion scored the same."""
    reward_collapse_steps: int = 3
    """Consecutive collapsed steps before firing."""
    verifier_error_rate: float = 0.05
    """Share of completions whose verifier failed."""
    verifier_timeout_rate: float = 0.05
    """Share of completions whose verifier timed out."""
    cooldown_steps: int = 50
    """Steps before an alert whose condition persists fires again."""

    def __post_init__(self) -> None:
        for name in ("length_window", "zero_variance_steps", "kl_steps", "reward_collapse_steps"):
            _check(name, getattr(self, name), 1, None)
        _check("length_window", self.length_window, 4, None)
        _check("cooldown_steps", self.cooldown_steps, 0, None)
        _check("length_growth", self.length_growth, 0.0, None)
        _check("pass_rate_tolerance", self.pass_rate_tolerance, 0.0, 1.0)
        _check("zero_variance_share", self.zero_variance_share, 0.0, 1.0)
        _check("kl_max", self.kl_max, 0.0, None)
        _check("reward_std_min", self.reward_std_min, 0.0, None)
        _check("verifier_error_rate", self.verifier_error_rate, 0.0, 1.0)
        _check("verifier_timeout_rate", self.verifier_timeout_rate, 0.0, 1.0)


def _check(name: str, value: float, low: float, high: float | None) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"AlertThresholds.{name}={value!r}: expected a number")
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"AlertThresholds.{name}={value!r}: must be {allowed}")


def _num(metrics: dict, key: str) -> float | None:
    """The metric as a finite float, or None when absent/non-numeric (that check is skipped)."""
    value = metrics.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


class AlertMonitor:
    """Stateful checker fed one metrics dict per step.

    ``AlertMonitor()`` uses the defaults; ``AlertMonitor(kl_max=0.2)`` or
    ``AlertMonitor(AlertThresholds(...))`` override them. ``active`` holds the names whose condition
    held at the last update (fired or held back by the cool-down), which the report uses to mark
    every affected step rather than only the ones that printed a line.
    """

    def __init__(self, thresholds: AlertThresholds | None = None, **overrides: float) -> None:
        base = thresholds or AlertThresholds()
        valid = {f.name for f in fields(AlertThresholds)}
        unknown = sorted(set(overrides) - valid)
        if unknown:
            raise TypeError(f"unknown alert threshold(s) {unknown}; valid: {sorted(valid)}")
        self.thresholds = replace(base, **overrides)
        t = self.thresholds
        self._history: deque[tuple[float, float]] = deque(maxlen=t.length_window)
        self._streaks = {name: 0 for name in ALERT_NAMES}
        self._last_fired: dict[str, int] = {}
        self._step = -1
        self.active: frozenset[str] = frozenset()

    def replay(self, metrics_path) -> None:
        """Feed a run's kept metrics lines (JSONL) so the alert windows match an unbroken run."""
        import json
        from pathlib import Path

        path = Path(metrics_path)
        for line in path.read_text().splitlines() if path.exists() else ():
            if line.strip():
                self.update(json.loads(line))

    def update(self, metrics: dict) -> list[Alert]:
        """Check one step's metrics; return the alerts that fire now (usually none)."""
        step = metrics.get("step")
        self._step = int(step) if isinstance(step, (int, float)) else self._step + 1
        found = [
            self._length_inflation(metrics),
            self._zero_variance(metrics),
            self._kl(metrics),
            self._reward_collapse(metrics),
            self._verifier(metrics, "error"),
            self._verifier(metrics, "timeout"),
        ]
        found = [alert for alert in found if alert is not None]
        self.active = frozenset(alert.name for alert in found)
        return [alert for alert in found if self._due(alert.name)]

    def _due(self, name: str) -> bool:
        last = self._last_fired.get(name)
        if last is not None and self._step - last < self.thresholds.cooldown_steps:
            return False
        self._last_fired[name] = self._step
        return True

    def _streak(self, name: str, condition: bool) -> int:
        self._streaks[name] = self._streaks[name] + 1 if condition else 0
        return self._streaks[name]

    def _alert(self, name: str, value: float, message: str) -> Alert:
        return Alert(name=name, message=message, step=self._step, value=float(value))

    def _length_inflation(self, m: dict) -> Alert | None:
        length, pass_rate = _num(m, "length/mean"), _num(m, "pass_rate")
        if length is None or pass_rate is None:
            return None
        self._history.append((length, pass_rate))
        t = self.thresholds
        if len(self._history) < t.length_window:
            return None
        quarter = max(1, t.length_window // 4)
        window = list(self._history)
        len_before, len_now = (
            _mean(x[0] for x in window[:quarter]),
            _mean(x[0] for x in window[-quarter:]),
        )
        acc_before, acc_now = (
            _mean(x[1] for x in window[:quarter]),
            _mean(x[1] for x in window[-quarter:]),
        )
        if len_before <= 0:
            return None
        growth = len_now / len_before - 1.0
        if growth <= t.length_growth or acc_now - acc_before > t.pass_rate_tolerance:
            return None
        return self._alert(
            "length_inflation",
            growth,
            (
                f"mean completion length grew {growth:+.0%} ({len_before:.0f} -> {len_now:.0f} tokens) "
                f"over {t.length_window} steps while pass rate went {acc_before:.2f} -> {acc_now:.2f}. "
                "The policy is being paid for length, not correctness. Try: loss_aggregation = "
                "token_mean or constant_norm (per-sequence averaging dilutes the penalty on long wrong "
                "answers), a length penalty in the reward, mask_truncated = true, or a smaller "
                "max_new_tokens. " + _FIRST_LOOK
            ),
        )

    def _zero_variance(self, m: dict) -> Alert | None:
        share, t = _num(m, "groups/zero_variance_share"), self.thresholds
        streak = self._streak("zero_variance", share is not None and share > t.zero_variance_share)
        if streak < t.zero_variance_steps:
            return None
        return self._alert(
            "zero_variance",
            share,
            (
                f"{share:.0%} of rolled groups had identical rewards for {streak} consecutive steps "
                f"(threshold {t.zero_variance_share:.0%}): those groups carry no gradient and the "
                "refills cost rollouts. Try: widen the curriculum band, raise temperature, raise "
                "group_size (G), or re-score the dataset to drop prompts that are always solved or "
                "never solved. " + _FIRST_LOOK
            ),
        )

    def _kl(self, m: dict) -> Alert | None:
        kl, t = _num(m, "kl"), self.thresholds
        streak = self._streak("kl_high", kl is not None and kl > t.kl_max)
        if streak < t.kl_steps:
            return None
        return self._alert(
            "kl_high",
            kl,
            (
                f"KL to the reference model is {kl:.3g} per token (threshold {t.kl_max:g}): the policy "
                "is drifting far from where it started, often the prelude to reward hacking or "
                "collapse. Try: a lower learning_rate, a larger beta (KL coefficient), tighter "
                "clip_low/clip_high, or fewer updates per batch (mu). " + _FIRST_LOOK
            ),
        )

    def _reward_collapse(self, m: dict) -> Alert | None:
        std, t = _num(m, "reward/std"), self.thresholds
        if std is None:  # without the batch std, every group being flat is the same symptom
            share = _num(m, "groups/zero_variance_share")
            collapsed = share is not None and share >= 1.0
            std = 0.0 if collapsed else None
        else:
            collapsed = std < t.reward_std_min
        streak = self._streak("reward_collapse", collapsed)
        if streak < t.reward_collapse_steps:
            return None
        mean = _num(m, "reward/mean")
        if mean is None:  # no answer was scored at all: not a flat reward, a failing verifier
            return self._alert(
                "reward_collapse",
                std,
                f"no completion in the batch was scored for {streak} steps (verifier/error_rate "
                f"{_num(m, 'verifier/error_rate')}, verifier/timeout_rate "
                f"{_num(m, 'verifier/timeout_rate')}): every answer was masked and nothing is "
                "learned. Try the reward on a few real completions with passband verify; if it "
                "times out, raise verifier_timeout. " + _FIRST_LOOK,
            )
        level = f" at reward {mean:.3g}"
        return self._alert(
            "reward_collapse",
            std,
            (
                f"every completion in the batch got the same reward{level} for {streak} steps "
                f"(reward/std {std:.2g} < {t.reward_std_min:g}): group advantages are all zero and "
                "nothing is learned. If the reward is at its floor, check the verifier on a few real "
                "completions (answer format, truncation by max_new_tokens); if at its ceiling, the "
                "prompts are too easy. Try: raise temperature, raise group_size, "
                + (
                    "check the curriculum's band and pools (curriculum/* metrics). "
                    if any(k.startswith("curriculum/") for k in m)
                    else "enable the curriculum. "
                )
                + _FIRST_LOOK
            ),
        )

    def _verifier(self, m: dict, kind: str) -> Alert | None:
        name = "verifier_errors" if kind == "error" else "verifier_timeouts"
        rate = _num(m, f"verifier/{kind}_rate")
        limit = getattr(self.thresholds, f"verifier_{kind}_rate")
        if rate is None or rate <= limit:
            return None
        advice = (
            "Run `passband verify` on a few failing completions to see the error detail; "
            "a verifier should return 'wrong' or 'invalid' for bad output, never raise."
            if kind == "error"
            else "Raise verifier_timeout, add verifier_workers, or cap max_new_tokens; for code, "
            "check the sandbox limits."
        )
        return self._alert(
            name,
            rate,
            (
                f"{rate:.0%} of completions ended in a verifier {kind} (threshold {limit:.0%}); "
                f"they are masked out of the loss, so the effective batch shrinks. {advice}"
            ),
        )
