"""The lean update: packed micro-batches and vocabulary-chunked log-probs give the padded
layout's numbers (log-probs, gradients, a whole update) within float tolerance."""

from __future__ import annotations

import pytest
import torch

from passband.trainer import _logprobs as lp_module
from passband.trainer._batch import collate, pack
from passband.trainer._logprobs import completion_logprobs
from passband.trainer._prefix_pack import layouts_that_work

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")


def _seqs(tokenizer):
    enc = lambda s: tokenizer(s, add_special_tokens=False)["input_ids"]  # noqa: E731
    return [
        (enc("12+3="), enc("15"), True),
        (enc("7*8="), enc("56 is it"), True),
        (enc("a"), enc("bcd"), False),
        (enc("100-1="), enc("99"), True),
    ]


def _both(model, tokenizer, temperature=0.7, entropy=True):
    seqs, adv = _seqs(tokenizer), torch.tensor([1.0, -0.5, 0.3, 2.0])
    padded = collate(seqs, adv, tokenizer.pad_token_id, "cpu")
    packed = pack(seqs, adv, "cpu")
    return (
        padded,
        packed,
        completion_logprobs(model, padded, temperature, entropy=entropy),
        completion_logprobs(model, packed, temperature, entropy=entropy),
    )


def test_packing_leaves_no_padding_inside_rows_and_keeps_every_token(tiny, tokenizer):
    seqs = _seqs(tokenizer)
    mb = pack(seqs, torch.zeros(4), "cpu")
    lengths = sorted((len(p) + len(c) for p, c, _ in seqs), reverse=True)
    assert mb["input_ids"].shape[1] == lengths[0]
    assert mb["input_ids"].numel() < collate(seqs, torch.zeros(4), 0, "cpu")["input_ids"].numel()
    assert mb["targets"].numel() == sum(len(c) for _, c, _ in seqs)
    for (_, c, use), row in zip(seqs, mb["mask"]):
        assert row.tolist()[: len(c)] == [float(use)] * len(c) and row[len(c) :].sum() == 0


def test_packed_log_probs_and_entropy_match_the_padded_layout(tiny, tokenizer):
    model = tiny.model(tokenizer)
    assert layouts_that_work(model, "cpu")[0]
    padded, _, (lp_a, ent_a), (lp_b, ent_b) = _both(model, tokenizer)
    valid = torch.zeros_like(padded["mask"], dtype=torch.bool)
    for i, (_, c, _) in enumerate(_seqs(tokenizer)):
        valid[i, : len(c)] = True
    assert torch.allclose(lp_a[valid], lp_b[valid], atol=1e-5)
    assert torch.allclose(ent_a[valid], ent_b[valid], atol=1e-5)
    assert (lp_b[~valid] == 0).all()


def test_chunked_and_recomputed_log_probs_give_the_same_gradient(tiny, tokenizer, monkeypatch):
    model = tiny.model(tokenizer)
    seqs, adv = _seqs(tokenizer), torch.ones(4)
    mb = pack(seqs, adv, "cpu")

    def grads():
        model.zero_grad()
        lp, _ = completion_logprobs(model, mb, 0.7)
        (lp * mb["mask"]).sum().backward()
        return lp.detach(), [p.grad.clone() for p in model.parameters()]

    whole_lp, whole = grads()
    monkeypatch.setattr(lp_module, "_CHUNK_ELEMENTS", 3 * 50)  # 3 tokens per chunk
    monkeypatch.setattr(lp_module, "_CHECKPOINT_ELEMENTS", 1)  # and recompute each
    chunked_lp, chunked = grads()
    assert torch.allclose(whole_lp, chunked_lp, atol=1e-6)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(whole, chunked))


@pytest.mark.parametrize("mu,beta", [(1, 0.01), (2, 0.0)])
def test_an_update_is_the_same_shared_packed_or_padded(tiny, tokenizer, tmp_path, mu, beta):
    from passband.trainer import GRPOConfig, GRPOTrainer

    rows = [{"prompt": f"what is {i}{'ab'[i % 2]}=", "kind": "vary"} for i in range(3)]
    settings = dict(
        group_size=4,
        prompts_per_step=3,
        max_new_tokens=6,
        learning_rate=1e-2,
        beta=beta,
        mu=mu,
        pretrained=False,
        max_steps=1,
        use_curriculum=False,
        progress=False,
        seed=0,
        filter_zero_variance=False,
    )
    trainers = []
    for packed, shared in ((True, True), (True, False), (False, False)):
        model = tiny.model(tokenizer)
        t = GRPOTrainer(
            model,
            tokenizer,
            rows,
            lambda c, **r: float(len(set(c))),
            GRPOConfig(output_dir=str(tmp_path / str(packed)), **settings),
        )
        t._pack, t._share = packed, shared
        t.optimizer = torch.optim.SGD(t.model.parameters(), lr=1.0)  # shows the gradient itself
        trainers.append(t)
    groups = trainers[0]._rollout_groups([0, 1, 2])
    layouts = []
    for t in trainers:
        collate_fn = t._collate
        t._collate = lambda s, a, f=collate_fn: layouts.append(f(s, a)) or layouts[-1]
    stats = [t._update(groups) for t in trainers]
    assert "attention_mask" in layouts[0] and layouts[0]["attention_mask"].dim() == 4, "shared"
    assert "rows" in layouts[1] and "attention_mask" not in layouts[1], "packed"
    assert trainers[0]._share is not None and all(
        t._share == s for t, s in zip(trainers, (1, 0, 0))
    )
    for other, st in zip(trainers[1:], stats[1:]):  # shared prompts, packed, padded: one update
        for a, b in zip(trainers[0].model.parameters(), other.model.parameters()):
            assert torch.allclose(a, b, atol=1e-6)
        assert stats[0]["loss"] == pytest.approx(st["loss"], abs=1e-6)
        assert stats[0]["entropy"] == pytest.approx(st["entropy"], abs=1e-5)


def test_a_model_whose_attention_ignores_packing_falls_back_to_the_padded_layout(tiny, tokenizer):
    """Eager attention with a full (non-causal-per-sequence) mask leaks across packed sequences:
    the start-up check must see it and keep the padded layout."""
    model = tiny.model(tokenizer)
    forward = model.forward

    def leaky(*args, position_ids=None, attention_mask=None, **kw):  # drops the packing signal
        return forward(*args, attention_mask=attention_mask, **kw)

    model.forward = leaky
    assert not layouts_that_work(model, "cpu")[0]
    model.forward = forward
    assert layouts_that_work(model, "cpu")[0]


def test_a_final_logit_soft_cap_is_applied_in_the_packed_layout_too(tokenizer):
    """Gemma 2 caps its logits after the head; the packed path applied the head alone and agreed
    with the padded one only while logits were small (2.45 nats apart after the head grew)."""
    from transformers import Gemma2Config, Gemma2ForCausalLM

    torch.manual_seed(0)
    config = Gemma2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=64,
        final_logit_softcapping=30.0,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = Gemma2ForCausalLM(config).eval()
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(30.0)  # large logits: the cap bites
    padded, _, (lp_a, _), (lp_b, _) = _both(model, tokenizer, entropy=False)
    valid = padded["mask"] > 0
    assert torch.allclose(lp_a[valid], lp_b[valid], atol=1e-4), (lp_a - lp_b).abs().max()
