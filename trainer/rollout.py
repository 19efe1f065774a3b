"""Rollout backends: turn prompts into sampled completions (texts for scoring, token ids for training).

``RolloutBackend`` is the seam where a vLLM backend plugs in: the trainer only calls ``rollout``,
``sync`` and reads ``policy_version``. ``HFRollout`` uses Hugging Face ``generate`` (batched, left
padding, KV cache, temperature / top-p / top-k, stop at EOS or stop strings).

Every ``Rollout`` records the policy version that produced it; the trainer refuses to train on a
rollout from other weights (``StalePolicyError``) instead of silently computing a wrong ratio.
Stop strings are kept at the end of the completion (text and tokens), so the model learns to stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

import torch

__all__ = ["Rollout", "RolloutBackend", "HFRollout", "StalePolicyError", "Prompt"]

# A prompt is plain text or a list of chat messages ({"role", "content"}).
Prompt = str | Sequence[dict]


class StalePolicyError(RuntimeError):
    """Raised when completions produced by one policy version would train another."""


@dataclass
class Rollout:
    """``len(prompts) * group_size`` sequences; prompt i owns rows ``i*G .. i*G+G-1``."""

    prompt_ids: list[list[int]]      # unpadded prompt tokens, one list per sequence
    completion_ids: list[list[int]]  # sampled tokens up to and including EOS / stop string
    texts: list[str]                 # decoded completions (special tokens skipped)
    truncated: list[bool]            # hit max_new_tokens without EOS or a stop string
    policy_version: int              # weights that sampled these tokens
    group_size: int

    def __len__(self) -> int:
        return len(self.texts)


@runtime_checkable
class RolloutBackend(Protocol):
    policy_version: int

    def generate(self, prompts: list[Prompt], n: int) -> list[list[str]]:
        """``n`` completion texts per prompt (what ``passband score`` uses)."""

    def rollout(self, prompts: list[Prompt], n: int) -> Rollout:
        """``n`` completions per prompt with token ids, truncation flags and the policy version."""

    def sync(self, model: Any, policy_version: int) -> None:
        """Make later rollouts use ``model``'s current weights, tagged ``policy_version``."""


class _StopOnStrings:
    """Per-row stopping criterion: the tail of the completion contains a stop string.

    Decodes only the last few tokens of each row, so the cost per generated token is small.
    """

    def __init__(self, tokenizer, stop: Sequence[str], prompt_len: int):
        self.tokenizer, self.stop, self.prompt_len = tokenizer, tuple(stop), prompt_len
        self.window = max(len(s) for s in self.stop) + 4  # tokens are >= 1 char, +slack

    def __call__(self, input_ids: torch.Tensor, scores=None, **kwargs) -> torch.Tensor:
        tails = input_ids[:, self.prompt_len:][:, -self.window:]  # [B, <=window]
        texts = self.tokenizer.batch_decode(tails, skip_special_tokens=True)
        done = [any(s in t for s in self.stop) for t in texts]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)  # [B]


