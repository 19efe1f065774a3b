"""Rollout backends: turn prompts into sampled completions (texts for scoring, token ids for training).

``RolloutBackend`` is the seam between the loop and an engine. It declares everything the loop
calls, and the loop calls nothing else: ``rollout(prompts, n, seeds)``, ``sync(model, version)``,
``sleep()``, ``close()``, ``pad_id``, ``policy_version`` and ``shares_policy`` (the backend
generates with the policy module itself, so an FSDP policy is unsharded around it).
``HFRollout`` decodes with the policy module itself (batched, left padding, KV cache, temperature /
top-p / top-k, stop at EOS or stop strings), in a loop of its own that gives ``generate``'s tokens
but drops finished rows from the batch (``_decode.py``); ``VLLMRollout`` (``rollout_vllm.py``) a colocated engine;
``FakeRollout`` (``fake_rollout.py``) scripted completions for tests, yours included.

Seeding belongs to the backend: ``rollout`` takes one seed per prompt, and a prompt's samples
depend on its seed only, never on which prompts share the batch, which rank draws it, or the
global RNG. So N ranks reproduce one process's samples bit for bit. ``HFRollout`` draws each
token by inverse-CDF sampling from one counter-based uniform per (row seed, position) instead of
from the global torch RNG (``_SeededSampling``): exactly the distribution of ``do_sample``.

Every ``Rollout`` records the policy version that produced it; the trainer refuses to train on a
rollout from other weights (``StalePolicyError``) instead of silently computing a wrong ratio.
Stop strings are kept at the end of the completion (text and tokens), so the model learns to stop.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from passband.errors import ConfigError
from passband.trainer._data import encode_prompt  # the one encoding the row checks use
from passband.trainer._decode import decode, left_pad
from passband.trainer._kvcache import preallocated_cache
from passband.trainer._seeded import _SeededSampling, row_seed

__all__ = [
    "Rollout",
    "RolloutBackend",
    "HFRollout",
    "StalePolicyError",
    "Prompt",
    "group_sizes",
    "seeds_or_random",
    "encode_prompt",
    "row_seed",
]

# A prompt is plain text or a list of chat messages ({"role", "content"}).
Prompt = str | Sequence[dict]


class StalePolicyError(RuntimeError):
    """Raised when completions produced by one policy version would train another."""


@dataclass
class Rollout:
    """``sum(group sizes)`` sequences; prompt i owns the next ``group_sizes()[i]`` rows in order."""

    prompt_tokens: list[list[int]]  # unpadded prompt tokens, one list per sequence
    completion_ids: list[list[int]]  # sampled tokens up to and including EOS / stop string
    texts: list[str]  # decoded completions (special tokens skipped)
    truncated: list[bool]  # hit max_new_tokens without EOS or a stop string
    policy_version: int  # weights that sampled these tokens
    group_size: int | list[int]  # samples per prompt: one number, or one per prompt
    logprobs: list[list[float]] | None = None  # the sampler's log-prob of each completion token
    # (after temperature); None when it reports none

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def prompt_ids(self) -> list[list[int]]:
        """Deprecated alias of ``prompt_tokens`` (token ids, not dataset ids); removed next release."""
        warnings.warn(
            "Rollout.prompt_ids is renamed prompt_tokens", DeprecationWarning, stacklevel=2
        )
        return self.prompt_tokens

    def check_shape(self, sizes: Sequence[int], backend: str) -> None:
        """Raise ``ValueError`` naming ``backend`` unless this holds ``sum(sizes)`` sequences in
        every field, grouped as asked: a row too few would train a smaller group silently."""
        want = sum(sizes)
        fields = {"texts": self.texts, "completion_ids": self.completion_ids}
        fields.update(prompt_tokens=self.prompt_tokens, truncated=self.truncated)
        if self.logprobs is not None:
            fields["logprobs"] = self.logprobs
        wrong = {k: len(v) for k, v in fields.items() if len(v) != want}
        if wrong or self.group_sizes() != list(sizes):
            raise ValueError(
                f"{backend}.rollout returned a Rollout that does not match the request of "
                f"{len(sizes)} prompts x {list(sizes) if len(set(sizes)) > 1 else sizes[0]} samples "
                f"({want} sequences): lengths {wrong or 'ok'}, group_size={self.group_size!r}"
            )

    def group_sizes(self) -> list[int]:
        """Samples per prompt, one entry per prompt."""
        if isinstance(self.group_size, int):
            return [self.group_size] * (len(self) // max(self.group_size, 1))
        return list(self.group_size)


def group_sizes(n: int | Sequence[int], prompts: int) -> list[int]:
    """``n`` as one sample count per prompt (``n`` is a number for all, or a list with one each)."""
    sizes = [int(n)] * prompts if isinstance(n, int) else [int(k) for k in n]
    if len(sizes) != prompts or any(k < 1 for k in sizes):
        raise ValueError(
            f"rollout: n must be an integer >= 1 or one per prompt ({prompts}); got {n!r}"
        )
    return sizes


def seeds_or_random(seeds: Sequence[int] | None, prompts: int) -> list[int]:
    """The caller's seeds (one per prompt), or fresh ones from the global torch RNG, so a run
    that seeds torch and passes no seeds is still reproducible."""
    if seeds is None:
        return torch.randint(0, 2**62, (prompts,)).tolist()
    if len(seeds) != prompts:
        raise ValueError(f"rollout: {len(seeds)} seeds for {prompts} prompts (one per prompt)")
    return [int(s) for s in seeds]


class RolloutBackend(abc.ABC):
    """What the GRPO loop needs from an engine. Subclass it; the loop calls only these.

    ``policy_version``: the weights later rollouts use (set by ``sync``).
    ``pad_id``: the token id training batches pad with (masked out, so any valid id works).
    ``shares_policy``: True when ``rollout`` runs the trainer's own module (HF ``generate``).
    """

    policy_version: int = 0
    pad_id: int = 0
    shares_policy: bool = False

    @abc.abstractmethod
    def rollout(
        self, prompts: list[Prompt], n: int | Sequence[int], seeds: Sequence[int] | None = None
    ) -> Rollout:
        """``n`` completions per prompt (a number, or one per prompt), prompt by prompt in order.

        ``seeds``: one per prompt; a prompt's samples depend on its seed alone. ``None``: seeds
        drawn from the global torch RNG.
        """

    @abc.abstractmethod
    def sync(self, model: Any, policy_version: int) -> None:
        """Make later rollouts use ``model``'s current weights, tagged ``policy_version``."""

    def sleep(self) -> None:  # noqa: B027 - optional hook: a no-op unless overridden
        """Free accelerator memory during the update (the next ``sync`` wakes it); default: nothing."""

    def close(self) -> None:  # noqa: B027 - optional hook: a no-op unless overridden
        """Release what the backend started (engines, temporary files); safe to call twice."""

    def generate(self, prompts: list[Prompt], n: int = 1) -> list[list[str]]:
        """``n`` completion texts per prompt (what ``passband score`` uses)."""
        out = self.rollout(prompts, n)
        texts, starts = out.texts, [0]
        for k in out.group_sizes():
            starts.append(starts[-1] + k)
        return [texts[a:b] for a, b in zip(starts, starts[1:])]


