"""LoRA mode: adapters are the only trainable weights; the reference is the base, not a copy."""

from __future__ import annotations

import copy

import pytest
import torch

peft = pytest.importorskip("peft", reason="peft is not installed (extra `.[lora]`)")

from passband.trainer.lora import (
    LoraSettings,
    adapters_disabled,
    apply_lora,  # noqa: E402
    is_lora,
    load_adapter_weights,
    trainable_share,
)


def _batch(tokenizer):
    rows = [tokenizer(text)["input_ids"] for text in ("12+7=19", "3*3=9.)")]
    return torch.tensor(rows)  # [2, 7]


def _logits(model, ids):
    with torch.no_grad():
        return model(ids).logits


def test_only_adapters_train_and_disabled_adapters_give_the_base_model(tiny):
    tok = tiny.tokenizer()
    base = tiny.model(tok, hidden=64)
    original = copy.deepcopy(base)
    policy = apply_lora(base, LoraSettings(r=4, alpha=8))
    assert is_lora(policy) and not is_lora(original)
    trainable, total = trainable_share(policy)
    names = [n for n, p in policy.named_parameters() if p.requires_grad]
    assert names and all("lora_" in n for n in names) and trainable < 0.2 * total

    ids = _batch(tok)
    optim = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=0.05)
    for _ in range(2):  # B starts at zero: the first step moves only B, the second changes outputs
        policy(ids, labels=ids).loss.backward()
        optim.step()
        optim.zero_grad()
    assert not torch.allclose(_logits(policy, ids), _logits(original, ids), atol=1e-4)
    with adapters_disabled(policy):
        reference = _logits(policy, ids)
    assert torch.allclose(reference, _logits(original, ids), atol=1e-5)
    assert not torch.allclose(_logits(policy, ids), reference, atol=1e-4), "adapters back on"


def test_adapter_checkpoint_round_trip(tiny, tmp_path):
    tok = tiny.tokenizer()
    policy = apply_lora(tiny.model(tok), LoraSettings(r=4, target_modules=("q_proj", "v_proj")))
    with torch.no_grad():
        for n, p in policy.named_parameters():
            if "lora_B" in n:
                p.normal_()
    policy.save_pretrained(tmp_path)
    fresh = apply_lora(tiny.model(tok), LoraSettings(r=4, target_modules=("q_proj", "v_proj")))
    ids = _batch(tok)
    assert not torch.allclose(_logits(fresh, ids), _logits(policy, ids))
    load_adapter_weights(fresh, tmp_path)
    assert torch.allclose(_logits(fresh, ids), _logits(policy, ids), atol=1e-6)
    with pytest.raises(FileNotFoundError, match="LoRA run"):
        load_adapter_weights(fresh, tmp_path / "missing")


def test_settings_are_validated_and_full_models_refuse_disabling(tiny):
    with pytest.raises(ValueError, match="r = 0"):
        LoraSettings(r=0)
    with pytest.raises(ValueError, match="dropout"):
        LoraSettings(dropout=1.5)
    with pytest.raises(ValueError, match="peft model"):
        with adapters_disabled(tiny.model(tiny.tokenizer())):
            pass


def test_grpo_trainer_with_a_lora_policy_leaves_the_base_frozen(tiny, tmp_path):
    from passband.trainer import GRPOConfig, GRPOTrainer
    from passband.verifiers import regex_format

    tok = tiny.tokenizer()
    policy = apply_lora(tiny.model(tok), LoraSettings(r=4))
    frozen = {n: p.detach().clone() for n, p in policy.named_parameters() if not p.requires_grad}
    adapters = {n: p.detach().clone() for n, p in policy.named_parameters() if p.requires_grad}
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=8,
        learning_rate=0.05,
        beta=0.0,
        pretrained=False,
        max_steps=2,
        use_curriculum=False,
        filter_zero_variance=False,
        output_dir=str(tmp_path),
        progress=False,
    )
    rows = [{"prompt": p} for p in ("1+1=", "2+3=", "9-4=", "7*1=")]
    GRPOTrainer(policy, tok, rows, regex_format(".*[13579].*"), config).train()
    named = dict(policy.named_parameters())
    assert all(torch.equal(named[n], v) for n, v in frozen.items())
    assert any(not torch.equal(named[n], v) for n, v in adapters.items())


def test_lora_r_in_the_config_wraps_a_plain_model_and_keeps_a_given_peft_model(tiny, tmp_path):
    from passband.trainer import GRPOConfig, GRPOTrainer
    from passband.verifiers import regex_format

    tok = tiny.tokenizer()
    rows = [{"prompt": p} for p in ("1+1=", "2+3=", "9-4=", "7*1=")]
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=6,
        learning_rate=0.05,
        beta=0.01,
        lora_r=4,
        lora_alpha=8.0,
        lora_target_modules=["q_proj", "v_proj"],
        pretrained=False,
        max_steps=1,
        use_curriculum=False,
        filter_zero_variance=False,
        output_dir=str(tmp_path / "a"),
        progress=False,
    )
    t = GRPOTrainer(tiny.model(tok), tok, rows, regex_format(".*[13579].*"), config)
    assert t.lora and t.reference is None  # the base with adapters off is the KL reference
    trainable = [n for n, p in t.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n and ("q_proj" in n or "v_proj" in n) for n in trainable)
    layer = t.model.get_base_model().model.layers[0].self_attn.q_proj
    assert layer.r["default"] == 4 and layer.scaling["default"] == pytest.approx(8.0 / 4)
    assert t.train()["kl"] is not None

    own = apply_lora(tiny.model(tok), LoraSettings(r=2))  # its own adapters win over lora_r
    kept = GRPOTrainer(
        own, tok, rows, regex_format(".*[13579].*"), config.replace(output_dir=str(tmp_path / "b"))
    )
    assert (
        kept.model is own
        and own.get_base_model().model.layers[0].self_attn.q_proj.r["default"] == 2
    )
    full = GRPOTrainer(
        tiny.model(tok),
        tok,
        rows,
        regex_format(".*[13579].*"),
        config.replace(lora_r=0, output_dir=str(tmp_path / "c")),
    )
    assert not full.lora and full.reference is not None
