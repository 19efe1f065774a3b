"""The GRPO loop on a real tiny model: filtering, refills, masking, stale policies, micro-batches,
run directory and checkpoints. Rewards here are plain callables keyed by a dataset column."""

from __future__ import annotations

import json
import math
import time

import pytest
import torch

from passband.trainer import GRPOConfig, GRPOTrainer, RolloutBackend, StalePolicyError
from passband.trainer._metrics import STEP_KEYS
from passband.trainer._refill import rollout_room
from passband.verifiers import Verdict

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")


def _make_reward():
    """A closure, so it cannot be pickled and runs in this process: the worker would otherwise
    spend the (tiny) test timeout importing this torch-heavy test module."""

    def reward(completion, kind, **row):
        if kind == "const":  # every answer scores the same: a zero-variance group
            return 1.0
        if kind == "err":  # the verifier breaks: must be masked, not scored 0
            raise ValueError("broken reference")
        if kind == "slow":  # the verifier hangs past verifier_timeout
            time.sleep(1.0)
            return 1.0
        return float(len(set(completion)))  # varies between samples

    return reward


reward = _make_reward()


def _rows(*kinds):
    return [{"prompt": f"{i}{k[0]}=", "kind": k} for i, k in enumerate(kinds)]


def _trainer(tiny, tokenizer, tmp_path, rows, **overrides):
    settings = dict(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=5,
        learning_rate=1e-2,
        beta=0.0,
        pretrained=False,
        max_steps=2,
        output_dir=str(tmp_path / "run"),
        use_curriculum=False,
        progress=False,
        verifier_timeout=0.3,
        seed=0,
    )
    settings.update(overrides)
    return GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, reward, GRPOConfig(**settings))


def _params(model):
    return [p.detach().clone() for p in model.parameters()]


def _same(a, b, atol=0.0):
    return all(torch.allclose(x, y, atol=atol, rtol=0) for x, y in zip(a, b))


def test_zero_variance_groups_hit_the_refill_bound_and_get_no_kl_gradient(
    tiny, tokenizer, tmp_path, capsys
):
    t = _trainer(
        tiny, tokenizer, tmp_path, _rows("const", "const", "const"), beta=0.01, max_refill_rounds=2
    )
    before = _params(t.model)
    m = t.train_step()
    # 2 prompts, then one top-up with what is left of the step's roll-out budget (3 prompts)
    room = rollout_room(0, 2, t.config.max_oversample)
    assert (m["groups/rolled"], m["groups/refill_rounds"], m["groups/effective"]) == (room, 1, 0)
    assert m["generate/calls"] == 2
    assert m["groups/zero_variance_share"] == 1.0 and m["groups/dropped"] == room
    assert m["loss"] is None and t.policy_version == 0 and m["reward/mean"] == 1.0
    assert _same(before, _params(t.model)), "dropped groups must not move the weights (KL included)"
    out = capsys.readouterr().out
    assert "0/2 groups have reward variance after 1 refill round(s); skipping" in out
    assert f"a step rolls out at most {room} prompts" in out


