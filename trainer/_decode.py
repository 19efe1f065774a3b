"""The decode loop ``HFRollout`` runs: HF's sampling loop without its waste.

``generate`` keeps every row of a batch in every forward until the longest one ends, so a batch
costs as much as its longest completion times its width. Completions of a real model differ in
length (a short answer, a long one that runs into ``max_new_tokens``), so most of that work is
spent on rows that are already done. ``decode`` drops finished rows from the batch, their KV
cache rows included (``Cache.batch_select_indices``), once a quarter of the batch is done.
It also runs each distinct prompt once in the prefill and copies its cache rows to the G rows of
its group (``generate``, called as TRL calls it, runs every copy), and its one-query steps on a
CPU use ``_attention.py``'s attention, with a padding mask made once per step and only as long as
the positions filled so far (``_takes_ready_mask``).

Each row's tokens are those ``generate`` gives with the same attention, cache and sampler
(tests/trainer/test_decode.py). The forward is the model's own, with the same left-padded
attention mask, position ids and cache. Logits are cast to float32 as ``generate`` casts them. A
row samples from its own seed, by position, so which rows share its batch does not matter
(``rollout.py``). Not applied, unlike ``generate``: the processors that a model's
``generation_config`` may add beyond the sampling ones (``min_new_tokens``, suppressed or forced
tokens); ``HFRollout`` switches the others off there too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import torch

from passband.trainer._attention import NAME as ATTENTION
from passband.trainer._attention import decode_attention
from passband.trainer._kvcache import in_place

__all__ = ["decode", "left_pad", "generate_reference", "COMPACT_SHARE"]

COMPACT_SHARE = 0.25  # drop finished rows once they are this share of the batch
_WINDOWS = ("sliding_window", "attention_chunk_size")  # config fields of windowed attention

# (logits [a, V] float32, original row of each, position) -> next token of each row [a]
Pick = Callable[[torch.Tensor, list[int], int], torch.Tensor]
# (original rows, their tokens so far) -> which of them end here (a stop string)
Stops = Callable[[list[int], list[list[int]]], list[bool]]


def left_pad(rows: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and attention mask [b, P] of ``rows``, left padded: every prompt ends at column P."""
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)  # [b]
    width = int(lengths.max())
    attention = torch.arange(width) >= (width - lengths).unsqueeze(1)  # [b, P]: row-major order
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)  # [b, P]
    input_ids[attention] = torch.tensor([t for r in rows for t in r], dtype=torch.long)
    return input_ids, attention.long()


@torch.inference_mode()
def decode(model, input_ids: torch.Tensor, attention: torch.Tensor, **kwargs) -> list[list[int]]:
    """New tokens of every row of the left-padded ``input_ids`` / ``attention`` ([b, P]), each up
    to and including its EOS (or the token that completes a stop string), at most
    ``max_new_tokens``; see ``_decode`` for the keywords. One-query steps on a CPU use
    ``_attention.py``'s attention."""
    with decode_attention(model):
        return _decode(model, input_ids, attention, **kwargs)


def _decode(
    model,
    input_ids: torch.Tensor,
    attention: torch.Tensor,
    *,
    max_new_tokens: int,
    eos_ids: Sequence[int],
    pick: Pick,
    pad_id: int,
    stops: Stops | None = None,
    cache=None,
) -> list[list[int]]:
    """``decode``'s loop. ``pick`` chooses each row's next token from its logits, ``stops`` says
    which rows end at a stop string, ``cache``: a cache object for the forward (None: the model's
    default)."""
    positions = (attention.cumsum(-1) - 1).clamp(min=0)  # [b, P]
    cache, logits = _prefill(model, input_ids, attention, positions, cache)  # logits [b, V]
    batch = _Batch(cache, attention, positions[:, -1] + 1, input_ids.shape[0])
    ready_mask = _takes_ready_mask(model, cache, input_ids.device)
    eos = {int(e) for e in eos_ids}
    for t in range(max_new_tokens):
        chosen = pick(logits, batch.rows, t).tolist()
        batch.append(chosen, eos, stops)
        if all(batch.done) or t == max_new_tokens - 1:
            break
        feed = torch.tensor(
            [pad_id if d else x for d, x in zip(batch.done, chosen)], dtype=torch.long
        ).to(input_ids.device)  # [a]: a finished row is fed padding until it is dropped
        feed = batch.compact(feed)
        out = model(
            input_ids=feed.unsqueeze(1),
            attention_mask=batch.attention[:, None, None, :].bool()
            if ready_mask
            else batch.attention,
            position_ids=batch.next_pos.unsqueeze(1),
            past_key_values=batch.cache,
            use_cache=True,
        )
        batch.cache, logits = out.past_key_values, out.logits[:, -1, :].float()  # [a, V]
        batch.next_pos = batch.next_pos + 1
    return batch.tokens


def _prefill(model, input_ids, attention, positions, cache):
    """The prompts' forward: the cache after it and the last position's logits, float32 [b, V].

    A group's G rows share one prompt, so each distinct row is run once and its cache rows and
    logits are copied to its repeats (``batch_select_indices`` with repeated indices): G times
    less prompt compute, where ``generate`` (and TRL) runs every copy. Needs a cache that can
    select rows; otherwise, or when no row repeats, every row is run."""
    rows = torch.cat([input_ids, attention], dim=1)  # [b, 2P]: a row's tokens and its padding
    unique, inverse = torch.unique(rows, dim=0, return_inverse=True)  # [u, 2P], [b]
    share = unique.shape[0] < rows.shape[0] and _selects_rows(cache)
    first = _first_of(inverse, unique.shape[0]) if share else None  # [u]: a row of each
    pick = (lambda x: x[first]) if share else (lambda x: x)
    out = model(
        input_ids=pick(input_ids),
        attention_mask=pick(attention),
        position_ids=pick(positions),
        past_key_values=cache,
        use_cache=True,
        **_last_logits_only(model),
    )
    cache, logits = out.past_key_values, out.logits[:, -1, :].float()  # [u or b, V]
    if share:  # distinct row j ran at position j; original row i is distinct row inverse[i]
        cache.batch_select_indices(inverse)
        logits = logits[inverse]
    return cache, logits


