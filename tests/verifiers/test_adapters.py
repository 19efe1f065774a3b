"""TRL and verl adapters, including one real TRL GRPOTrainer step on a tiny model built in memory."""

import pickle

import pytest

from passband.verifiers import Reward, as_trl_reward, as_verl_compute_score, overlong, tag_format


def _reward():
    return Reward(
        {"correct": "exact", "format": (tag_format("answer"), 0.5)},
        penalties=[overlong(40, 10)],
        fields={"answer": "solution"},
    )


def test_trl_adapter_plain_and_conversational_completions():
    fn = as_trl_reward(_reward())
    assert fn.__name__ == "passband_reward"
    prompts = ["q1", "q2", "q3"]
    completions = ["42", [{"role": "assistant", "content": "<answer>7</answer>"}], "x" * 45]
    logged = {}
    scores = fn(
        prompts,
        completions,
        solution=["42", "8", "x"],
        completion_ids=[[1], [1, 2], list(range(45))],
        log_metric=logged.__setitem__,
        trainer_state=object(),
    )
    assert scores[0] == pytest.approx(1.0)  # exact, no format bonus
    assert scores[1] == pytest.approx(0.5)  # wrong answer, format ok
    assert scores[2] == pytest.approx(-1.0)  # 45 tokens > max 40
    assert logged["passband_reward/overlong"] == pytest.approx(-1 / 3)
    assert logged["passband_reward/pass_rate"] == pytest.approx(1 / 3)
    assert pickle.loads(pickle.dumps(fn))(["q"], ["42"], solution=["42"]) == [1.0]


def test_trl_adapter_returns_none_for_unscorable_items():
    fn = as_trl_reward("json_schema", timeout=10)
    scores = fn(["q", "q"], ['{"a": 1}', '{"a": 1}'], schema=['{"type": "object"}', "{not json"])
    assert scores == [1.0, None]


def test_verl_adapter_signature_and_dict():
    compute_score = as_verl_compute_score(_reward(), ground_truth_field="solution")
    out = compute_score("gsm8k", "<answer>3</answer>", "3", extra_info={"split": "train"})
    assert out["score"] == pytest.approx(0.5) and out["acc"] == 0.0 and out["checkable"] == 1.0
    assert set(out) >= {"correct", "format", "overlong"}
    plain = as_verl_compute_score("exact")
    assert plain("src", "3", "3")["acc"] == 1.0
    assert plain("src", "3", "4")["score"] == 0.0


def _tiny_model_and_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    chars = list("abcdefghijklmnopqrstuvwxyz0123456789<>/ ?+=")
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, **{c: i + 3 for i, c in enumerate(chars)}}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=1,
    )
    return LlamaForCausalLM(config), tokenizer


@pytest.mark.slow  # ~15 s: imports trl/transformers and runs generation + one optimizer step
def test_one_real_trl_grpo_step(tmp_path):
    torch = pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    from datasets import Dataset

    torch.manual_seed(0)
    model, tokenizer = _tiny_model_and_tokenizer()
    dataset = Dataset.from_dict(
        {"prompt": ["1+1=", "2+2=", "3+3=", "4+4="], "solution": ["2", "4", "6", "8"]}
    )
    calls = []

    class Spy:  # records what TRL hands the adapter, then delegates to it
        def __init__(self, inner):
            self.inner, self.__name__ = inner, inner.__name__

        def __call__(self, prompts, completions, **kwargs):
            out = self.inner(prompts, completions, **kwargs)
            calls.append((list(prompts), list(completions), kwargs.get("solution"), out))
            return out

    reward_fn = Spy(
        as_trl_reward(
            Reward({"correct": "exact"}, penalties=[overlong(6, 4)], fields={"answer": "solution"})
        )
    )
    args = trl.GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=6,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        temperature=1.0,
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[reward_fn],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    assert trainer.state.global_step == 1
    prompts, completions, solutions, rewards = calls[0]
    assert len(completions) == 4 and all(isinstance(c, str) for c in completions)
    assert solutions is not None and len(solutions) == 4
    assert all(r is not None for r in rewards)
    logs = {k for entry in trainer.state.log_history for k in entry}
    assert "passband_reward/overlong" in logs and "passband_reward/pass_rate" in logs
    changed = any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))
    rewards_vary = len(set(rewards)) > 1
    assert changed or not rewards_vary  # GRPO only moves weights when rewards differ in a group


def test_a_length_comes_from_the_completion_never_from_its_row():
    # a review: a dataset column or verl extra_info named num_tokens was believed, so a 45-token
    # completion with num_tokens=5 in its row escaped the overlong penalty
    trl = as_trl_reward(_reward())
    assert trl(["q"], ["x" * 45], solution=["x"], num_tokens=[5]) == [pytest.approx(-1.0)]
    verl = as_verl_compute_score(_reward(), ground_truth_field="solution")
    assert verl("src", "x" * 45, "x", extra_info={"num_tokens": 5})["score"] == pytest.approx(-1.0)
