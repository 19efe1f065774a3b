"""AlertMonitor: each pathology fires its alert; a healthy run stays silent; no per-step spam."""

import json
import math
import random

import pytest

from passband.trainer.alerts import ALERT_NAMES, Alert, AlertMonitor, AlertThresholds


def _healthy(steps=120, seed=0):
    """Metrics of a run that learns: pass rate rises, length stable, most groups carry signal."""
    rng = random.Random(seed)
    rows = []
    for step in range(1, steps + 1):
        progress = step / steps
        rows.append(
            {
                "step": step,
                "pass_rate": 0.2 + 0.4 * progress + rng.uniform(-0.02, 0.02),
                "length/mean": 200 + rng.uniform(-15, 15),
                "reward/mean": 0.2 + 0.4 * progress,
                "reward/std": 0.4 + rng.uniform(-0.05, 0.05),
                "groups/zero_variance_share": 0.3 + rng.uniform(-0.1, 0.1),
                "kl": 0.01 + 0.05 * progress,
                "verifier/error_rate": 0.0,
                "verifier/timeout_rate": 0.01,
                "alerts": [],
            }
        )
    return rows


def _with(rows, start, **changes):
    """Copy of ``rows`` where, from index ``start`` on, each key follows ``f(i)``."""
    out = [dict(r) for r in rows]
    for i, row in enumerate(out[start:]):
        for key, f in changes.items():
            row[key] = f(i)
    return out


PATHOLOGIES = {
    # length doubles over 40 steps while accuracy sits at 0.3
    "length_inflation": lambda rows: _with(
        rows, 40, **{"length/mean": lambda i: 200 * (1 + i / 40), "pass_rate": lambda i: 0.3}
    ),
    "zero_variance": lambda rows: _with(rows, 60, **{"groups/zero_variance_share": lambda i: 0.95}),
    "kl_high": lambda rows: _with(rows, 70, kl=lambda i: 0.8 + 0.01 * i),
    "reward_collapse": lambda rows: _with(
        rows, 50, **{"reward/std": lambda i: 0.0, "reward/mean": lambda i: 0.0}
    ),
    "verifier_errors": lambda rows: _with(rows, 30, **{"verifier/error_rate": lambda i: 0.2}),
    "verifier_timeouts": lambda rows: _with(rows, 30, **{"verifier/timeout_rate": lambda i: 0.3}),
}


def _replay(rows, **thresholds):
    monitor = AlertMonitor(**thresholds)
    return [alert for row in rows for alert in monitor.update(row)]


def _through_jsonl(rows, tmp_path):
    """Write and re-read a metrics.jsonl so the monitor sees what the trainer really stores."""
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_healthy_run_is_silent(tmp_path):
    assert _replay(_through_jsonl(_healthy(), tmp_path)) == []


@pytest.mark.parametrize("name", sorted(PATHOLOGIES))
def test_each_pathology_fires_its_alert_only(name, tmp_path):
    rows = _through_jsonl(PATHOLOGIES[name](_healthy()), tmp_path)
    alerts = _replay(rows)
    assert {a.name for a in alerts} == {name}
    first = alerts[0]
    assert isinstance(first, Alert) and first.step > 30 and math.isfinite(first.value)
    assert "Try" in first.message or "Raise" in first.message or "Run" in first.message
    assert str(first).startswith(f"{name}: ")


def test_alert_fires_on_transition_then_after_cooldown():
    rows = PATHOLOGIES["kl_high"](_healthy(steps=200))  # KL high from step 71 to 200
    alerts = _replay(rows, cooldown_steps=50)
    assert [a.step for a in alerts] == [71, 121, 171]


def test_zero_variance_needs_k_consecutive_steps():
    rows = _healthy(steps=40)
    flicker = _with(rows, 10, **{"groups/zero_variance_share": lambda i: 0.95 if i % 3 else 0.1})
    assert _replay(flicker, zero_variance_steps=3) == []
    steady = _with(rows, 10, **{"groups/zero_variance_share": lambda i: 0.95})
    assert [a.step for a in _replay(steady, zero_variance_steps=3)] == [13]


def test_zero_variance_message_says_what_to_try_in_order():
    alerts = _replay(PATHOLOGIES["zero_variance"](_healthy()))
    msg = alerts[0].message
    for hint in ("band", "temperature", "group_size"):
        assert hint in msg
    assert msg.index("per-prompt reward") < msg.index("reward scaling") < msg.index("learning rate")


def test_missing_keys_silence_checks_instead_of_raising():
    monitor = AlertMonitor()
    for step in range(100):
        assert monitor.update({"step": step}) == []
        assert monitor.update({"step": step, "kl": None, "pass_rate": float("nan")}) == []


def test_active_marks_every_step_while_condition_holds():
    monitor = AlertMonitor(cooldown_steps=1000)
    rows = PATHOLOGIES["verifier_errors"](_healthy(steps=50))
    marked = []
    for row in rows:
        monitor.update(row)
        if "verifier_errors" in monitor.active:
            marked.append(row["step"])
    assert marked == list(range(31, 51))


def test_thresholds_validated_with_names():
    with pytest.raises(ValueError, match="zero_variance_share"):
        AlertThresholds(zero_variance_share=1.5)
    with pytest.raises(TypeError, match="unknown alert threshold"):
        AlertMonitor(kl_maximum=1.0)
    assert AlertMonitor(AlertThresholds(kl_max=0.1)).thresholds.kl_max == 0.1
    assert set(ALERT_NAMES) == set(PATHOLOGIES)


def test_a_batch_with_no_scored_answer_is_not_called_a_flat_reward():
    """Every answer timing out gave "every completion ... got the same reward (reward/std 0)"."""
    rows = _with(
        _healthy(steps=40),
        10,
        **{
            "reward/std": lambda i: None,
            "reward/mean": lambda i: None,
            "groups/zero_variance_share": lambda i: 1.0,
        },
    )
    rows = _with(rows, 10, **{"verifier/timeout_rate": lambda i: 1.0})
    alerts = [a for a in _replay(rows) if a.name == "reward_collapse"]
    assert alerts and "no completion in the batch was scored" in alerts[0].message
    assert "timeout_rate 1.0" in alerts[0].message and "same reward" not in alerts[0].message
