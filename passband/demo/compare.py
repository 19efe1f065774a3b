"""What the curriculum saved: a uniform + refill twin trained at the same generation budget.

After the curriculum run, the demo reloads the same warm start and trains it again with uniform
sampling and DAPO-style refill (``use_curriculum = false``, zero-variance groups dropped and
replaced, the same ``max_refill_rounds``) until it has generated as many answers as the
curriculum run did. Both are then measured on the same held-out problems. The saving is printed as
groups generated per group trained (every unanimous group is generation thrown away) and as
held-out accuracy at equal generation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunCost", "read_cost", "run_cost", "train_to_budget"]


@dataclass
class RunCost:
    steps: int
    generated: int  # answers generated (groups rolled x G)
    groups_rolled: int
    groups_trained: int

    @property
    def per_trained(self) -> float:
        """Groups generated per group trained: 1.0 means no generation was wasted."""
        return self.groups_rolled / max(1, self.groups_trained)

    def as_dict(self) -> dict:
        return {
            "steps": self.steps,
            "generated": self.generated,
            "groups_rolled": self.groups_rolled,
            "groups_trained": self.groups_trained,
            "per_trained": self.per_trained,
        }


def run_cost(lines: list[dict], group_size: int) -> RunCost:
    rolled = sum(m["groups/rolled"] for m in lines)
    return RunCost(
        len(lines), rolled * group_size, rolled, sum(m["groups/effective"] for m in lines)
    )


def read_cost(run_dir: Path, group_size: int) -> RunCost:
    lines = [json.loads(x) for x in (Path(run_dir) / "metrics.jsonl").read_text().splitlines()]
    return run_cost(lines, group_size)


def train_to_budget(trainer, answers: int) -> RunCost:
    """Step ``trainer`` until it has generated at least ``answers`` completions (one step may
    overshoot by its refills); the metrics go to its run directory as usual."""
    G = trainer.config.group_size
    lines: list[dict] = []
    trainer._begin()  # the same fresh, seeded start as ``train()``
    try:
        while sum(m["groups/rolled"] for m in lines) * G < answers:
            lines.append(trainer.train_step())
    finally:
        trainer.writer.close()
    return run_cost(lines, G)
