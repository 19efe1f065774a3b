"""Shared-prompt packing (trainer/_prefix_pack.py): a group's prompt runs once in the update, and
every completion token gets the log-prob and the gradient it gets in the padded layout."""

from __future__ import annotations

import random

import pytest
import torch

from passband.trainer import _prefix_pack
from passband.trainer._batch import collate, pack
from passband.trainer._logprobs import completion_logprobs
from passband.trainer._prefix_pack import layouts_that_work, pack_shared


def _groups(n_groups=5, g=4, seed=0):
    """Groups of g sequences sharing a prompt; lengths vary; some completions out of the loss."""
    rng = random.Random(seed)
    seqs = []
    for _ in range(n_groups):
        prompt = [rng.randrange(3, 40) for _ in range(rng.randrange(1, 9))]
        for _ in range(g):
            comp = [rng.randrange(3, 40) for _ in range(rng.randrange(1, 7))]
            seqs.append((prompt, comp, rng.random() > 0.2))
    return seqs, torch.randn(len(seqs))


def _logp_and_grads(model, mb):
    model.zero_grad()
    logp, _ = completion_logprobs(model, mb, 0.9)
    (logp * mb["mask"] * mb["adv"][:, None]).sum().backward()
    return logp.detach(), [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_log_probs_and_gradients_are_the_padded_layouts(tiny, tokenizer, attention):
    model = tiny.model(tokenizer, seed=1).train()
    model.config._attn_implementation = attention
    seqs, adv = _groups()
    additive = attention == "eager"
    ours, g_ours = _logp_and_grads(model, pack_shared(seqs, adv, "cpu", additive=additive))
    padded = collate(seqs, adv, 0, "cpu")
    ref, g_ref = _logp_and_grads(model, padded)
    m = padded["mask"].bool()
    assert torch.allclose(ours[m], ref[m], atol=1e-5), (ours[m] - ref[m]).abs().max()
    for a, b in zip(g_ours, g_ref):
        assert torch.allclose(a, b, atol=1e-5 * b.abs().max().item() + 1e-8)
    assert layouts_that_work(model, "cpu") == (True, True)


def test_each_prompt_is_laid_out_once_per_group(tiny, tokenizer):
    seqs, adv = _groups(n_groups=6, g=8)
    shared, packed = pack_shared(seqs, adv, "cpu"), pack(seqs, adv, "cpu")
    prompt_tokens = sum(len(p) for p, _, _ in seqs[::8])
    completion_tokens = sum(len(c) for _, c, _ in seqs)
    real = int((shared["attention_mask"][:, 0].diagonal(dim1=1, dim2=2)).sum())  # every column
    assert shared["input_ids"].numel() >= prompt_tokens + completion_tokens
    for k, (i, j, target) in enumerate(
        zip(shared["seq"].tolist(), shared["tok"].tolist(), shared["targets"].tolist())
    ):
        assert seqs[i][1][j] == target, k  # every completion token, once, where it belongs
    assert len(shared["targets"]) == completion_tokens
    assert real == shared["input_ids"].numel()
    assert shared["input_ids"].numel() < 0.7 * packed["input_ids"].numel()


def test_a_group_too_wide_for_one_unit_is_split_with_a_prompt_copy_each(
    tiny, tokenizer, monkeypatch
):
    monkeypatch.setattr(_prefix_pack, "MIN_WIDTH", 1)  # units as wide as the longest sequence
    model = tiny.model(tokenizer, seed=2)
    seqs = [([5, 6, 7, 8], [9, 10], True), ([5, 6, 7, 8], [11], True), ([5, 6, 7, 8], [12], True)]
    seqs += [([5, 6, 7, 8], [13, 14, 15], True)]
    adv = torch.zeros(4)
    units = _prefix_pack._units(seqs)
    assert units == [[0, 1], [2], [3]], "7 wide at most (the longest): 4 + 2 + 1, then 4 + 1"
    shared = pack_shared(seqs, adv, "cpu")
    ours, _ = completion_logprobs(model, shared, 1.0)
    padded = collate(seqs, adv, 0, "cpu")
    ref, _ = completion_logprobs(model, padded, 1.0)
    m = padded["mask"].bool()
    assert torch.allclose(ours[m], ref[m], atol=1e-5)


def test_attention_without_a_4d_mask_is_not_shared(tiny, tokenizer):
    model = tiny.model(tokenizer)
    model.config._attn_implementation = "flash_attention_2"  # never on this CPU: not shared
    assert not layouts_that_work(model, "cpu")[1]
    model.config._attn_implementation = "sdpa"
    forward = model.forward

    def no_mask(*args, attention_mask=None, **kw):  # a forward that drops the 4D mask
        return forward(*args, **kw)

    model.forward = no_mask
    assert not layouts_that_work(model, "cpu")[1]


def test_a_prompt_shorter_than_its_answers_is_not_shared():
    """Few tokens to save, and a wide masked unit costs more attention: plain packing."""
    seqs = [([5, 6], [7] * 30, True) for _ in range(4)] + [([1] * 12, [2, 3], True)] * 4
    assert _prefix_pack._units(seqs) == [[0], [1], [2], [3], [4, 5, 6, 7]]
    plain = pack_shared(seqs[:4], torch.zeros(4), "cpu")
    assert "attention_mask" not in plain and plain["input_ids"].shape == (4, 32)


def test_an_empty_completion_in_a_shared_group_is_laid_out_as_padded(tiny, tokenizer):
    """A backend without EOS may return no tokens; pack_shared gave it one index entry and
    crashed ("size of tensor a (3) must match ... (4)")."""
    model = tiny.model(tokenizer, seed=1)
    seqs = [([5, 6, 7], [8, 9], True), ([5, 6, 7], [], True), ([5, 6, 7], [10], True)]
    adv = torch.tensor([1.0, -1.0, 0.5])
    ours, _ = completion_logprobs(model, pack_shared(seqs, adv, "cpu"), 1.0)
    padded = collate(seqs, adv, 0, "cpu")
    ref, _ = completion_logprobs(model, padded, 1.0)
    m = padded["mask"].bool()
    assert m.sum() == 3 and torch.allclose(ours[m], ref[m], atol=1e-5)
