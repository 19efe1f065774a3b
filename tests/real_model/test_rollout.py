"""A real BPE tokenizer, chat template and pad = EOS through the rollout (SmolLM2-135M-Instruct)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_pad_is_eos_is_end_of_turn(real_model):
    model, tok = real_model
    assert tok.eos_token == tok.pad_token == "<|im_end|>"
    assert tok.eos_token_id == tok.pad_token_id == model.generation_config.eos_token_id
    assert model.config.vocab_size == 49152


def test_chat_template_applied_and_generation_stops_at_end_of_turn(real_model, helpers):
    from passband.trainer.rollout import HFRollout

    model, tok = real_model
    backend = HFRollout(model, tok, max_new_tokens=32, temperature=0)
    prompts = [
        helpers.chat("What is 2 + 3? Reply with only the number."),
        helpers.chat("What is the capital of France? Answer in one word."),
    ]
    text = tok.decode(backend.encode_prompt(prompts[0]))
    assert text.startswith("<|im_start|>system\n") and "<|im_start|>user\nWhat is 2 + 3?" in text
    assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")  # the generation prompt
    # The same ids TRL's GRPOTrainer feeds for a conversational prompt (no extra BOS, no gap).
    assert (
        backend.encode_prompt(prompts[0])
        == tok.apply_chat_template(
            prompts[0], add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
    )
    out = backend.rollout(prompts, 1)
    for ids, truncated in zip(out.completion_ids, out.truncated):
        assert ids[-1] == tok.eos_token_id and tok.eos_token_id not in ids[:-1]
        assert not truncated
    assert out.texts == ["2 + 3 = 5", "The capital of France is Paris."]
    # Left padding uses the pad token, which is EOS here: the padded row must not change.
    alone = backend.rollout(prompts[:1], 1)
    assert alone.completion_ids[0] == out.completion_ids[0]


def test_sampled_completions_decode_cleanly(real_model, helpers):
    import torch

    from passband.trainer.rollout import HFRollout

    model, tok = real_model
    backend = HFRollout(model, tok, max_new_tokens=24, temperature=1.0)
    torch.manual_seed(0)
    out = backend.rollout([helpers.chat("What is 17 + 25? Reply with only the number.")], 8)
    specials = set(tok.all_special_tokens)
    for ids, text, truncated in zip(out.completion_ids, out.texts, out.truncated):
        assert text == tok.decode(ids, skip_special_tokens=True)
        assert not any(s in text for s in specials)  # no <|im_end|> / <|im_start|> in the text
        assert tok.eos_token_id not in ids[:-1]  # nothing after the end of turn
        assert truncated == (ids[-1] != tok.eos_token_id)
        assert len(ids) == 24 if truncated else len(ids) <= 24
