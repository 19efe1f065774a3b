"""``HFRollout``'s decode loop drops finished rows from the batch and still samples, token for
token, what Hugging Face ``generate`` samples with the same seeded sampler."""

from __future__ import annotations

import pytest

from passband.trainer import HFRollout
from passband.trainer._decode import generate_reference
from passband.trainer._kvcache import preallocated_cache

PROMPTS = ["1+1=", "22+3=", "7*7=", "9-4=", "100+1=", "3=", "45+45=", "8*2="]


def _backend(model, tokenizer, **kw):
    """HFRollout on a random tiny model, with three common characters as extra end tokens, so
    completions end at many different lengths."""
    backend = HFRollout(model, tokenizer, max_new_tokens=24, **kw)
    backend.eos_ids |= {tokenizer.convert_tokens_to_ids(c) for c in "7a+"}
    return backend


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_the_same_tokens_as_generate_while_dropping_finished_rows(
    tiny, tokenizer, monkeypatch, temperature
):
    model = tiny.model(tokenizer)
    selects = []
    original = type(preallocated_cache(model, 8)).batch_select_indices

    def spy(self, indices):
        selects.append(len(indices))
        return original(self, indices)

    monkeypatch.setattr(type(preallocated_cache(model, 8)), "batch_select_indices", spy)
    seeds = list(range(10, 10 + len(PROMPTS)))
    backend = _backend(model, tokenizer, temperature=temperature)
    got = backend.rollout(PROMPTS, 4, seeds=seeds).completion_ids
    lengths = [len(x) for x in got]
    assert len(set(lengths)) > 3, f"completions should end at many lengths: {lengths}"
    assert selects, "finished rows were never dropped"
    assert got == generate_reference(backend, PROMPTS, 4, seeds)


