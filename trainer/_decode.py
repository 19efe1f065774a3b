"""The decode loop ``HFRollout`` runs: HF's sampling loop without waiting for finished rows.

``generate`` keeps every row of a batch in every forward until the longest one ends, so a batch
costs as much as its longest completion times its width. Completions of a real model differ in
length (a short answer, a long one that runs into ``max_new_tokens``), so most of that work is
spent on rows that are already done. ``decode`` drops finished rows from the batch, their KV
cache rows included (``Cache.batch_select_indices``), once a quarter of the batch is done.

Each row's tokens are those ``generate`` gives (tests/trainer/test_decode.py). The forward is the
model's own, with the same left-padded attention mask, position ids and cache. Logits are cast to
float32 as ``generate`` casts them. A row samples from its own seed, by position, so which rows
share its batch does not matter (``rollout.py``). Not applied, unlike ``generate``: the processors
that a model's ``generation_config`` may add beyond the sampling ones (``min_new_tokens``,
suppressed or forced tokens); ``HFRollout`` switches the others off there too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import torch

__all__ = ["decode", "COMPACT_SHARE"]

COMPACT_SHARE = 0.25  # drop finished rows once they are this share of the batch

# (logits [a, V] float32, original row of each, position) -> next token of each row [a]
Pick = Callable[[torch.Tensor, list[int], int], torch.Tensor]
# (original rows, their tokens so far) -> which of them end here (a stop string)
Stops = Callable[[list[int], list[list[int]]], list[bool]]


@torch.no_grad()
def decode(
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
    """New tokens of every row of the left-padded ``input_ids`` / ``attention`` ([b, P]), each up
    to and including its EOS (or the token that completes a stop string), at most
    ``max_new_tokens``. ``cache``: a cache object for the forward (None: the model's default)."""
    b = input_ids.shape[0]
    eos = set(int(e) for e in eos_ids)
    positions = (attention.cumsum(-1) - 1).clamp(min=0)  # [b, P]
    out = model(
        input_ids=input_ids,
        attention_mask=attention,
        position_ids=positions,
        past_key_values=cache,
        use_cache=True,
        **_last_logits_only(model),
    )
    cache, logits = out.past_key_values, out.logits[:, -1, :].float()  # [b, V]
    can_compact = callable(
        getattr(cache, "batch_select_indices", None)
    )  # a model's own cache may not
    rows = list(range(b))  # the original row at each batch position
    done = [False] * b  # by batch position
    tokens: list[list[int]] = [[] for _ in range(b)]
    next_pos = positions[:, -1] + 1  # [b]
    for t in range(max_new_tokens):
        chosen = pick(logits, rows, t).tolist()
        ended = []
        for i, (r, x) in enumerate(zip(rows, chosen)):
            if not done[i]:
                tokens[r].append(int(x))
                if x in eos:
                    done[i] = True
                else:
                    ended.append(i)
        if stops is not None and ended:
            hits = stops([rows[i] for i in ended], [tokens[rows[i]] for i in ended])
            for i, hit in zip(ended, hits):
                done[i] = done[i] or hit
        if all(done) or t == max_new_tokens - 1:
            break
        feed = torch.tensor(
            [pad_id if d else x for d, x in zip(done, chosen)], dtype=torch.long
        ).to(input_ids.device)  # [a]: a finished row is fed padding until it is dropped
        if can_compact and sum(done) >= max(1, COMPACT_SHARE * len(rows)):
            keep = [i for i, d in enumerate(done) if not d]
            idx = torch.tensor(keep, dtype=torch.long, device=input_ids.device)  # [a']
            cache.batch_select_indices(idx)
            attention, next_pos, feed = attention[idx], next_pos[idx], feed[idx]
            rows, done = [rows[i] for i in keep], [False] * len(keep)
        attention = torch.cat([attention, attention.new_ones((attention.shape[0], 1))], dim=1)
        out = model(
            input_ids=feed.unsqueeze(1),
            attention_mask=attention,
            position_ids=next_pos.unsqueeze(1),
            past_key_values=cache,
            use_cache=True,
        )
        cache, logits = out.past_key_values, out.logits[:, -1, :].float()  # [a, V]
        next_pos = next_pos + 1
    return tokens


def _last_logits_only(model) -> dict:
    """``logits_to_keep=1`` where the model's forward takes it: the prefill then projects only the
    last position onto the vocabulary (``generate`` does the same)."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return {}
    return {"logits_to_keep": 1} if "logits_to_keep" in params else {}