def _takes_ready_mask(model, cache, device) -> bool:
    """Whether a decode step may pass the model its padding mask ready-made, [a, 1, 1, filled]:
    on a CPU, with ``_attention.py``'s attention and an in-place cache whose every layer is full
    attention. One query at the newest position attends to every filled, unpadded position, so
    that mask is the one HF would build, without building it at every step; it is as long as the
    positions filled, so attention reads no unfilled tail of the cache's buffers."""
    config = getattr(model, "config", None)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    windowed = any(getattr(text, k, None) is not None for k in _WINDOWS)
    return (
        device.type == "cpu"
        and getattr(config, "_attn_implementation", None) == ATTENTION
        and in_place(cache)
        and not windowed  # a model that windows its attention builds that mask itself
    )


def _selects_rows(cache) -> bool:
    """Whether ``cache`` can keep (or repeat) chosen batch rows: ``batch_select_indices``."""
    return callable(getattr(cache, "batch_select_indices", None))


def _first_of(inverse: torch.Tensor, count: int) -> torch.Tensor:
    """[count]: the first original row of each distinct row, given each row's distinct index."""
    rows = torch.arange(inverse.numel(), device=inverse.device)
    first = torch.full((count,), inverse.numel(), dtype=torch.long, device=inverse.device)
    return first.scatter_reduce(0, inverse, rows, reduce="amin")


class _Batch:
    """The rows still decoding: their original indices, tokens so far, mask, positions, cache."""

    def __init__(self, cache, attention: torch.Tensor, next_pos: torch.Tensor, size: int):
        self.cache, self.attention, self.next_pos = cache, attention, next_pos  # [b, P], [b]
        self.can_compact = _selects_rows(cache)  # a model's own cache may not
        self.rows = list(range(size))  # the original row at each batch position
        self.done = [False] * size  # by batch position
        self.tokens: list[list[int]] = [[] for _ in range(size)]  # by original row

    def append(self, chosen: list[int], eos: set[int], stops: Stops | None) -> None:
        """Record each unfinished row's token; mark rows that ended (EOS, or a stop string)."""
        open_rows = []
        for i, (r, x) in enumerate(zip(self.rows, chosen)):
            if not self.done[i]:
                self.tokens[r].append(int(x))
                self.done[i] = x in eos
                open_rows += [] if self.done[i] else [i]
        if stops is not None and open_rows:
            rows = [self.rows[i] for i in open_rows]
            for i, hit in zip(open_rows, stops(rows, [self.tokens[r] for r in rows])):
                self.done[i] = hit

    def compact(self, feed: torch.Tensor) -> torch.Tensor:
        """Drop the finished rows once they are ``COMPACT_SHARE`` of the batch; extend the mask
        by the position about to be fed. Returns ``feed`` for the rows kept."""
        if self.can_compact and sum(self.done) >= max(1, COMPACT_SHARE * len(self.rows)):
            keep = [i for i, d in enumerate(self.done) if not d]
            idx = torch.tensor(keep, dtype=torch.long, device=feed.device)  # [a']
            self.cache.batch_select_indices(idx)
            self.attention, self.next_pos, feed = self.attention[idx], self.next_pos[idx], feed[idx]
            self.rows, self.done = [self.rows[i] for i in keep], [False] * len(keep)
        ones = self.attention.new_ones((self.attention.shape[0], 1))
        self.attention = torch.cat([self.attention, ones], dim=1)  # [a, P + t + 1]
        return feed


def _last_logits_only(model) -> dict:
    """``logits_to_keep=1`` where the model's forward takes it: the prefill then projects only the
    last position onto the vocabulary (``generate`` does the same)."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return {}
    return {"logits_to_keep": 1} if "logits_to_keep" in params else {}


@torch.no_grad()
def generate_reference(backend, prompts: list, n: int, seeds: list[int]) -> list[list[int]]:
    """What ``decode`` is checked against (tests/trainer/test_decode.py, benchmarks/bench_decode.py):
    ``backend``'s (an ``HFRollout``) rows through HF ``generate`` itself, greedy over the seeded
    sampler's scores, the same cache, cut at EOS as ``HFRollout`` cuts. One call, all rows."""
    from passband.trainer._kvcache import preallocated_cache
    from passband.trainer._seeded import _SeededSampling, row_seed

    rows = [backend.encode_prompt(p) for p in prompts for _ in range(n)]
    row_seeds = [row_seed(s, j) for s in seeds for j in range(n)]
    ids, attn = left_pad(rows, backend.pad_id)
    width, new = ids.shape[1], backend.max_new_tokens
    kwargs = dict(
        max_new_tokens=new,
        do_sample=False,
        temperature=None,
        top_p=None,
        top_k=None,
        pad_token_id=backend.pad_id,
        eos_token_id=sorted(backend.eos_ids),
        past_key_values=preallocated_cache(backend.model, width + new),
    )
    if backend.temperature > 0:
        kwargs["logits_processor"] = [
            _SeededSampling(row_seeds, width, backend.temperature, backend.top_k, backend.top_p)
        ]
    with decode_attention(backend.model):  # the attention decode uses, so tokens can match
        out = backend.model.generate(input_ids=ids, attention_mask=attn, **kwargs)[:, width:]
    return [backend._cut(x)[0] for x in out.tolist()]
