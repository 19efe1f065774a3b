"""Held-out greedy accuracy: the number the demo reports before and after GRPO.

Greedy (argmax) decoding, so the figure measures what the policy now prefers, not what it can hit
by luck when sampling. Checked with the same verifier the trainer rewards with.
"""

from __future__ import annotations

from collections import defaultdict

from passband.demo.task import LEVELS, arith_verifier

__all__ = ["greedy_accuracy", "greedy_answers"]


def greedy_answers(
    model, tokenizer, prompts: list[str], *, max_new_tokens: int = 8, batch_size: int = 256
) -> list[str]:
    """Greedy completions for ``prompts`` (left-padded batches, stop at eos)."""
    import torch

    was_training = model.training
    model.eval()
    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    out: list[str] = []
    try:
        for start in range(0, len(prompts), batch_size):
            enc = tokenizer(
                prompts[start : start + batch_size],
                return_tensors="pt",
                padding=True,
                add_special_tokens=False,
            )
            with torch.no_grad():
                gen = model.generate(
                    **enc,
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                    eos_token_id=tokenizer.eos_token_id,
                )  # [B, P + new]
            out.extend(
                tokenizer.batch_decode(
                    gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
                )
            )
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return out


def greedy_accuracy(
    model, tokenizer, problems: list[dict], *, max_new_tokens: int = 8
) -> dict[str, float]:
    """``{"accuracy": overall, "level/<name>": per level}`` over ``problems``."""
    if not problems:
        raise ValueError("greedy_accuracy needs at least one problem")
    answers = greedy_answers(
        model, tokenizer, [p["prompt"] for p in problems], max_new_tokens=max_new_tokens
    )
    verify = arith_verifier()
    hits: dict[str, list[bool]] = defaultdict(list)
    for problem, answer in zip(problems, answers):
        passed = verify(answer, answer=problem["answer"]).passed
        hits["accuracy"].append(passed)
        hits[f"level/{LEVELS[problem['level']].name}"].append(passed)
    return {key: sum(v) / len(v) for key, v in hits.items()}
