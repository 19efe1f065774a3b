"""Generation without waste: HF rollouts write the KV cache in place (no per-step re-copying of the
past), with samples identical to ``generate``'s default cache; the cache layer stays consistent
under every operation ``generate`` may call on it."""

from __future__ import annotations

import pytest
import torch
from transformers.cache_utils import DynamicLayer

from passband.trainer import _kvcache
from passband.trainer import rollout as rollout_module
from passband.trainer._kvcache import _InPlaceLayer, preallocated_cache
from passband.trainer.rollout import HFRollout

PROMPTS = ["12+3=", "7*8=", "a", "100-1=?"]  # different lengths: left padding in one batch


def _rollout(model, tokenizer, **kw):
    backend = HFRollout(model, tokenizer, max_new_tokens=12, batch_size=kw.pop("batch_size", 64))
    return backend.rollout(PROMPTS, 3, seeds=[11, 12, 13, 14])


def test_rollouts_write_the_cache_in_place_once_per_layer(tiny, tokenizer, monkeypatch):
    """Buffers per layer per decode call, sized for prompt + max_new_tokens (here under one
    chunk): no step grows them (the default cache re-copies every cached position at every step)."""
    grown = []
    real_grow = _InPlaceLayer._grow

    def counting_grow(self, k, v, size):
        grown.append(size)
        return real_grow(self, k, v, size)

    monkeypatch.setattr(_InPlaceLayer, "_grow", counting_grow)
    model = tiny.model(tokenizer)
    out = _rollout(model, tokenizer, batch_size=6)  # 12 rows: two decode calls
    layers = model.config.num_hidden_layers
    # per call and layer: one buffer, the distinct prompts' prefill; copying their cache rows to
    # the G rows of each group gathers that buffer (no new one); never one per step
    assert len(grown) == 2 * layers, grown
    assert all(n <= 7 + 12 for n in grown), "never more than prompt + max_new_tokens positions"
    assert len(out.completion_ids) == 12


def test_the_buffer_grows_by_chunks_and_attention_reads_it_contiguous():
    """Past one chunk the buffer grows a chunk at a time (not per step); what attention reads is
    contiguous, its tail zeros, and the mask size the model asks for is the buffer's length."""
    layer = _InPlaceLayer(capacity=3 * _kvcache.CHUNK)
    k = torch.randn(2, 2, 5, 4)
    assert layer.get_mask_sizes(5)[0] == 5, "the prefill attends over what it writes, no tail"
    assert torch.equal(layer.update(k, k)[0], k)
    keys, _ = layer.update(torch.ones(2, 2, 1, 4), torch.ones(2, 2, 1, 4))
    assert keys.is_contiguous() and keys.shape[-2] == _kvcache.CHUNK == layer.get_mask_sizes(1)[0]
    assert torch.equal(keys[:, :, :5], k) and not keys[:, :, 6:].any()
    sizes = set()
    for _ in range(2 * _kvcache.CHUNK):
        expected = layer.get_mask_sizes(1)[0]
        keys, _ = layer.update(torch.ones(2, 2, 1, 4), torch.ones(2, 2, 1, 4))
        assert keys.shape[-2] == expected and keys.is_contiguous()
        sizes.add(keys.shape[-2])
    assert sizes == {_kvcache.CHUNK, 2 * _kvcache.CHUNK, 3 * _kvcache.CHUNK}
    assert layer.get_seq_length() == 6 + 2 * _kvcache.CHUNK


def test_the_in_place_cache_samples_exactly_what_the_default_cache_samples(
    tiny, tokenizer, monkeypatch
):
    model = tiny.model(tokenizer)
    fast = _rollout(model, tokenizer)
    monkeypatch.setattr(rollout_module, "preallocated_cache", lambda m, c: None)
    default = _rollout(model, tokenizer)
    assert fast.completion_ids == default.completion_ids and fast.texts == default.texts


def test_cache_layer_operations_match_the_dynamic_layer():
    g = torch.Generator().manual_seed(0)

    def kv(t, b=3):
        return torch.randn(b, 2, t, 4, generator=g), torch.randn(b, 2, t, 4, generator=g)

    def same(a, b):  # ours: the filled part of the buffer, then a tail of zeros
        n = ours.get_seq_length()
        return all(torch.equal(x[:, :, :n], y) and not x[:, :, n:].any() for x, y in zip(a, b))

    ours, ref = _InPlaceLayer(capacity=4), DynamicLayer()
    for t in (3, 1, 1, 2):  # past the capacity of 4: the buffer grows
        k, v = kv(t)
        assert same(ours.update(k, v), ref.update(k, v))
    assert ours.get_seq_length() == ref.get_seq_length() == 7
    for op, arg in (
        ("batch_select_indices", torch.tensor([2, 0])),
        ("batch_repeat_interleave", 2),
        ("reorder_cache", torch.tensor([3, 2, 1, 0])),
        ("crop", -2),
    ):
        getattr(ours, op)(arg)
        getattr(ref, op)(arg)
        k, v = kv(1, b=ref.keys.shape[0])
        assert same(ours.update(k, v), ref.update(k, v)), op
        assert ours.get_seq_length() == ref.get_seq_length(), op


def test_only_a_cache_of_plain_full_attention_layers_is_replaced(tiny, tokenizer, monkeypatch):
    model = tiny.model(tokenizer)
    cache = preallocated_cache(model, 16)
    assert [type(x) for x in cache.layers] == [_InPlaceLayer] * model.config.num_hidden_layers
    sliding = tiny.model(tokenizer)
    sliding.config.use_sliding_window, sliding.config.sliding_window = True, 4
    sliding.config.max_window_layers = 1  # layer 2 of 2 slides: generate's own cache
    sliding.config.layer_types = ["full_attention", "sliding_attention"]
    assert preallocated_cache(sliding, 16) is None
    monkeypatch.setattr(_kvcache, "DynamicCache", None)  # a transformers without the layer API
    assert preallocated_cache(model, 16) is None


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_greedy_and_sampled_rollouts_stop_at_eos_like_before(tiny, tokenizer, temperature):
    model = tiny.model(tokenizer)
    backend = HFRollout(model, tokenizer, max_new_tokens=12, temperature=temperature)
    out = backend.rollout(PROMPTS, 2, seeds=[1, 2, 3, 4])
    for ids, cut in zip(out.completion_ids, out.truncated):
        assert len(ids) <= 12
        assert cut == (len(ids) == 12 and ids[-1] != tokenizer.eos_token_id)