def test_only_groups_with_variance_are_trained_and_a_short_batch_is_announced(
    tiny, tokenizer, tmp_path, capsys
):
    t = _trainer(
        tiny,
        tokenizer,
        tmp_path,
        _rows("vary", "const", "const", "const"),
        prompts_per_step=4,
        max_refill_rounds=0,
    )
    t._begin()
    m = t.train_step()
    lines = [json.loads(x) for x in (tmp_path / "run" / "groups.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and m["groups/rolled"] == 4
    for line in lines:
        rewards = line["rewards"]
        assert line["kept"] == (max(rewards) > min(rewards))
    kept = [line for line in lines if line["kept"]]
    assert m["groups/effective"] == len(kept) == 1 and t.policy_version == 1
    assert sum(line["grad_share"] for line in kept) == pytest.approx(1.0)
    out = capsys.readouterr().out
    assert "1/4 groups have reward variance after 0 refill round(s); training on the smaller" in out
    # without refills the step rolled out exactly prompts_per_step: the note said "at most 5"
    assert "no refills: a step rolls out exactly 4 prompts; raise max_refill_rounds" in out
    assert "at most" not in out


def test_a_reward_that_fails_on_every_first_answer_stops_training(tiny, tokenizer, tmp_path):
    """Broken wiring (a verifier that raises on every answer) used to run every step with
    "0/2 groups have reward variance"; it stops at the first rollout and shows the error."""
    from passband.errors import UsageError

    t = _trainer(tiny, tokenizer, tmp_path, _rows("err", "err"), max_refill_rounds=0)
    t._begin()
    with pytest.raises(UsageError, match=r"failed on all 8 answers .*broken reference"):
        t.train_step()


def test_error_and_timeout_verdicts_are_masked_and_counted(tiny, tokenizer, tmp_path):
    rows = _rows("err", "slow", "mix")
    t = _trainer(tiny, tokenizer, tmp_path, rows, max_refill_rounds=0, prompts_per_step=3)
    t._begin()
    m = t.train_step()
    assert m["verifier/error_rate"] == pytest.approx(1 / 3)
    assert m["verifier/timeout_rate"] == pytest.approx(1 / 3)
    assert m["completions/masked"] == 8 and m["reward/mean"] is not None
    lines = [json.loads(x) for x in (tmp_path / "run" / "groups.jsonl").read_text().splitlines()]
    masked = [line for line in lines if rows[line["prompt_id"]]["kind"] != "mix"]
    assert len(masked) == 2
    assert all(line["rewards"] == [None] * 4 and not line["kept"] for line in masked)


def test_a_reward_that_times_out_on_every_first_answer_stops_training(tiny, tokenizer, tmp_path):
    """It ran every step fully masked, paying a round of timeouts each time."""
    from passband.errors import UsageError

    t = _trainer(tiny, tokenizer, tmp_path, _rows("slow", "slow"), max_refill_rounds=0)
    t._begin()
    with pytest.raises(
        UsageError, match=r"timed out \(or failed\) on all 8 answers.*verifier_timeout"
    ):
        t.train_step()


def test_masked_completions_have_no_influence_on_the_update(tiny, tokenizer, tmp_path):
    rows = _rows("vary", "vary")
    a = _trainer(tiny, tokenizer, tmp_path / "a", rows)
    b = _trainer(tiny, tokenizer, tmp_path / "b", rows)
    groups = a._rollout_groups([0, 1])
    g = groups[0]
    g.verdicts = [
        Verdict.error("boom"),
        Verdict.ok(score=1.0),
        Verdict.wrong(),
        Verdict.ok(score=0.5),
    ]
    other = [type(g)(**{**x.__dict__}) for x in groups]
    other[0].completions = [[5, 6, 7, 8, 9]] + g.completions[1:]  # different masked tokens
    other[0].verdicts = [Verdict.timeout("slow")] + g.verdicts[1:]
    assert (
        g.zero_variance is False
        and type(g)(
            **{
                **g.__dict__,
                "verdicts": [Verdict.ok(), Verdict.error(), Verdict.ok(), Verdict.ok()],
            }
        ).zero_variance
    )  # not zeros
    a._update(groups)
    b._update(other)
    assert _same(_params(a.model), _params(b.model), atol=1e-7)
    assert not _same(_params(a.model), _params(tiny.model(tokenizer)), atol=1e-7)


def test_stale_rollouts_are_refused(tiny, tokenizer, tmp_path):
    t = _trainer(tiny, tokenizer, tmp_path, _rows("vary", "vary"))
    groups = t._rollout_groups([0, 1])
    t._update(groups)  # version 0 -> 1
    assert t.policy_version == 1 and t._rollout_groups([0])[0].policy_version == 1
    with pytest.raises(StalePolicyError, match="version"):
        t._update(groups)


def test_grad_accum_changes_memory_not_math(tiny, tokenizer, tmp_path):
    rows = _rows("vary", "vary", "vary")
    kw = dict(prompts_per_step=3, beta=0.01, mu=2, loss_aggregation="seq_mean_token_mean")
    one = _trainer(tiny, tokenizer, tmp_path / "one", rows, grad_accum=1, **kw)
    three = _trainer(tiny, tokenizer, tmp_path / "three", rows, grad_accum=3, **kw)
    for t in (one, three):  # Adam turns float noise into lr-sized steps; SGD shows the gradient
        t.optimizer = torch.optim.SGD(t.model.parameters(), lr=1.0)
        t.scheduler = torch.optim.lr_scheduler.LambdaLR(t.optimizer, lambda step: 1.0)
    groups = one._rollout_groups([0, 1, 2])
    s1, s3 = one._update(groups), three._update(groups)
    assert _same(_params(one.model), _params(three.model), atol=1e-6)
    assert s1["kl"] == pytest.approx(s3["kl"], abs=1e-7) and s1["kl"] >= 0
    assert s1["loss"] == pytest.approx(s3["loss"], abs=1e-6)


def test_left_padded_training_forward_matches_each_sequence_alone(tiny, tokenizer, tmp_path):
    t = _trainer(tiny, tokenizer, tmp_path, _rows("vary"))
    seqs = [([4, 5, 6, 7, 8, 9], [10, 11, 12], True), ([4], [13, 14, 15, 16, 17], True)]
    adv = torch.zeros(2)
    both, _ = t._logprobs(t.model, t._collate(seqs, adv))
    for i, s in enumerate(seqs):
        alone, _ = t._logprobs(t.model, t._collate([s], adv[:1]))
        n = len(s[1])
        assert torch.allclose(both[i, :n], alone[0, :n], atol=1e-5)


def test_truncated_completions_can_be_masked(tiny, tokenizer, tmp_path):
    t = _trainer(
        tiny, tokenizer, tmp_path, _rows("vary", "vary"), max_new_tokens=2, mask_truncated=True
    )
    t.backend.eos_ids = set()  # no sample may end early: every completion runs into the cap
    groups = t._rollout_groups([0, 1])
    assert all(all(g.truncated) for g in groups)
    before = _params(t.model)
    stats = t._update(groups)
    assert stats["loss"] == 0.0 and _same(before, _params(t.model))


def test_reference_model_only_when_beta_is_positive(tiny, tokenizer, tmp_path):
    assert _trainer(tiny, tokenizer, tmp_path, _rows("vary")).reference is None
    ref = _trainer(tiny, tokenizer, tmp_path, _rows("vary"), beta=0.001).reference
    assert ref is not None and not any(p.requires_grad for p in ref.parameters())


def test_inputs_are_checked_before_training(tiny, tokenizer, tmp_path):
    model, cfg = (
        tiny.model(tokenizer),
        GRPOConfig(output_dir=str(tmp_path), pretrained=False, max_new_tokens=16),
    )
    with pytest.raises(ValueError, match="'prompt' column.*question"):
        GRPOTrainer(model, tokenizer, [{"question": "q", "answer": "1"}], "math", cfg)
    with pytest.raises(KeyError, match="unknown verifier"):
        GRPOTrainer(model, tokenizer, [{"prompt": "q"}], "maths", cfg)
    with pytest.raises(ValueError, match="solution"):
        GRPOTrainer(
            model,
            tokenizer,
            [{"prompt": "q"}],
            "math",
            cfg,
            reference_columns={"answer": "solution"},
        )
    with pytest.raises(ValueError, match="tokenizer is required"):
        GRPOTrainer(model, None, [{"prompt": "q"}], "math", cfg)


def test_full_run_writes_the_run_directory(tiny, tokenizer, tmp_path):
    from datasets import Dataset

    rows = Dataset.from_list(_rows("vary", "const", "vary", "vary"))
    t = GRPOTrainer(
        tiny.model(tokenizer),
        tokenizer,
        rows,
        reward,
        GRPOConfig(
            group_size=4,
            prompts_per_step=2,
            max_new_tokens=4,
            learning_rate=1e-3,
            beta=0.0,
            pretrained=False,
            max_steps=3,
            checkpoint_every=1,
            keep_checkpoints=2,
            output_dir=str(tmp_path / "run"),
            progress=True,
            verifier_timeout=5.0,
        ),
    )
    last = t.train()
    run = tmp_path / "run"
    metrics = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3] and last == metrics[-1]
    for m in metrics:
        assert set(STEP_KEYS) <= set(m) and isinstance(m["alerts"], list)
        assert any(k.startswith("curriculum/") for k in m)
    observed = sum(m["groups/rolled"] for m in metrics)
    assert metrics[-1]["curriculum/groups_observed"] == observed  # observe() after every group
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["step_2", "step_3"]
    state = json.loads((run / "checkpoints" / "step_3" / "state.json").read_text())
    assert state["step"] == 3 and "sampler" in state
    cur = json.loads((run / "curriculum.json").read_text())
    assert cur["band"] == [0.2, 0.8] and len(cur["estimates"]) == 4
    assert json.loads((run / "config.json").read_text())["group_size"] == 4
    with pytest.raises(FileExistsError, match="resume"):
        GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, reward, t.config).train()


