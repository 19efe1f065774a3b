"""HFRollout: batching with left padding, stop strings, EOS, chat templates, policy versions."""

from __future__ import annotations

import pytest
import torch

from passband.trainer.rollout import HFRollout, RolloutBackend

PROMPTS = ["1+1=", "123*45=", "a", "hello there 99"]


def _sharp_model(tiny, tokenizer, seed=1, scale=5.0):
    """A random tiny model with large weights, so greedy outputs differ between prompts."""
    model = tiny.model(tokenizer, seed=seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.mul_(scale)
    return model


def test_left_padded_batch_gives_the_same_greedy_output_as_one_by_one(tiny, tokenizer):
    model = _sharp_model(tiny, tokenizer)
    backend = HFRollout(model, tokenizer, max_new_tokens=12, temperature=0, batch_size=8)
    batched = backend.rollout(PROMPTS, 1)
    single = [backend.rollout([p], 1) for p in PROMPTS]
    assert batched.completion_ids == [s.completion_ids[0] for s in single]
    assert batched.texts == [s.texts[0] for s in single]
    assert len({tuple(c) for c in batched.completion_ids}) > 2, "outputs should differ by prompt"
    assert isinstance(backend, RolloutBackend)


def test_stops_at_a_stop_string_and_keeps_it(tiny, tokenizer):
    model = tiny.model(tokenizer, seed=2)
    free = HFRollout(model, tokenizer, max_new_tokens=16, temperature=1.0)
    torch.manual_seed(0)
    reference = free.rollout(["7*8="], 3)
    text = max(reference.texts, key=len)
    assert len(text) >= 6
    stop = text[3:5]
    stopped = HFRollout(model, tokenizer, max_new_tokens=16, temperature=1.0, stop=[stop])
    torch.manual_seed(0)
    got = stopped.rollout(["7*8="], 3)
    for ref_text, out_text, trunc in zip(reference.texts, got.texts, got.truncated):
        if stop in ref_text:
            assert out_text == ref_text[: ref_text.index(stop) + len(stop)]
            assert not trunc
        else:
            assert out_text == ref_text
    assert got.texts[reference.texts.index(text)] == text[: text.index(stop) + 2]  # was >= 6 chars


def test_eos_from_the_generation_config_ends_a_completion(tiny, tokenizer):
    model = _sharp_model(tiny, tokenizer, seed=0)
    free = HFRollout(model, tokenizer, max_new_tokens=8, temperature=0).rollout(
        ["hello there 99"], 1
    )
    assert free.truncated == [True]
    first = free.completion_ids[0][0]
    model.generation_config.eos_token_id = [tokenizer.eos_token_id, first]  # chat models have two
    ended = HFRollout(model, tokenizer, max_new_tokens=8, temperature=0).rollout(
        ["hello there 99"], 1
    )
    assert ended.completion_ids == [[first]] and ended.truncated == [False]


def test_truncation_flag_and_group_layout(tiny, tokenizer):
    backend = HFRollout(
        tiny.model(tokenizer),
        tokenizer,
        max_new_tokens=3,
        temperature=1.0,
        top_p=0.9,
        top_k=10,
        batch_size=4,
    )
    out = backend.rollout(["ab", "cd"], 3)
    assert len(out) == 6 and out.group_size == 3
    assert (
        out.prompt_tokens[:3] == [out.prompt_tokens[0]] * 3
        and out.prompt_tokens[3] != out.prompt_tokens[0]
    )
    for ids, trunc in zip(out.completion_ids, out.truncated):
        assert trunc == (len(ids) == 3 and tokenizer.eos_token_id not in ids)
    assert [len(g) for g in backend.generate(["ab", "cd"], 3)] == [3, 3]


def test_rollouts_carry_the_policy_version(tiny, tokenizer):
    model = tiny.model(tokenizer)
    backend = HFRollout(model, tokenizer, max_new_tokens=2)
    assert backend.rollout(["a"], 2).policy_version == 0
    backend.sync(model, 5)
    assert backend.rollout(["a"], 2).policy_version == 5


def test_chat_messages_use_the_chat_template(tiny, tokenizer):
    backend = HFRollout(tiny.model(tokenizer), tokenizer, max_new_tokens=2)
    messages = [{"role": "user", "content": "2+2"}]
    with pytest.raises(ValueError, match="chat template"):
        backend.encode_prompt(messages)
    tokenizer.chat_template = (
        "{% for m in messages %}{{ m['role'][0] }}:{{ m['content'] }}\n"
        "{% endfor %}{% if add_generation_prompt %}a:{% endif %}"
    )
    assert backend.encode_prompt(messages) == tokenizer("u:2+2\na:")["input_ids"]
    assert len(backend.rollout([messages], 2)) == 2


def test_a_prompts_samples_depend_on_its_seed_alone(tiny, tokenizer):
    """Whatever shares the batch, however it is cut into generate calls, and whatever the global
    RNG holds: the same seed gives the same tokens, another seed other tokens."""
    model = tiny.model(tokenizer)
    wide = HFRollout(model, tokenizer, max_new_tokens=6, temperature=1.0, batch_size=64)
    narrow = HFRollout(model, tokenizer, max_new_tokens=6, temperature=1.0, batch_size=3)
    torch.manual_seed(0)
    together = wide.rollout(PROMPTS, 4, seeds=[1, 2, 3, 4]).completion_ids
    torch.manual_seed(1)
    alone = narrow.rollout(PROMPTS[2:3], 4, seeds=[3]).completion_ids
    assert together[8:12] == alone
    assert wide.rollout(PROMPTS[2:3], 4, seeds=[5]).completion_ids != alone
    assert len({tuple(c) for c in together}) > 8, "the samples of a group differ"
    state = torch.random.get_rng_state()
    wide.rollout(PROMPTS, 2, seeds=[1, 2, 3, 4])
    assert torch.equal(state, torch.random.get_rng_state()), (
        "seeded rollouts leave torch's RNG alone"
    )


def test_seeded_sampling_draws_from_the_models_distribution(tiny, tokenizer):
    """The first token's frequencies over many seeds match softmax(logits / T) (chi-square-ish)."""
    model = tiny.model(tokenizer)
    backend = HFRollout(model, tokenizer, max_new_tokens=1, temperature=0.7, batch_size=512)
    out = backend.rollout(["1+1="], 4000, seeds=[9])
    ids = backend.encode_prompt("1+1=")
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([ids])).logits[0, -1] / 0.7, -1)  # [V]
    counts = (
        torch.bincount(
            torch.tensor([c[0] for c in out.completion_ids]), minlength=probs.numel()
        ).double()
        / 4000
    )
    assert (counts - probs.double()).abs().max() < 0.03
    assert (counts > 0).sum() > 5


def test_n_may_differ_per_prompt(tiny, tokenizer):
    backend = HFRollout(tiny.model(tokenizer), tokenizer, max_new_tokens=3, batch_size=4)
    out = backend.rollout(["ab", "cd", "ef"], [1, 3, 2], seeds=[1, 2, 3])
    assert len(out) == 6 and out.group_sizes() == [1, 3, 2]
    assert out.prompt_tokens[1:4] == [backend.encode_prompt("cd")] * 3
    assert [len(g) for g in backend.generate(["ab", "cd"], 2)] == [2, 2]
    with pytest.raises(ValueError, match="one per prompt"):
        backend.rollout(["ab"], [1, 2])
