"""``FakeRollout``: a ``RolloutBackend`` that answers from a script, for tests (the library's and yours).

It goes through the real interface and the real tokenizer, so a test of a reward, a curriculum or
a whole ``GRPOTrainer`` run exercises everything but the model's sampling, in milliseconds:

    from passband.trainer import FakeRollout, GRPOTrainer
    backend = FakeRollout(tokenizer, answers=["4", "5"])  # each sample picks one, by its seed
    GRPOTrainer(model, tokenizer, rows, "exact", config, rollout_backend=backend).train()
    assert backend.calls == [(8, 8), ...]                  # (prompts, samples) of each rollout

``respond(prompt, sample, seed) -> str`` writes the completions instead, when a test needs to
control them. Completions end with EOS, as a sampled one that stopped would. ``logprob`` set
to a number reports it as the sampler's log-prob of every token (the vLLM path: TIS, mismatch).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from passband.trainer.rollout import (
    Prompt,
    Rollout,
    RolloutBackend,
    encode_prompt,
    group_sizes,
    row_seed,
    seeds_or_random,
)

__all__ = ["FakeRollout"]


class FakeRollout(RolloutBackend):
    """Scripted completions behind the ``RolloutBackend`` interface; records every call."""

    def __init__(
        self,
        tokenizer,
        answers: Sequence[str] = ("yes", "no"),
        *,
        respond: Callable[[Prompt, int, int], str] | None = None,
        logprob: float | None = None,
        max_new_tokens: int = 256,
    ):
        if not answers and respond is None:
            raise ValueError("FakeRollout: give answers (a non-empty list) or respond")
        self.tokenizer, self.answers, self.respond = tokenizer, list(answers), respond
        self.logprob, self.max_new_tokens = logprob, int(max_new_tokens)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.eos_id = tokenizer.eos_token_id
        self.calls: list[tuple[int, int | list[int]]] = []  # (prompts, n) of each rollout
        self.syncs: list[int] = []  # versions passed to sync
        self.sleeps, self.closed = 0, False

    def rollout(
        self, prompts: list[Prompt], n: int | Sequence[int], seeds: Sequence[int] | None = None
    ) -> Rollout:
        sizes = group_sizes(n, len(prompts))
        prompt_seeds = seeds_or_random(seeds, len(prompts))
        self.calls.append((len(prompts), n if isinstance(n, int) else list(sizes)))
        rows, completions, truncated = [], [], []
        for prompt, seed, k in zip(prompts, prompt_seeds, sizes):
            ids = encode_prompt(self.tokenizer, prompt)
            for j in range(k):
                tokens, cut = self._complete(prompt, j, row_seed(seed, j))
                rows.append(ids)
                completions.append(tokens)
                truncated.append(cut)
        texts = self.tokenizer.batch_decode(completions, skip_special_tokens=True) if rows else []
        logprobs = (
            [[float(self.logprob)] * len(c) for c in completions]
            if self.logprob is not None
            else None
        )
        return Rollout(
            rows,
            completions,
            texts,
            truncated,
            self.policy_version,
            n if isinstance(n, int) else sizes,
            logprobs=logprobs,
        )

    def sync(self, model, policy_version: int) -> None:
        self.policy_version = int(policy_version)
        self.syncs.append(self.policy_version)

    def sleep(self) -> None:
        self.sleeps += 1

    def close(self) -> None:
        self.closed = True

    def _complete(self, prompt: Prompt, sample: int, seed: int) -> tuple[list[int], bool]:
        text = (
            self.respond(prompt, sample, seed)
            if self.respond is not None
            else self.answers[seed % len(self.answers)]
        )
        tokens = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        if len(tokens) >= self.max_new_tokens or self.eos_id is None:
            return tokens[: self.max_new_tokens], len(tokens) >= self.max_new_tokens
        return tokens + [self.eos_id], False
