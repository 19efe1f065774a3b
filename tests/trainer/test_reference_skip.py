"""The KL reference's forward is skipped while the policy's weights are still the ones it was copied
from (the first update of a fresh run), and only then: the run trains exactly as with it."""

from __future__ import annotations

import torch

from passband.trainer import GRPOConfig, GRPOTrainer
from passband.trainer.models import same_weights, weights_stamp


def reward(completion, **row):
    return float(len(set(completion)))  # varies between samples: every group has signal


ROWS = [{"prompt": f"{i}+{i % 3}="} for i in range(8)]


def _trainer(tiny, tokenizer, tmp_path, name="run", model=None, **overrides):
    settings = dict(
        group_size=4,
        prompts_per_step=4,
        max_new_tokens=5,
        learning_rate=1e-3,
        beta=0.01,
        pretrained=False,
        max_steps=3,
        output_dir=str(tmp_path / name),
        use_curriculum=False,
        progress=False,
        seed=0,
    )
    settings.update(overrides)
    model = model if model is not None else tiny.model(tokenizer)
    trainer = GRPOTrainer(model, tokenizer, ROWS, reward, GRPOConfig(**settings))
    calls = []
    run = trainer._reference_logprobs

    def counted(mb):  # the real reference forward, counted per update
        calls.append(trainer.step)
        return run(mb)

    trainer._reference_logprobs = counted
    return trainer, calls


def test_the_first_update_skips_the_reference_forward_and_trains_the_same(
    tiny, tokenizer, tmp_path
):
    skip, skip_calls = _trainer(tiny, tokenizer, tmp_path, "skip")
    full, full_calls = _trainer(tiny, tokenizer, tmp_path, "full")
    full._reference_stamp = None  # the reference forward at every update, as before the skip
    a = [skip.train_step() for _ in range(3)]
    b = [full.train_step() for _ in range(3)]
    assert 0 not in skip_calls and 1 in skip_calls  # step 0 skipped, the next one ran
    assert 0 in full_calls
    assert a[0]["kl"] == 0.0 and abs(b[0]["kl"]) < 1e-7  # equal weights: no divergence yet
    assert a[1]["kl"] > 0 and abs(a[1]["kl"] - b[1]["kl"]) <= 1e-6 * max(1.0, abs(b[1]["kl"]))
    for p, q in zip(skip.model.parameters(), full.model.parameters()):
        assert torch.allclose(p, q, atol=1e-6, rtol=0)


def test_a_resumed_run_runs_the_reference_forward(tiny, tokenizer, tmp_path):
    first, _ = _trainer(tiny, tokenizer, tmp_path, max_steps=1)
    first.train()  # one update, then its checkpoint
    again, calls = _trainer(tiny, tokenizer, tmp_path, max_steps=2, resume=True)
    assert again._reference_unchanged()  # before the checkpoint is loaded
    again.train()
    assert again.step == 2 and calls == [1]  # the loaded weights are not the reference's


def test_a_model_with_dropout_always_runs_the_reference_forward(tiny, tokenizer, tmp_path):
    model = tiny.model(tokenizer)
    model.config.attention_dropout = 0.1  # train mode (policy) and eval mode (reference) differ
    assert weights_stamp(model) is None
    trainer, calls = _trainer(
        tiny, tokenizer, tmp_path, model=model, max_steps=1, disable_dropout=False
    )
    trainer.train_step()
    assert calls == [0]  # kept on request (the default switches dropout off)


def test_any_write_to_the_weights_changes_the_stamp(tiny, tokenizer):
    model = tiny.model(tokenizer)
    stamp = weights_stamp(model)
    assert same_weights(model, stamp) and same_weights(model, weights_stamp(model))
    with torch.no_grad():
        next(model.parameters()).add_(0.0)  # even a write of the same values
    assert not same_weights(model, stamp)
    stamp = weights_stamp(model)
    model.load_state_dict(model.state_dict())  # what a resume does
    assert not same_weights(model, stamp)
    stamp = weights_stamp(model)
    first = next(model.parameters())
    first.data = first.data.clone()  # new storage under the same parameter
    assert not same_weights(model, stamp)
    stamp = weights_stamp(model)
    model.to(torch.float64)  # a cast keeps the parameter objects and their versions
    assert not same_weights(model, stamp)
    assert not same_weights(model, None)


def test_models_that_drop_out_through_their_config_are_never_stamped(tiny, tokenizer):
    """OPT applies ``config.dropout`` (0.1 by default) with a function, not a module; Falcon reads
    ``hidden_dropout``; MoE models add router jitter in train mode only."""
    from transformers import OPTConfig, OPTForCausalLM

    opt = OPTForCausalLM(
        OPTConfig(
            vocab_size=32,
            hidden_size=16,
            num_hidden_layers=1,
            ffn_dim=32,
            num_attention_heads=2,
            max_position_embeddings=32,
            word_embed_proj_dim=16,
        )
    )
    assert opt.config.dropout > 0 and weights_stamp(opt) is None
    opt.config.dropout = opt.config.attention_dropout = opt.config.layerdrop = 0.0
    assert weights_stamp(opt) is not None
    model = tiny.model(tokenizer)
    model.config.router_jitter_noise = 0.01
    assert weights_stamp(model) is None
    assert weights_stamp(torch.nn.Linear(2, 2)) is None  # no config: nothing known of its forward


def _dropping(tiny, tokenizer, p=0.3):
    model = tiny.model(tokenizer)
    model.config.attention_dropout = p
    for module in model.modules():
        if hasattr(module, "attention_dropout"):
            module.attention_dropout = p  # what Qwen2Attention read from its config
    return model


def _train_mode_moves(model, tokenizer) -> bool:
    ids = torch.tensor([tokenizer("1+2=3").input_ids])
    torch.manual_seed(0)
    with torch.no_grad():
        still = model.eval()(ids).logits
        noisy = model.train()(ids).logits
    model.eval()
    return not torch.allclose(still, noisy)


def test_dropout_is_switched_off_so_the_update_scores_what_sampled(tiny, tokenizer, tmp_path):
    """With attention_dropout 0.3 the update ran in train mode against eval-mode samples:
    clip_fraction 0.35 at a learning rate of 0 (a review of the update's arithmetic)."""
    model = _dropping(tiny, tokenizer)
    assert _train_mode_moves(model, tokenizer)  # the noise the update would have seen
    trainer, _ = _trainer(tiny, tokenizer, tmp_path, model=model, mu=2, learning_rate=1e-12)
    assert not _train_mode_moves(trainer.model, tokenizer)
    assert trainer.model.config.attention_dropout == 0.0
    assert trainer._reference_stamp is not None  # nothing may drop now: the skip applies
    assert trainer.train_step()["clip_fraction"] == 0.0
    kept = _dropping(tiny, tokenizer)
    _trainer(tiny, tokenizer, tmp_path, "kept", model=kept, disable_dropout=False)
    assert _train_mode_moves(kept, tokenizer)  # asked to keep it: kept