def test_lora_policy_uses_its_base_as_reference_and_resumes_its_adapters(tiny, tokenizer, tmp_path):
    pytest.importorskip("peft", reason="peft is not installed (extra `.[lora]`)")
    from passband.trainer.lora import LoraSettings, apply_lora

    def policy():
        torch.manual_seed(0)
        return apply_lora(tiny.model(tokenizer), LoraSettings(r=4))

    rows = _rows("vary", "vary", "vary")
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=4,
        learning_rate=0.05,
        pretrained=False,
        beta=0.01,
        max_steps=2,
        checkpoint_every=1,
        use_curriculum=False,
        output_dir=str(tmp_path / "run"),
        progress=False,
    )
    first = GRPOTrainer(policy(), tokenizer, rows, reward, config)
    assert first.reference is None and first.lora
    last = first.train()
    assert last["kl"] is not None and last["kl"] > 0
    trained = {n: p.detach().clone() for n, p in first.model.named_parameters() if p.requires_grad}
    again = GRPOTrainer(policy(), tokenizer, rows, reward, config.replace(resume=True, max_steps=3))
    again._begin()
    named = dict(again.model.named_parameters())
    assert again.step == 2 and all(torch.equal(named[n], v) for n, v in trained.items())


def test_resume_on_other_or_reordered_prompts_is_refused(tiny, tokenizer, tmp_path):
    """The curriculum's state is by row position: a resume on the same rows reversed used to be
    accepted, giving every prompt another's history, and more rows crashed in the sampler."""
    from passband.errors import ConfigError

    rows = _rows("mix", "mix", "mix", "const")
    t = _trainer(tiny, tokenizer, tmp_path, rows, max_steps=1, checkpoint_every=1)
    t.train()

    def resume(data):
        again = _trainer(tiny, tokenizer, tmp_path, data, max_steps=2, resume=True)
        again._begin()
        return again

    with pytest.raises(ConfigError, match="the same 4 rows, but their prompts or their order"):
        resume(rows[::-1])
    with pytest.raises(ConfigError, match="4 rows then, 5 now"):
        resume(rows + _rows("mix"))
    assert resume([dict(r) for r in rows]).step == 1  # the same prompts: resumed


