"""The supervised warm start: a deliberately short run of teacher forcing on worked answers.

Why short: RL only learns from groups whose answers disagree. A model that has never seen the
format gets every answer wrong (no signal); a fully trained one gets them all right (nothing left
to learn). A few hundred small steps leave the model knowing the format and the easy levels, and
unsure on the hard ones: the regime where GRPO with a pass-rate curriculum pays off.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["SFTConfig", "warm_start"]


@dataclass(frozen=True)
class SFTConfig:
    """Warm-start settings; the defaults are the demo's."""

    steps: int = 400
    """Optimizer steps; the demo keeps this short on purpose (see module docstring)."""
    batch_size: int = 64
    """Problems per step."""
    learning_rate: float = 1e-3
    """AdamW learning rate; 3e-3 stalls this model on a loss plateau."""
    warmup_steps: int = 20
    """Linear warm-up steps, then constant."""
    seed: int = 0
    """Seeds the order of the training problems."""

    def __post_init__(self) -> None:
        if self.steps < 0:
            raise ValueError(f"SFTConfig.steps must be >= 0, got {self.steps}")
        if self.batch_size < 1:
            raise ValueError(f"SFTConfig.batch_size must be >= 1, got {self.batch_size}")
        if not 0 < self.learning_rate <= 1:
            raise ValueError(f"SFTConfig.learning_rate must be in (0, 1], got {self.learning_rate}")
        if self.warmup_steps < 0:
            raise ValueError(f"SFTConfig.warmup_steps must be >= 0, got {self.warmup_steps}")


def _batch(tokenizer, problems: list[dict]):
    """Right-padded ``prompt+answer+eos`` ids with labels only on the answer and eos."""
    import torch

    rows, labels = [], []
    for p in problems:
        prompt = tokenizer(p["prompt"], add_special_tokens=False)["input_ids"]
        answer = tokenizer(p["answer"], add_special_tokens=False)["input_ids"] + [
            tokenizer.eos_token_id
        ]
        rows.append(prompt + answer)
        labels.append([-100] * len(prompt) + answer)
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id
    ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows])  # [B, T]
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])  # [B, T]
    lab = torch.tensor([lb + [-100] * (width - len(lb)) for lb in labels])  # [B, T]
    return ids, mask, lab


def warm_start(
    model, tokenizer, problems: list[dict], config: SFTConfig = SFTConfig(), *, progress=True
) -> list[float]:
    """Train ``model`` in place on ``problems``; returns the loss of every step."""
    import torch
    from tqdm.auto import tqdm

    if not problems:
        raise ValueError("warm_start needs at least one problem")
    rng = random.Random(config.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.0)
    warmup = max(1, config.warmup_steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
    model.train()
    losses: list[float] = []
    bar = tqdm(range(config.steps), desc="warm start (SFT)", disable=not progress, leave=False)
    for _ in bar:
        ids, mask, labels = _batch(
            tokenizer, rng.sample(problems, min(config.batch_size, len(problems)))
        )
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        bar.set_postfix(loss=f"{losses[-1]:.3f}")
    model.eval()
    return losses