class HFRollout:
    """Hugging Face ``generate`` backend; shares the policy module with the trainer."""

    def __init__(self, model, tokenizer, *, max_new_tokens: int, temperature: float = 1.0,
                 top_p: float = 1.0, top_k: int = 0, stop: Sequence[str] = (),
                 batch_size: int = 64, policy_version: int = 0):
        if max_new_tokens < 1 or batch_size < 1:
            raise ValueError("HFRollout: max_new_tokens and batch_size must be >= 1")
        self.model, self.tokenizer = model, tokenizer
        self.max_new_tokens, self.batch_size = int(max_new_tokens), int(batch_size)
        self.temperature, self.top_p, self.top_k = float(temperature), float(top_p), int(top_k)
        self.stop = tuple(stop)
        self.policy_version = int(policy_version)
        self.eos_ids = _eos_ids(model, tokenizer)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (sorted(self.eos_ids) or [0])[0])

    # -- public -------------------------------------------------------------------------------
    def sync(self, model, policy_version: int) -> None:
        # Same module object as the trainer's policy: nothing to copy, only the version moves.
        self.model, self.policy_version = model, int(policy_version)

    def generate(self, prompts: list[Prompt], n: int = 1) -> list[list[str]]:
        texts = self.rollout(prompts, n).texts
        return [texts[i * n:(i + 1) * n] for i in range(len(prompts))]

    def rollout(self, prompts: list[Prompt], n: int) -> Rollout:
        encoded = [self.encode_prompt(p) for p in prompts]
        rows = [ids for ids in encoded for _ in range(n)]  # each prompt repeated n times
        completions: list[list[int]] = []
        truncated: list[bool] = []
        was_training = self.model.training
        self.model.eval()  # generation uses the KV cache; gradient checkpointing needs .train()
        try:
            for start in range(0, len(rows), self.batch_size):
                c, t = self._generate_batch(rows[start:start + self.batch_size])
                completions += c
                truncated += t
        finally:
            self.model.train(was_training)
        texts = self.tokenizer.batch_decode(completions, skip_special_tokens=True) if completions else []
        return Rollout(rows, completions, texts, truncated, self.policy_version, n)

    def encode_prompt(self, prompt: Prompt) -> list[int]:
        """Token ids of one prompt; chat messages go through the tokenizer's chat template."""
        from passband.trainer.data import encode_prompt  # the one encoding the row checks use

        return encode_prompt(self.tokenizer, prompt)

    # -- internals ----------------------------------------------------------------------------
    @torch.no_grad()
    def _generate_batch(self, rows: list[list[int]]) -> tuple[list[list[int]], list[bool]]:
        device = next(self.model.parameters()).device
        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)  # [b, P]
        attention = torch.zeros((len(rows), width), dtype=torch.long)             # [b, P]
        for i, r in enumerate(rows):  # left padding: every prompt ends at column P
            input_ids[i, width - len(r):] = torch.tensor(r)
            attention[i, width - len(r):] = 1
        kwargs: dict[str, Any] = dict(max_new_tokens=self.max_new_tokens, use_cache=True,
                                      pad_token_id=self.pad_id, eos_token_id=sorted(self.eos_ids),
                                      repetition_penalty=1.0,
                                      # an FSDP policy is unsharded around the rollout: no rank
                                      # waits for the others token by token
                                      synced_gpus=False)
        if self.temperature > 0:
            kwargs.update(do_sample=True, temperature=self.temperature, top_p=self.top_p,
                          top_k=self.top_k)
        else:
            kwargs.update(do_sample=False)
        if self.stop:
            kwargs["stopping_criteria"] = [_StopOnStrings(self.tokenizer, self.stop, width)]
        out = self.model.generate(input_ids=input_ids.to(device),
                                  attention_mask=attention.to(device), **kwargs)  # [b, P+C]
        generated = out[:, width:].tolist()
        cut = [self._cut(ids) for ids in generated]
        return [c for c, _ in cut], [t for _, t in cut]

    def _cut(self, ids: list[int]) -> tuple[list[int], bool]:
        """Keep tokens up to the first EOS or stop string; report truncation."""
        for k, tok in enumerate(ids):
            if tok in self.eos_ids:
                return ids[:k + 1], False
        if self.stop:
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            if any(s in text for s in self.stop):
                return ids[:self._first_stop_len(ids)], False
        return ids, len(ids) >= self.max_new_tokens

    def _first_stop_len(self, ids: list[int]) -> int:
        # "decoded prefix contains a stop string" is monotone in the prefix length: bisect it.
        lo, hi = 1, len(ids)
        while lo < hi:
            mid = (lo + hi) // 2
            text = self.tokenizer.decode(ids[:mid], skip_special_tokens=True)
            if any(s in text for s in self.stop):
                hi = mid
            else:
                lo = mid + 1
        return lo


def _eos_ids(model, tokenizer) -> set[int]:
    """EOS ids from the tokenizer and the model's generation config (chat models often have two)."""
    ids: set[int] = set()
    for source in (tokenizer.eos_token_id,
                   getattr(getattr(model, "generation_config", None), "eos_token_id", None)):
        if isinstance(source, int):
            ids.add(source)
        elif isinstance(source, (list, tuple)):
            ids.update(int(i) for i in source)
    return ids
