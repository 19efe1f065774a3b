"""The loop against the declared ``RolloutBackend`` only, driven by the library's ``FakeRollout``:
what it calls, how the first rollout is sized from the curriculum's P(signal), and where a step's
time goes."""

from __future__ import annotations

import json
import math

import pytest

from passband.trainer import FakeRollout, GRPOConfig, GRPOTrainer, RolloutBackend
from passband.trainer._metrics import PHASES
from passband.trainer._refill import draws_for

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")


def _rows(n, answer="yes"):
    return [{"prompt": f"q{i}?", "answer": answer} for i in range(n)]


def _config(tmp_path, **kw):
    settings = dict(
        group_size=4,
        prompts_per_step=4,
        max_new_tokens=8,
        learning_rate=1e-3,
        beta=0.0,
        pretrained=False,
        max_steps=3,
        output_dir=str(tmp_path),
        progress=False,
        verifier_workers=1,
    )
    return GRPOConfig(**{**settings, **kw})


def _trainer(tiny, tokenizer, backend, rows, config, **kw):
    """A trainer on a fresh tiny model, scored by ``exact``, rolling out through ``backend``."""
    return GRPOTrainer(
        tiny.model(tokenizer), tokenizer, rows, "exact", config, rollout_backend=backend, **kw
    )


def test_the_loop_calls_only_what_the_backend_declares(tiny, tokenizer, tmp_path):
    backend = FakeRollout(tokenizer, answers=["yes", "no"])
    t = _trainer(tiny, tokenizer, backend, _rows(8), _config(tmp_path))
    m = t.train()
    assert m["step"] == 3 and t.policy_version >= 1
    # one sync before the first rollout (a fresh run: version 0), then one per update, in order
    assert backend.syncs == list(range(0, t.policy_version + 1))
    assert backend.sleeps == 3 and len(backend.calls) >= 3
    t.close()
    assert not backend.closed, "a backend the caller passed in is the caller's to close"


def test_a_backend_that_does_not_declare_the_interface_is_refused(tiny, tokenizer, tmp_path):
    class Duck:
        def rollout(self, prompts, n, seeds=None): ...

    with pytest.raises(TypeError, match="RolloutBackend"):
        _trainer(tiny, tokenizer, Duck(), _rows(2), _config(tmp_path))
    with pytest.raises(TypeError, match="abstract"):
        type("Half", (RolloutBackend,), {"rollout": lambda self, p, n, s=None: None})()


def test_fake_rollout_is_seeded_per_prompt_and_reports_log_probs(tokenizer):
    backend = FakeRollout(tokenizer, answers=["a", "bb", "ccc"], logprob=-0.5)
    out = backend.rollout(["x", "y"], [3, 2], seeds=[1, 2])
    assert out.group_sizes() == [3, 2] and len(out.texts) == 5
    assert backend.rollout(["y"], 2, seeds=[2]).texts == out.texts[3:]
    assert out.logprobs == [[-0.5] * len(c) for c in out.completion_ids]
    assert all(c[-1] == tokenizer.eos_token_id for c in out.completion_ids)
    assert backend.generate(["x"], 2) and backend.calls[0] == (2, [3, 2])


def test_the_first_rollout_is_sized_from_the_curriculums_signal_chance(tiny, tokenizer, tmp_path):
    """Half the prompts always agree (zero variance). Once the curriculum knows its prompts, a
    step draws enough in one round: one generate call, and more completions than it trains. A
    budget of 2x leaves the draw's size to the predicted chance (the default caps 4 prompts a
    step at 5)."""
    rows = [{"prompt": f"q{i}?", "answer": "yes" if i % 2 else "never"} for i in range(40)]
    backend = FakeRollout(tokenizer, respond=lambda p, j, seed: "yes" if seed % 2 else "no")
    t = _trainer(
        tiny,
        tokenizer,
        backend,
        rows,
        _config(tmp_path, max_steps=12, prompts_per_step=4, max_oversample=2.0),
    )
    t._begin()
    lines = [t.train_step() for _ in range(12)]
    late = lines[6:]
    assert sum(m["generate/calls"] == 1 for m in late) >= 5
    assert all(m["groups/rolled"] > 4 for m in late), "the first round drew extra prompts"
    assert all(
        m["generate/completions_per_trained"] == m["groups/rolled"] / m["groups/effective"]
        for m in late
        if m["groups/effective"]
    )
    assert sum(m["groups/effective"] == 4 for m in late) >= 5
    seen = sorted(
        {json.loads(x)["prompt_id"] for x in (tmp_path / "groups.jsonl").read_text().splitlines()}
    )
    chance = dict(zip(seen, t.sampler.signal_chance(seen)))
    never = [chance[i] for i in seen if i % 2 == 0]
    mixed = [chance[i] for i in seen if i % 2 == 1]
    assert never and mixed and sum(never) / len(never) < sum(mixed) / len(mixed)