def test_finished_rows_stop_costing_forwards(tiny, tokenizer):
    model = tiny.model(tokenizer, seed=1)
    fed = []
    hook = model.register_forward_pre_hook(
        lambda mod, args, kwargs: fed.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        out = _backend(model, tokenizer).rollout(PROMPTS, 4, seeds=list(range(8)))
    finally:
        hook.remove()
    longest = max(len(x) for x in out.completion_ids)
    assert len(fed) == longest, "one prefill, then one forward per token of the longest row"
    assert sum(fed) < 0.8 * len(out) * len(fed), (sum(fed), len(out), len(fed))


def test_the_vectorised_uniforms_are_the_counter_rng_bit_for_bit():
    import random

    import numpy as np

    from passband.trainer._seeded import _MASK64, _uniform, _uniforms

    rng = random.Random(0)
    seeds = [rng.getrandbits(64) for _ in range(500)] + [0, _MASK64, 1]
    for position in (0, 1, 7, 255, 10**6):
        many = _uniforms(np.array(seeds, dtype=np.uint64), position)
        assert many.tolist() == [_uniform(s, position) for s in seeds]


def test_a_groups_prompt_is_run_once_and_its_cache_copied_to_every_row(tiny, tokenizer):
    """The prefill sees each distinct prompt once, not G times; the samples stay generate's."""
    model = tiny.model(tokenizer, seed=3)
    fed = []
    hook = model.register_forward_pre_hook(
        lambda mod, args, kwargs: fed.append(kwargs["input_ids"].shape), with_kwargs=True
    )
    backend = _backend(model, tokenizer, temperature=1.0)
    seeds = list(range(len(PROMPTS)))
    try:
        got = backend.rollout(PROMPTS, 4, seeds=seeds).completion_ids
    finally:
        hook.remove()
    assert fed[0][0] == len(PROMPTS) and fed[1][0] == 4 * len(PROMPTS), fed[:2]
    assert got == generate_reference(backend, PROMPTS, 4, seeds)


def test_the_one_query_attention_is_sdpas_up_to_rounding():
    """Grouped heads (6 query heads on 2 key/value heads), left padding and a masked tail: the
    decode step's attention gives what HF's sdpa path gives, to float32 rounding."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from passband.trainer._attention import _one_query

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(5, h, t, 16, generator=g) for h, t in ((6, 1), (2, 40), (2, 40)))
    mask = torch.ones(5, 1, 1, 40, dtype=torch.bool)
    mask[:, :, :, 33:] = False  # the unfilled tail of the cache buffer
    mask[1, :, :, :7] = mask[3, :, :, :2] = False  # left padding
    module = torch.nn.Module()
    module.num_key_value_groups, module.is_causal = 3, True
    ref, _ = sdpa_attention_forward(module, q, k, v, mask, scaling=0.25)
    ours = _one_query(q, k, v, mask, 0.25)
    assert ours.shape == ref.shape == (5, 1, 6, 16)
    assert torch.allclose(ours, ref, atol=1e-5, rtol=1e-5), (ours - ref).abs().max()
    additive = torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))
    assert torch.allclose(_one_query(q, k, v, additive, 0.25), ref, atol=1e-5, rtol=1e-5)
    # the filled part of a longer buffer, read in place (strided views), as a decode step reads it
    kb, vb = (torch.cat([t, torch.randn(5, 2, 8, 16, generator=g)], dim=2) for t in (k, v))
    kv, vv = kb[:, :, :40], vb[:, :, :40]
    assert not kv.is_contiguous()
    assert torch.allclose(_one_query(q, kv, vv, mask, 0.25), ref, atol=1e-5, rtol=1e-5)


def test_rollouts_use_it_for_decode_steps_only_and_restore_sdpa(tiny, tokenizer, monkeypatch):
    from passband.trainer import _attention

    model = tiny.model(tokenizer)
    assert model.config._attn_implementation == "sdpa"
    calls = []
    real = _attention._one_query
    monkeypatch.setattr(
        _attention, "_one_query", lambda q, *a: calls.append(q.shape[2]) or real(q, *a)
    )
    out = _backend(model, tokenizer).rollout(PROMPTS, 2, seeds=list(range(len(PROMPTS))))
    longest = max(len(x) for x in out.completion_ids)
    layers = model.config.num_hidden_layers
    assert calls and set(calls) == {1} and len(calls) == layers * (longest - 1)
    assert model.config._attn_implementation == "sdpa", "the model is handed back as it was"
    model.config._attn_implementation = "eager"
    calls.clear()
    _backend(model, tokenizer).rollout(PROMPTS[:2], 2, seeds=[0, 1])
    assert not calls, "a model on another attention implementation is left alone"


def test_decode_steps_attend_over_the_filled_positions_only(tiny, tokenizer, monkeypatch):
    """On a CPU with the in-place cache, a decode step hands the model its padding mask
    ready-made and as long as the positions filled so far, and attention reads only that part
    of the cache's buffers (they are allocated ``CHUNK`` positions ahead)."""
    import torch

    from passband.trainer import _attention

    model = tiny.model(tokenizer, seed=2)
    seen = []
    real = _attention._one_query

    def spy(q, k, v, mask, scaling):
        seen.append((k.shape[2], v.shape[2], tuple(mask.shape), mask.dtype))
        return real(q, k, v, mask, scaling)

    monkeypatch.setattr(_attention, "_one_query", spy)
    backend = _backend(model, tokenizer, temperature=1.0)
    out = backend.rollout(PROMPTS, 2, seeds=list(range(len(PROMPTS))))
    width = max(len(backend.encode_prompt(p)) for p in PROMPTS)
    layers = model.config.num_hidden_layers
    longest = max(len(x) for x in out.completion_ids)
    keys = [k for k, _, _, _ in seen[::layers]]  # the first layer's, step by step
    assert keys == list(range(width + 1, width + longest)), keys
    assert all(k == v == m[-1] and m[1:3] == (1, 1) and dt == torch.bool for k, v, m, dt in seen)
    assert out.completion_ids == generate_reference(backend, PROMPTS, 2, list(range(len(PROMPTS))))


def test_no_ready_mask_for_a_windowed_model_and_no_switch_for_one_that_reads_its_own(
    tiny, tokenizer, monkeypatch
):
    """A config that windows attention gets HF's own masks (the window is in them), and a model
    whose layers do not route attention through HF's interface keeps its implementation."""
    from passband.trainer import _attention, _decode

    model = tiny.model(tokenizer, seed=4)
    ready = []
    real = _decode._takes_ready_mask
    monkeypatch.setattr(
        _decode, "_takes_ready_mask", lambda *a: ready.append(real(*a)) or ready[-1]
    )
    _backend(model, tokenizer).rollout(PROMPTS[:2], 2, seeds=[0, 1])
    assert ready == [True]
    model.config.sliding_window = 8
    _backend(model, tokenizer).rollout(PROMPTS[:2], 2, seeds=[0, 1])
    assert ready == [True, False]
    model.config.sliding_window = None
    calls = []
    one = _attention._one_query
    monkeypatch.setattr(_attention, "_one_query", lambda q, *a: calls.append(1) or one(q, *a))
    monkeypatch.setattr(model, "_supports_attention_backend", False, raising=False)
    _backend(model, tokenizer).rollout(PROMPTS[:2], 2, seeds=[0, 1])
    assert not calls and ready[-1] is False
    assert model.config._attn_implementation == "sdpa"
