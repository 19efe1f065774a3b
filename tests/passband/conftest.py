"""Shared by the report tests: a synthetic run directory in the trainer's format."""

import json
import random
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def make_run():
    """``make_run(root, steps=40, ...)`` writes a run dir; see ``_make_run``."""
    return _make_run


def _make_run(
    root: Path,
    steps: int = 40,
    *,
    inflate_from: int | None = None,
    prompts: int = 12,
    curriculum: bool = True,
    seed: int = 0,
    max_steps: int | None = None,
) -> Path:
    """A synthetic run dir in the trainer's format; length inflates from ``inflate_from`` on."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(
        json.dumps(
            {
                "trainer": {
                    "max_steps": max_steps or steps,
                    "band": [0.2, 0.8],
                    "group_size": 4,
                    "mu": 2,
                    "beta": 0.01,
                }
            }
        )
    )
    metrics, groups = [], []
    for step in range(1, steps + 1):
        inflating = inflate_from is not None and step >= inflate_from
        acc = 0.3 if inflating else 0.2 + 0.5 * step / steps
        row = {
            "step": step,
            "time_s": step * 2.0,
            "pass_rate": acc + rng.uniform(-0.02, 0.02),
            "reward/mean": acc,
            "reward/std": 0.4,
            "reward/math": acc,
            "reward/length_penalty": -0.05,
            "groups/rolled": 8,
            "groups/zero_variance_share": 0.25,
            "groups/refill_rounds": step % 2,
            "groups/effective": 6,
            "groups/dropped": 2,
            "verifier/error_rate": 0.0,
            "verifier/timeout_rate": 0.0,
            "length/mean": 100 * (1 + (step - inflate_from) / 10)
            if inflating
            else 100 + rng.uniform(-5, 5),
            "length/max": 256,
            "length/truncated_share": 0.05,
            "kl": 0.01 * step**0.5,
            "clip_fraction": 0.1,
            "entropy": 1.2,
            "grad_norm": 0.8,
            "lr": 1e-6 * (1 + step / steps),
            "loss": 0.01,
            "time/step_s": 2.0,
            "time/sample_s": 0.01,
            "time/generate_s": 1.2,
            "time/score_s": 0.3,
            "time/update_s": 0.4,
            "time/sync_s": 0.05,
            "reward_scale/math": 0.45,
            "reward_scale/length_penalty": 0.01,
            "alerts": [],
        }
        if curriculum:
            row.update(
                {
                    "curriculum/in_band_share": 0.6,
                    "curriculum/pool/active": 8,
                    "curriculum/pool/easy": step // 10,
                }
            )
        metrics.append(row)
        for g in range(8):  # 6 effective groups, as the metrics say; p0 carries 7x the others
            rewards = [float(rng.random() < acc) for _ in range(4)]
            rewards = rewards[:3] + [1.0 - rewards[0]] if g < 6 else [rewards[0]] * 4
            groups.append(
                {
                    "step": step,
                    "prompt_id": "p0" if g == 0 else f"p{rng.randrange(1, prompts)}",
                    "rewards": rewards,
                    "passes": int(sum(rewards)),
                    "kept": g < 6,
                    "grad_share": (7 / 12 if g == 0 else 1 / 12) if g < 6 else 0.0,
                }
            )
    _jsonl(root / "metrics.jsonl", metrics)
    _jsonl(root / "groups.jsonl", groups)
    if curriculum:
        estimates = {f"p{i}": rng.random() for i in range(prompts)}
        (root / "curriculum.json").write_text(
            json.dumps({"band": [0.2, 0.8], "estimates": estimates})
        )
    return root


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def arithmetic_rows(tmp_path):
    """Six arithmetic rows with a ``question``, an ``answer`` and a regex ``pattern``."""
    import json

    path = tmp_path / "data.jsonl"
    rows = [
        {"question": f"{a}+{b}=", "answer": str(a + b), "pattern": "\\d"}
        for a, b in [(1, 2), (3, 4), (5, 1), (2, 2), (7, 1), (0, 4)]
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
