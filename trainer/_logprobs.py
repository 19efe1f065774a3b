"""Log-probs of completion tokens for the update: packed rows, and the vocabulary in chunks.

A micro-batch arrives packed (``batch.pack``): no padding is computed. The model runs to its final
hidden states only; the output head is applied to the completion positions alone, a chunk of
tokens at a time, so the full-vocabulary fp32 logits of the micro-batch never exist at once. When
they would be large (``_CHECKPOINT_ELEMENTS``) each chunk is recomputed in the backward pass
instead of kept: memory of one chunk, for one extra head matmul. The results are the padded
layout's (``batch.collate``) within float tolerance (tests/trainer/test_packing.py).

Kept for what packing cannot serve: a model whose attention ignores restarting position ids
(``_prefix_pack.layouts_that_work`` checks the model once), and FSDP, whose sharded head is only
whole inside the forward; both use the padded layout with the logits of the completion columns.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn.functional as F

from passband.trainer.losses import token_entropy, token_logprobs

__all__ = ["completion_logprobs"]

_CHUNK_ELEMENTS = 1 << 24  # tokens x vocabulary per chunk: 64 MiB of fp32 logits
_CHECKPOINT_ELEMENTS = 1 << 26  # above this many logits per micro-batch, recompute chunks


def completion_logprobs(
    model, mb: dict[str, torch.Tensor], temperature: float, *, entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``[b, C]`` log-probs of the completion tokens at ``temperature`` (and their entropy)."""
    if "rows" not in mb:
        return _padded_logprobs(model, mb, temperature, entropy)
    b, C = mb["mask"].shape
    with _hidden_instead_of_logits(model) as box:
        model(
            input_ids=mb["input_ids"],
            position_ids=mb["position_ids"],
            attention_mask=mb.get("attention_mask"),  # 4D when prompts are shared, else None
            use_cache=False,
        )
    hidden = box["hidden"][mb["rows"], mb["cols"]]  # [K, H]
    head, cap = _output_head(model), _softcap(model)
    logp, ent = _chunked(hidden, head.weight, head.bias, mb["targets"], temperature, entropy, cap)
    where = (mb["seq"], mb["tok"])
    grid = torch.zeros((b, C), dtype=logp.dtype, device=logp.device).index_put(where, logp)
    ent_grid = (
        torch.zeros((b, C), dtype=ent.dtype, device=ent.device).index_put(where, ent)
        if ent is not None
        else None
    )
    return grid, ent_grid  # [b, C]


def _chunked(hidden, weight, bias, targets, temperature: float, entropy: bool, cap=None):
    """Log-probs (and entropy) of ``targets`` under the head, a chunk of tokens at a time;
    ``cap``: the model's final logit soft-cap (Gemma 2), applied as its forward applies it."""
    K, V = hidden.shape[0], weight.shape[0]
    step = max(1, _CHUNK_ELEMENTS // V)
    recompute = torch.is_grad_enabled() and K * V > _CHECKPOINT_ELEMENTS

    def chunk(h, t):
        logits = F.linear(h, weight, bias).float()  # [k, V]
        if cap:
            logits = torch.tanh(logits / cap) * cap
        logits = logits / temperature
        lp = token_logprobs(logits.unsqueeze(0), t.unsqueeze(0))[0]  # [k]
        with torch.no_grad():
            ent = token_entropy(logits) if entropy else torch.zeros(0, device=h.device)
        return lp, ent

    parts = []
    for a in range(0, K, step):
        h, t = hidden[a : a + step], targets[a : a + step]
        if recompute:
            from torch.utils.checkpoint import checkpoint

            parts.append(checkpoint(chunk, h, t, use_reentrant=False))
        else:
            parts.append(chunk(h, t))
    logp = torch.cat([lp for lp, _ in parts]) if parts else hidden.new_zeros(0)
    ent = torch.cat([e for _, e in parts]) if entropy and parts else None
    return logp, ent


@contextlib.contextmanager
def _hidden_instead_of_logits(model):
    """Capture the input of the output head and hand it an empty slice, so the forward stops at
    the final hidden states (with their graph) and no logits are computed."""
    box: dict[str, Any] = {}

    def hook(module, args):
        box["hidden"] = args[0]  # [R, W, H]
        return (args[0][..., :0, :],)

    handle = _output_head(model).register_forward_pre_hook(hook)
    try:
        yield box
    finally:
        handle.remove()


def _softcap(model) -> float | None:
    """The final logit soft-cap the model's forward applies after its head (``cap * tanh(x /
    cap)``; Gemma 2 and 3), or None. Without it the packed log-probs differ once logits grow
    (2.45 nats after a head scaled 30x), though they agree at initialisation, where the start-up
    check runs."""
    config = getattr(getattr(model, "module", model), "config", None)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    cap = getattr(text, "final_logit_softcapping", None)
    return float(cap) if isinstance(cap, (int, float)) and cap > 0 else None


def _output_head(model):
    inner = getattr(model, "module", model)  # DDP wraps; the head is the module's
    return inner.get_output_embeddings()


def _padded_logprobs(model, mb, temperature: float, entropy: bool):
    C = mb["targets"].shape[1]
    out = model(
        input_ids=mb["input_ids"],
        attention_mask=mb["attention_mask"],
        position_ids=mb["position_ids"],
        use_cache=False,
        logits_to_keep=C + 1,
    )
    logits = out.logits[:, -(C + 1) : -1].float() / temperature  # [b, C, V]
    logp = token_logprobs(logits, mb["targets"])  # [b, C]
    return logp, token_entropy(logits) if entropy else None
