"""Parts of the vLLM backend that need no engine: TIS weights, the mismatch metric, weight export.

These run everywhere (no vllm import); the engine itself is tested in test_vllm_backend.py.
"""

from __future__ import annotations

import math

import pytest
import torch

from passband.trainer.rollout_vllm import VLLMRollout, _hf_weights, make_rollout_backend
from passband.trainer.tis import logprob_mismatch, rollout_logprobs_tensor, tis_correct, tis_weights


def test_tis_weights_are_the_capped_ratio_without_gradient():
    trainer = torch.tensor([[-1.0, -2.0, -0.5]], requires_grad=True)  # [1, 3]
    sampler = torch.tensor([[-1.0, -0.5, -3.0]])
    w = tis_weights(trainer, sampler, cap=2.0)
    expected = torch.tensor([[1.0, math.exp(-1.5), 2.0]])  # ratio 1, e^-1.5, e^2.5 -> capped
    assert torch.allclose(w, expected)
    assert not w.requires_grad


def test_tis_weights_ignore_missing_sampler_logprobs_and_reject_bad_cap():
    w = tis_weights(torch.tensor([[-1.0, -1.0]]), torch.tensor([[math.nan, -2.0]]), cap=5.0)
    assert w[0, 0].item() == 1.0 and w[0, 1].item() == pytest.approx(math.e)
    with pytest.raises(ValueError, match="cap"):
        tis_weights(torch.zeros(1, 1), torch.zeros(1, 1), cap=0)


def test_logprob_mismatch_counts_only_masked_tokens():
    trainer = torch.tensor([[-1.0, -1.0, -9.0], [-2.0, -1.0, 0.0]])  # [2, 3]
    sampler = torch.tensor([[-1.1, -1.0, 0.0], [-1.0, -1.0, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 0]])  # the -9 is padding
    m = logprob_mismatch(trainer, sampler, mask, cap=2.0)
    diffs = torch.tensor([0.1, 0.0, -1.0, 0.0])
    assert m["rollout/logp_diff_mean"] == pytest.approx(diffs.abs().mean().item(), rel=1e-5)
    assert m["rollout/logp_diff_max"] == pytest.approx(1.0)
    assert m["rollout/kl"] == pytest.approx((diffs.exp() - 1 - diffs).mean().item(), rel=1e-5)
    assert m["rollout/tis_capped"] == 0.0
    assert logprob_mismatch(trainer, sampler, torch.zeros(2, 3))["rollout/kl"] == 0.0


def test_rollout_logprobs_tensor_right_pads_and_cuts():
    t = rollout_logprobs_tensor([[-1.0], [-1.0, -2.0, -3.0]], width=2)
    assert torch.equal(t, torch.tensor([[-1.0, 0.0], [-1.0, -2.0]]))


def _tiny_model():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        tie_word_embeddings=True,
    )
    return Qwen2ForCausalLM(cfg)


def test_exported_weights_include_the_tied_lm_head():
    model = _tiny_model()
    weights = dict(_hf_weights(model))
    assert "lm_head.weight" in weights and "model.embed_tokens.weight" in weights
    assert set(weights) == set(model.state_dict())


def test_peft_weights_are_merged_out_of_place_under_base_names():
    peft = pytest.importorskip("peft", reason="peft is not installed (extra `.[lora]`)")
    model = _tiny_model()
    base_names = set(model.state_dict())
    lora = peft.get_peft_model(
        model, peft.LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    )
    q = lora.base_model.model.model.layers[0].self_attn.q_proj.base_layer.weight
    before = q.detach().clone()
    weights = {name: t.clone() for name, t in _hf_weights(lora)}
    assert set(weights) == base_names
    merged = _merged_copy(lora)
    for name, t in merged.items():
        assert torch.allclose(weights[name], t, atol=1e-6), name
    assert not torch.equal(weights["model.layers.0.self_attn.q_proj.weight"], before)
    assert torch.equal(q.detach(), before), "exporting must not touch the frozen base weights"


def _merged_copy(lora_model) -> dict[str, torch.Tensor]:
    import copy

    merged = copy.deepcopy(lora_model).merge_and_unload()
    return {k: v.detach() for k, v in merged.state_dict().items()}


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(gpu_memory_utilization=1.5), "gpu_memory_utilization = 1.5"),
        (dict(top_p=0.0), "top_p = 0.0"),
        (dict(sleep_level=3), "sleep_level = 3"),
        (dict(max_new_tokens=0), "max_new_tokens = 0"),
    ],
)
def test_engine_settings_are_checked_before_vllm_is_imported(bad, match):
    kwargs = {"max_new_tokens": 8, **bad}
    with pytest.raises(ValueError, match=match):
        VLLMRollout(None, None, **kwargs)


def test_tis_correct_measures_always_and_weights_only_with_a_cap():
    loss = torch.tensor([[1.0, 1.0, 1.0]])  # [1, 3]
    trainer, sampler = torch.tensor([[-1.0, -1.0, -1.0]]), torch.tensor([[-1.0, -1.5, -4.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    same, off = tis_correct(loss, trainer, sampler, mask, cap=0.0)
    assert torch.equal(same, loss)
    assert off["rollout/logp_diff_mean"] == pytest.approx(0.25) and off["rollout/tis_capped"] == 0.0
    weighted, on = tis_correct(loss, trainer, sampler, mask, cap=1.5)
    assert torch.allclose(weighted, torch.tensor([[1.0, 1.5, 1.5]]))  # e^0.5 and e^3 hit the cap
    assert on["rollout/tis_capped"] == 1 / 2  # of the two masked tokens


def test_backend_is_built_from_the_config(tiny):
    import importlib.util

    from passband.trainer import GRPOConfig, HFRollout

    tok = tiny.tokenizer()
    config = GRPOConfig(
        max_new_tokens=7, temperature=0.9, top_p=0.95, top_k=5, stop=["##"], rollout_batch_size=16
    )
    hf = make_rollout_backend(tiny.model(tok), tok, config)
    assert isinstance(hf, HFRollout) and hf.policy_version == 0
    assert (hf.max_new_tokens, hf.temperature, hf.top_p, hf.top_k) == (7, 0.9, 0.95, 5)
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(ImportError, match="passband\\[vllm\\]"):
            make_rollout_backend(tiny.model(tok), tok, config.replace(rollout_backend="vllm"))


def test_the_correction_helpers_moved_to_tis_and_the_old_path_warns():
    import passband.trainer.rollout_vllm as rollout_vllm

    for name in ("tis_weights", "tis_correct", "logprob_mismatch", "rollout_logprobs_tensor"):
        with pytest.warns(DeprecationWarning, match="passband.trainer.tis"):
            assert getattr(rollout_vllm, name) is globals()[name]