class HFRollout(RolloutBackend):
    """Hugging Face ``generate`` backend; shares the policy module with the trainer."""

    shares_policy = True

    def __init__(
        self,
        model,
        tokenizer,
        *,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        stop: Sequence[str] = (),
        batch_size: int = 64,
        policy_version: int = 0,
    ):
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

    # -- RolloutBackend -----------------------------------------------------------------------
    def sync(self, model, policy_version: int) -> None:
        # Same module object as the trainer's policy: nothing to copy, only the version moves.
        self.model, self.policy_version = model, int(policy_version)

    def rollout(
        self, prompts: list[Prompt], n: int | Sequence[int], seeds: Sequence[int] | None = None
    ) -> Rollout:
        sizes = group_sizes(n, len(prompts))
        prompt_seeds = seeds_or_random(seeds, len(prompts))
        encoded = [self.encode_prompt(p) for p in prompts]
        rows = [ids for ids, k in zip(encoded, sizes) for _ in range(k)]  # prompt i, k times
        row_seeds = [row_seed(s, j) for s, k in zip(prompt_seeds, sizes) for j in range(k)]
        completions: list[list[int]] = []
        truncated: list[bool] = []
        was_training = self.model.training
        self.model.eval()  # generation uses the KV cache; gradient checkpointing needs .train()
        try:
            start = 0
            while start < len(rows):
                end = start + self.batch_size
                try:
                    c, t = self._generate_batch(rows[start:end], row_seeds[start:end])
                except torch.cuda.OutOfMemoryError:
                    self._halve_batch()  # the same rows again, in smaller calls
                    continue
                completions += c
                truncated += t
                start = end
        finally:
            self.model.train(was_training)
        texts = (
            self.tokenizer.batch_decode(completions, skip_special_tokens=True)
            if completions
            else []
        )
        return Rollout(
            rows,
            completions,
            texts,
            truncated,
            self.policy_version,
            n if isinstance(n, int) else sizes,
        )

    def encode_prompt(self, prompt: Prompt) -> list[int]:
        """Token ids of one prompt; chat messages go through the tokenizer's chat template."""
        return encode_prompt(self.tokenizer, prompt)

    # -- internals ----------------------------------------------------------------------------
    def _halve_batch(self) -> None:
        """After a CUDA out-of-memory error: half the rows per ``generate`` call from now on.
        Samples do not change (each row has its own seed); only the calls get smaller."""
        if self.batch_size == 1:
            raise torch.cuda.OutOfMemoryError(
                "HFRollout ran out of GPU memory at one sequence per call: shorten "
                "max_new_tokens, or use a smaller model or more GPUs (FSDP)"
            )
        torch.cuda.empty_cache()
        self.batch_size = max(1, self.batch_size // 2)
        warnings.warn(
            f"HFRollout ran out of GPU memory; rolling out {self.batch_size} sequences per "
            "call from now on (set rollout_batch_size to choose)",
            stacklevel=3,
        )

    @torch.inference_mode()  # no autograd bookkeeping at all: only token lists leave it
    def _generate_batch(
        self, rows: list[list[int]], seeds: list[int]
    ) -> tuple[list[list[int]], list[bool]]:
        device = next(self.model.parameters()).device
        input_ids, attention = left_pad(rows, self.pad_id)  # [b, P] each
        width = input_ids.shape[1]
        cache = preallocated_cache(self.model, width + self.max_new_tokens)  # no O(T^2) copying
        generated = decode(
            self.model,
            input_ids.to(device),
            attention.to(device),
            max_new_tokens=self.max_new_tokens,
            eos_ids=sorted(self.eos_ids),
            pick=self._picker(seeds, width),
            pad_id=self.pad_id,
            stops=self._stop_check() if self.stop else None,
            cache=cache,
        )  # finished rows leave the batch (trainer/_decode.py)
        cut = [self._cut(ids) for ids in generated]
        return [c for c, _ in cut], [t for _, t in cut]

    def _picker(self, seeds: list[int], width: int):
        """Next tokens: greedy at temperature 0, else each row from its own seed."""
        if self.temperature <= 0:
            return lambda logits, rows, t: logits.argmax(dim=-1)
        sampler = _SeededSampling(seeds, width, self.temperature, self.top_k, self.top_p)
        return sampler.draw

    def _stop_check(self):
        """Whether each row's tail now holds a stop string (decodes only the last few tokens)."""
        window = max(len(s) for s in self.stop) + 4  # tokens are >= 1 character, + slack

        def stops(rows: list[int], tokens: list[list[int]]) -> list[bool]:
            texts = self.tokenizer.batch_decode(
                [t[-window:] for t in tokens], skip_special_tokens=True
            )
            return [any(s in text for s in self.stop) for text in texts]

        return stops

    def _cut(self, ids: list[int]) -> tuple[list[int], bool]:
        """Keep tokens up to the first EOS or stop string; report truncation."""
        for k, tok in enumerate(ids):
            if tok in self.eos_ids:
                return ids[: k + 1], False
        if self.stop:
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            if any(s in text for s in self.stop):
                return ids[: self._first_stop_len(ids)], False
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
    for source in (
        tokenizer.eos_token_id,
        getattr(getattr(model, "generation_config", None), "eos_token_id", None),
    ):
        if isinstance(source, int):
            ids.add(source)
        elif isinstance(source, (list, tuple)):
            ids.update(int(i) for i in source)
    return ids


def check_backend(rollout_backend, config) -> None:
    """A backend handed to ``GRPOTrainer``: a ``RolloutBackend`` that samples with the config's
    temperature, ``top_p`` and ``top_k`` (where it says which it uses)."""
    if rollout_backend is not None and not isinstance(rollout_backend, RolloutBackend):
        raise TypeError(
            "rollout_backend must subclass passband.trainer.RolloutBackend (what "
            f"the loop calls); got {type(rollout_backend).__name__}"
        )
    # the loss reads the config's sampling settings: a backend sampling at others would train
    # on completions the log-probs do not describe (a biased gradient)
    differ = [
        f"{k} {getattr(rollout_backend, k)!r} (config {getattr(config, k)!r})"
        for k in ("temperature", "top_p", "top_k")
        if getattr(rollout_backend, k, None) is not None
        and getattr(rollout_backend, k) != getattr(config, k)
    ]
    if differ:
        raise ConfigError(
            f"rollout_backend samples with other settings than the config: {', '.join(differ)}; "
            "build it with the config's (or set the config to match)"
        )
