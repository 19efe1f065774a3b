"""Attention for one decode step on a CPU, as ``HFRollout``'s decode loop runs it.

A decode step has one query per row and head. Hugging Face's ``sdpa`` path then spends most of
its time outside the arithmetic:
- with a padding mask on a CPU it repeats a grouped-query model's keys and values once per query
  head (``repeat_kv``, a copy of the whole cache per layer per step): on SmolLM2-135M (9 query
  heads, 3 key/value heads) those copies took 12% of a rollout, attention itself 17%;
- the kernel itself, for one query against a cache of 40 positions and 192 rows, took 1.4 ms
  where the two matrix products below take 0.8 ms;
- it reads the pre-allocated cache's whole buffer, unfilled tail included (masked). The decode
  loop passes a mask as long as the filled positions, and ``_one_query`` reads only those, in
  place: the two batched products on the 192-row, 72-token rollout of
  ``benchmarks/bench_trainer_vs_trl.py``'s long task took about a fifth less (0.24 s against
  0.31 s of 3 rollouts under cProfile), and building the mask at every step is skipped.

``decode_attention(model)`` switches a model whose attention is ``sdpa`` to ``passband_decode``
for the length of a rollout: one-query steps on a CPU go through ``_one_query`` (grouped heads
read their key/value head in place, scores in float32 as ``eager`` computes them), and everything
else (the prefill, other devices, soft-capping, sliding windows, sinks) goes to HF's own ``sdpa``
function unchanged. The mask is the one ``sdpa`` builds, or on a CPU decode step the decode
loop's own, which is the same padding mask cut to the filled positions. The result differs from
``sdpa``'s by rounding only (tests/trainer/test_decode.py compares them), and the trainer's
log-probabilities are computed by the model's own forward, never by this function.
"""

from __future__ import annotations

import contextlib

import torch

__all__ = ["decode_attention", "NAME"]

NAME = "passband_decode"
_DELEGATE = ("softcap", "sliding_window", "s_aux", "sinks", "position_bias", "head_mask")

try:  # transformers >= 4.48: pluggable attention and mask functions
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    from transformers.modeling_utils import AttentionInterface
except ImportError:  # pragma: no cover - an older transformers keeps its own sdpa
    sdpa_attention_forward = None


def _attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None, **kw):
    """The ``passband_decode`` implementation: ``_one_query`` where it applies, else ``sdpa``."""
    key, value, kw = _attended(key, value, attention_mask, kw)
    own = (
        query.shape[2] == 1
        and query.device.type == "cpu"
        and not (dropout and module.training)
        and not any(kw.get(k) is not None for k in _DELEGATE)
        and query.shape[1] % key.shape[1] == 0
    )
    if not own:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kw
        )
    return _one_query(query, key, value, attention_mask, scaling), None


def _attended(key, value, mask, kw: dict):
    """``key`` / ``value`` (and a ``position_bias``) cut to a 4-D mask's length. The decode loop
    passes a mask as long as the positions filled so far, while a pre-allocated cache returns its
    whole buffer, whose unfilled tail no query attends to; reading it would only cost memory
    traffic. A mask HF built is as long as the keys, so nothing is cut then."""
    n = mask.shape[-1] if mask is not None and mask.dim() == 4 else key.shape[-2]
    if 1 < n < key.shape[-2]:
        key, value = key[:, :, :n], value[:, :, :n]  # views: a buffer's filled part
        bias = kw.get("position_bias")
        if isinstance(bias, torch.Tensor) and bias.shape[-1] > n:
            kw = {**kw, "position_bias": bias[..., :n]}
    return key, value, kw


def _one_query(query, key, value, mask, scaling) -> torch.Tensor:
    """query [b, h, 1, d]; key / value [b, kv, L, d] (h a multiple of kv); mask [b, 1, 1, L]
    (bool: True attends; or additive float) or None. Returns [b, 1, h, d_v].

    Batched products over (row, key/value head) on views of the cache: a strided key (the filled
    part of a longer buffer) is read in place, not copied."""
    b, h, _, d = query.shape
    kv, n, dv = key.shape[1], key.shape[2], value.shape[-1]
    q = query.reshape(b * kv, h // kv, d)  # the query heads that share a key/value head, together
    k, v = key.reshape(b * kv, n, d), value.reshape(b * kv, n, dv)  # views where the layout allows
    scores = torch.bmm(q, k.transpose(1, 2)).float().view(b, kv, h // kv, n)  # [b, kv, h/kv, L]
    scores = scores * (scaling if scaling is not None else d**-0.5)
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            scores = scores + mask
    weights = torch.softmax(scores, dim=-1).to(value.dtype).view(b * kv, h // kv, n)
    out = torch.bmm(weights, v)  # [b * kv, h/kv, d_v]
    return out.reshape(b, 1, h, dv)


_registered = False


def _register() -> bool:
    global _registered
    if sdpa_attention_forward is None:
        return False
    if not _registered:
        AttentionInterface.register(NAME, _attention)
        AttentionMaskInterface.register(NAME, sdpa_mask)  # the very mask sdpa gets
        _registered = True
    return True


def _routes_attention(model) -> bool:
    """Whether ``model``'s attention layers call the function its config names (HF's
    ``AttentionInterface``, ``_supports_attention_backend``). Others (Falcon, for one) read the
    name themselves and would treat ``passband_decode`` as their eager path."""
    inner = getattr(model, "module", model)  # DDP wraps; a peft model forwards the attribute
    return bool(getattr(inner, "_supports_attention_backend", False))


@contextlib.contextmanager
def decode_attention(model):
    """For the duration: ``passband_decode`` attention on ``model`` if it runs ``sdpa``
    (any other implementation, and a model without a config, are left alone)."""
    config = getattr(model, "config", None)
    if (
        getattr(config, "_attn_implementation", None) != "sdpa"
        or not _routes_attention(model)
        or not _register()
    ):
        yield
        return
    config._attn_implementation = NAME
    try:
        yield
    finally:
        config._attn_implementation = "sdpa"