def test_a_resume_with_another_reward_or_other_references_says_so(
    tiny, tokenizer, tmp_path, capsys
):
    """Both were taken in silence: the pass rate fell from 0.85 to 0 with nothing said."""
    rows = _rows("mix", "mix", "mix", "const")
    _trainer(tiny, tokenizer, tmp_path, rows, max_steps=1, checkpoint_every=1).train()
    capsys.readouterr()

    def resume(data, score=reward):
        again = _trainer(tiny, tokenizer, tmp_path, data, max_steps=2, resume=True)
        again.scorer.reward = score
        again._begin()
        return [x for x in capsys.readouterr().out.splitlines() if "resume: " in x]

    assert not [x for x in resume([dict(r) for r in rows]) if "reward" in x or "columns" in x]
    other = [{**r, "note": "new"} for r in rows]  # the same prompts, another reference column
    assert any("other columns changed" in x for x in resume(other))

    def stricter(completion, kind, **row):
        return 0.0

    lines = resume(rows, stricter)
    said = [x for x in lines if "applied reward" in x]
    assert len(said) == 1 and "stricter' (checkpoint '_make_reward.<locals>.reward')" in said[0]


def test_a_changed_curriculum_field_on_resume_is_named_alone(tiny, tokenizer, tmp_path, capsys):
    """One changed ``[curriculum]`` field printed both 29-key tables on one line, and then again
    as a warning: the resume names the field, its two values, and nothing else."""
    import warnings

    rows = _rows("mix", "mix", "mix", "const")
    common = dict(use_curriculum=True, checkpoint_every=1)
    t = _trainer(tiny, tokenizer, tmp_path, rows, max_steps=1, **common)
    t.train()
    capsys.readouterr()
    again = _trainer(
        tiny, tokenizer, tmp_path, rows, max_steps=2, resume=True,
        curriculum={"prior_weight": 0.2, "easy_weight": 0.3}, **common,
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again._begin()
    out = capsys.readouterr().out
    lines = [x for x in out.splitlines() if "resume: applied" in x or "resume: ignored" in x]
    assert lines == [
        "passband: resume: applied trainer.curriculum.easy_weight = 0.3 (checkpoint 0.1)",
        # it was said "applied", but the priors were weighed at the start: nothing changed
        "passband: resume: ignored trainer.curriculum.prior_weight = 0.2 (checkpoint 0.5): the "
        "priors were weighed when the run started; the curriculum's saved state carries them",
        "passband: resume: applied trainer.max_steps = 2 (checkpoint 1)",
    ]
    assert not [w for w in caught if "changed settings" in str(w.message)], caught


def test_a_users_own_curriculum_still_warns_of_changed_settings_on_resume(
    tiny, tokenizer, tmp_path
):
    """The trainer names the changes of a curriculum it built; one passed as ``sampler=`` is the
    user's, and its own warning is all that names them."""
    from passband.curriculum import Curriculum

    rows = _rows("mix", "mix", "mix", "const")

    def trainer(weight, **kw):
        sampler = Curriculum(range(len(rows)), seed=0, prior_weight=weight)
        return GRPOTrainer(
            tiny.model(tokenizer), tokenizer, rows, reward,
            GRPOConfig(
                group_size=4, prompts_per_step=2, max_new_tokens=5, beta=0.0, pretrained=False,
                output_dir=str(tmp_path / "run"), progress=False, seed=0, checkpoint_every=1, **kw,
            ),
            sampler=sampler,
        )  # fmt: skip

    trainer(0.5, max_steps=1).train()
    again = trainer(0.2, max_steps=2, resume=True)
    with pytest.warns(UserWarning, match="resuming curriculum with changed settings"):
        again._begin()


def test_resume_cuts_metrics_back_to_the_checkpoint_even_after_a_torn_write(tmp_path):
    from passband.trainer._metrics import MetricsWriter

    writer = MetricsWriter(tmp_path)
    for step in (1, 2, 3):
        writer.log_step({"step": step, "loss": 0.5}, [{"step": step, "prompt_id": 0}])
    with writer.metrics_path.open("a") as f:
        f.write('{"step": 4, "lo')  # killed mid-line
    writer.truncate_after(2)
    assert [json.loads(x)["step"] for x in writer.metrics_path.read_text().splitlines()] == [1, 2]
    assert [json.loads(x)["step"] for x in writer.groups_path.read_text().splitlines()] == [1, 2]


def test_warmup_then_cosine_schedule():
    factor = GRPOConfig(warmup_steps=2, lr_schedule="cosine", max_steps=6).lr_factor
    assert [round(factor(s), 6) for s in range(7)] == [
        0.5,
        1.0,
        1.0,
        round(0.5 * (1 + 2**-0.5), 6),
        0.5,
        round(0.5 * (1 - 2**-0.5), 6),
        0.0,
    ]
    assert GRPOConfig(max_steps=6).lr_factor(5) == 1.0


def test_tensorboard_is_optional(tmp_path):
    import importlib.util

    from passband.trainer._metrics import MetricsWriter

    if importlib.util.find_spec("tensorboard") is None:
        with pytest.warns(UserWarning, match="tensorboard package is not installed"):
            writer = MetricsWriter(tmp_path, tensorboard=True)
    else:
        writer = MetricsWriter(tmp_path, tensorboard=True)
    writer.log_step({"step": 1, "loss": 0.25, "kl": None, "alerts": []}, [])
    writer.close()
    assert json.loads(writer.metrics_path.read_text())["loss"] == 0.25
    assert (tmp_path / "tensorboard").is_dir() == (
        importlib.util.find_spec("tensorboard") is not None
    )


def test_gradient_checkpointing_gives_the_same_update(tiny, tokenizer, tmp_path):
    rows = _rows("vary", "vary")
    plain = _trainer(tiny, tokenizer, tmp_path / "plain", rows)
    ckpt = _trainer(tiny, tokenizer, tmp_path / "ckpt", rows, gradient_checkpointing=True)
    assert ckpt.model.is_gradient_checkpointing and not plain.model.is_gradient_checkpointing
    for t in (plain, ckpt):
        t.optimizer = torch.optim.SGD(t.model.parameters(), lr=1.0)
    groups = plain._rollout_groups([0, 1])
    plain._update(groups)
    ckpt._update(groups)
    assert _same(_params(plain.model), _params(ckpt.model), atol=1e-6)


class _OffsetSampler(RolloutBackend):
    """Hugging Face generate, reporting each token's log-prob ``shift`` nats below the trainer's.

    Stands in for an engine whose numbers differ from the trainer's (vLLM's do, slightly), so the
    truncated importance-sampling path runs without vllm; the engine itself is tested with a real
    vLLM in test_vllm_backend.py.
    """

    def __init__(self, model, tokenizer, shift, temperature):
        from passband.trainer import HFRollout

        self.hf = HFRollout(model, tokenizer, max_new_tokens=5, temperature=temperature)
        self.model, self.shift, self.temperature = model, shift, temperature
        self.pad_id = self.hf.pad_id

    @property
    def policy_version(self):
        return self.hf.policy_version

    def rollout(self, prompts, n, seeds=None):
        out = self.hf.rollout(prompts, n, seeds)
        logprobs = []
        with torch.no_grad():
            for p, c in zip(out.prompt_tokens, out.completion_ids):
                logits = self.model(torch.tensor([p + c])).logits[0, len(p) - 1 : -1]  # [C, V]
                lp = (logits / self.temperature).log_softmax(-1)
                logprobs.append(
                    (lp.gather(-1, torch.tensor(c)[:, None])[:, 0] - self.shift).tolist()
                )
        out.logprobs = logprobs
        return out

    def sync(self, model, policy_version):
        self.hf.sync(model, policy_version)


def test_sampler_logprobs_drive_tis_and_the_mismatch_metrics(tiny, tokenizer, tmp_path):
    """Every sampled token is 0.5 nats less likely to the sampler: the TIS weight is e^0.5 (or the
    cap), it scales the whole gradient, and the rollout/* metrics show the gap."""
    rows = _rows("vary", "vary", "vary")

    def step(tis_cap):
        model = tiny.model(tokenizer)
        config = GRPOConfig(
            group_size=4,
            prompts_per_step=2,
            max_new_tokens=5,
            temperature=1.0,
            learning_rate=1e-2,
            beta=0.0,
            pretrained=False,
            max_steps=1,
            use_curriculum=False,
            filter_zero_variance=False,
            tis_cap=tis_cap,
            output_dir=str(tmp_path / f"cap{tis_cap}"),
            progress=False,
        )
        backend = _OffsetSampler(model, tokenizer, 0.5, config.temperature)
        last = GRPOTrainer(model, tokenizer, rows, reward, config, rollout_backend=backend).train()
        logged = json.loads((tmp_path / f"cap{tis_cap}" / "metrics.jsonl").read_text())
        assert logged["rollout/logp_diff_mean"] == last["rollout/logp_diff_mean"]
        return last

    off, on, capped = step(0.0), step(2.0), step(1.2)
    for m in (off, on, capped):  # measured with or without the correction
        assert m["rollout/logp_diff_mean"] == pytest.approx(0.5, abs=1e-4)
        assert m["rollout/logp_diff_max"] == pytest.approx(0.5, abs=1e-4)
    assert off["rollout/tis_capped"] == 0.0 and on["rollout/tis_capped"] == 0.0
    assert capped["rollout/tis_capped"] == 1.0
    assert on["grad_norm"] / off["grad_norm"] == pytest.approx(math.exp(0.5), rel=1e-3)
    assert capped["grad_norm"] / off["grad_norm"] == pytest.approx(1.2, rel=1e-3)


def test_hf_runs_log_no_sampler_mismatch(tiny, tokenizer, tmp_path):
    m = _trainer(tiny, tokenizer, tmp_path, _rows("vary", "vary"), max_steps=1).train()
    assert m["loss"] is not None and not any(k.startswith("rollout/") for k in m)


def test_more_prompts_per_step_than_the_data_holds_is_said_at_start(
    tiny, tokenizer, tmp_path, capsys
):
    """24 rows at 64 prompts a step rolled each prompt out as up to 4 groups, with nothing said."""
    _trainer(tiny, tokenizer, tmp_path, _rows("mix", "mix", "mix"), prompts_per_step=4)
    out = capsys.readouterr().out
    assert "prompts_per_step = 4 but the data holds 3 prompts" in out and "at most 3" in out
    _trainer(tiny, tokenizer, tmp_path / "b", _rows("mix", "mix", "mix"), prompts_per_step=3)
    assert "but the data holds" not in capsys.readouterr().out


def test_a_resume_that_changes_what_a_checkpoint_holds_is_refused_before_loading(
    tiny, tokenizer, tmp_path
):
    """lora_r on a full fine-tune's run failed to load every checkpoint, each named as damaged;
    a max_steps below the checkpoint's step trained nothing and rewrote config.json."""
    import warnings

    from passband.errors import ConfigError

    rows = _rows("mix", "mix", "mix", "const")
    _trainer(tiny, tokenizer, tmp_path, rows, max_steps=2, checkpoint_every=1).train()
    config = (tmp_path / "run" / "config.json").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "cannot be loaded ... falling back" for a healthy one
        again = _trainer(tiny, tokenizer, tmp_path, rows, max_steps=3, resume=True, lora_r=4)
        with pytest.raises(ConfigError, match=r"changed trainer.lora_r \(checkpoint 0, now 4\)"):
            again._begin()
    again = _trainer(tiny, tokenizer, tmp_path, rows, max_steps=1, resume=True)
    with pytest.raises(ConfigError, match="at step 2, past max_steps = 1; raise max_steps"):
        again._begin()
    assert (tmp_path / "run" / "config.json").read_text() == config