def test_without_refills_a_step_rolls_out_exactly_its_prompts(tiny, tokenizer, tmp_path):
    backend = FakeRollout(tokenizer, respond=lambda p, j, seed: "yes" if seed % 2 else "no")
    t = _trainer(tiny, tokenizer, backend, _rows(20), _config(tmp_path, max_refill_rounds=0))
    assert all(t.train_step()["groups/rolled"] == 4 for _ in range(3))
    assert [n for _, n in backend.calls] == [4, 4, 4]


@pytest.mark.parametrize("oversample", [1.25, 1.5, 2.0])
def test_draw_sizes_follow_the_predicted_chance(oversample):
    cap = math.ceil(8 * oversample)

    def draws(needed, chance, available):
        return draws_for(needed, chance, available, oversample)

    assert draws(8, None, 100) == 8 and draws(8, 1.0, 100) == 8
    assert cap >= draws(8, 0.7, 100) > draws(8, 0.95, 100) > 8
    assert draws(8, 0.0, 100) == cap and draws(8, 0.5, 9) == 9
    assert draws(0, 0.5, 10) == 0


def test_every_metrics_line_says_where_the_time_went(tiny, tokenizer, tmp_path):
    backend = FakeRollout(tokenizer)
    t = _trainer(tiny, tokenizer, backend, _rows(8), _config(tmp_path))
    for _ in range(2):
        m = t.train_step()
        phases = [m[f"time/{p}_s"] for p in PHASES]
        assert all(x >= 0 for x in phases) and sum(phases) <= m["time/step_s"]
        assert m["time/update_s"] > 0 and m["time/score_s"] > 0


class _Short(FakeRollout):
    """A backend that loses the last sequence of every call."""

    def rollout(self, prompts, n, seeds=None):
        out = super().rollout(prompts, n, seeds)
        for name in ("prompt_tokens", "completion_ids", "texts", "truncated"):
            setattr(out, name, getattr(out, name)[:-1])
        return out


def test_a_rollout_of_the_wrong_size_is_refused_naming_the_backend(tiny, tokenizer, tmp_path):
    """One row short trained a group of 3 at G = 4 without a word; one too many failed later
    with an unrelated count of references."""
    t = _trainer(
        tiny, tokenizer, _Short(tokenizer, answers=["yes", "no"]), _rows(8), _config(tmp_path)
    )
    with pytest.raises(ValueError, match=r"_Short.rollout returned a Rollout that does not match"):
        t.train()
    t.close()


@pytest.mark.parametrize("ids", [["q0", "q1"], range(100, 120)])
def test_a_sampler_on_other_ids_than_row_positions_is_refused(tiny, tokenizer, tmp_path, ids):
    """A Curriculum built on the dataset's own ids (strings, an offset range) failed deep in the
    loop (TypeError / IndexError) after the model had loaded."""
    from passband.curriculum import Curriculum
    from passband.errors import ConfigError

    t = _trainer(
        tiny,
        tokenizer,
        FakeRollout(tokenizer, answers=["yes", "no"]),
        _rows(20),
        _config(tmp_path),
        sampler=Curriculum(list(ids)),
    )
    with pytest.raises(ConfigError, match=r"must draw row positions 0..19 of train_dataset"):
        t.train()
    t.close()


def test_a_sampler_without_the_interface_is_refused_before_the_model_loads(tokenizer, tmp_path):
    from passband.errors import ConfigError

    with pytest.raises(ConfigError, match="lacks sample"):  # the model path is never read
        GRPOTrainer("/no/such/model", tokenizer, _rows(2), "exact", _config(tmp_path), sampler=1)


def test_the_first_rollout_comes_from_the_weights_being_trained(tiny, tokenizer, tmp_path):
    """A backend built on other weights was trained on at step 1 without a word: a fresh run
    synced only after its first update (a review of the update's arithmetic)."""
    from passband.trainer.rollout import HFRollout

    other = tiny.model(tokenizer, seed=1)
    backend = HFRollout(other, tokenizer, max_new_tokens=4)
    t = _trainer(tiny, tokenizer, backend, _rows(4), _config(tmp_path, max_steps=1))
    t.train()
    assert backend.model is t.model and backend.model is not other
