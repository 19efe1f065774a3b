"""A step's roll-out has a budget: at most ``max_oversample`` x ``prompts_per_step`` prompts over
all its rounds. On a hard task (most groups unanimous) the step trains on the groups it found in
one ``generate`` call instead of paying two more decodes for a few more groups."""

from __future__ import annotations

import math

import pytest

from passband.trainer import FakeRollout, GRPOConfig, GRPOTrainer
from passband.trainer._refill import draws_for, rollout_room

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")

PER_STEP = 8
OVERSAMPLE = GRPOConfig().max_oversample
BUDGET = math.floor(PER_STEP * OVERSAMPLE)


def _hard_rows(n):
    """One prompt in four can pass; the others never do (their groups are always unanimous)."""
    return [{"prompt": f"q{i}?", "answer": "yes" if i % 4 == 0 else "never"} for i in range(n)]


def _trainer(tiny, tokenizer, tmp_path, **kw):
    backend = FakeRollout(tokenizer, respond=lambda p, j, seed: "yes" if seed % 2 else "no")
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=PER_STEP,
        max_new_tokens=8,
        learning_rate=1e-3,
        beta=0.0,
        pretrained=False,
        max_steps=6,
        output_dir=str(tmp_path),
        progress=False,
        verifier_workers=1,
        **kw,
    )
    t = GRPOTrainer(
        tiny.model(tokenizer), tokenizer, _hard_rows(400), "exact", config, rollout_backend=backend
    )
    t._begin()
    return t, backend


@pytest.mark.parametrize("oversample", [None, 1.5, 2.0])
def test_a_hard_step_rolls_out_at_most_its_budget_in_one_call(
    tiny, tokenizer, tmp_path, oversample
):
    kw = {} if oversample is None else {"max_oversample": oversample}
    budget = math.floor(PER_STEP * (oversample or OVERSAMPLE))
    t, backend = _trainer(tiny, tokenizer, tmp_path, **kw)
    lines = [t.train_step() for _ in range(6)]
    assert all(m["groups/rolled"] <= budget for m in lines), [m["groups/rolled"] for m in lines]
    late = lines[2:]  # once the curriculum predicts the low chance, the first round takes it all
    assert all(m["generate/calls"] == 1 and m["groups/rolled"] == budget for m in late), late
    # short steps train anyway: every step that found a group with signal updated the policy (the
    # curriculum walks through fresh prompts, so an unlucky step can find none and skip)
    effective = [m["groups/effective"] for m in lines]
    assert all(e < PER_STEP for e in effective) and sum(e > 0 for e in effective) >= 3, effective
    versions = [m["policy_version"] for m in lines] + [t.policy_version]
    assert [b - a for a, b in zip(versions, versions[1:])] == [int(e > 0) for e in effective]


def test_a_top_up_uses_only_what_the_first_round_left(tiny, tokenizer, tmp_path):
    """The uniform sampler predicts no zero-variance groups before it has seen any: the first
    round draws exactly prompts_per_step; the shortfall's top-up gets the rest of the budget."""
    t, backend = _trainer(tiny, tokenizer, tmp_path, use_curriculum=False)
    m = t.train_step()
    assert [p for p, _ in backend.calls][:2] == [PER_STEP, BUDGET - PER_STEP]
    assert m["generate/calls"] == 2 and m["groups/rolled"] == BUDGET


def test_room_and_draw_sizes():
    assert rollout_room(0, 16, 1.5) == 24 and rollout_room(99, 16, 1.5) == 0
    assert rollout_room(0, 16, 1.25) == 20 and rollout_room(0, 16, 1.0) == 17
    assert rollout_room(0, 1, 1.25) == 2, "even one prompt per step may draw one extra"
    assert draws_for(8, 0.01, rollout_room(0, 8, OVERSAMPLE), OVERSAMPLE) == BUDGET


@pytest.mark.parametrize("bad", [0.5, 0.99, 9, float("nan"), "1.5", True])
def test_a_bad_budget_names_the_field(bad):
    with pytest.raises(ValueError, match=r"max_oversample"):
        GRPOConfig(max_oversample=bad)


def test_a_checkpoint_from_before_the_setting_resumes_with_the_budget_named():
    """A run checkpointed before ``max_oversample`` existed rolled out with the fixed 1.5: its
    resume at today's default must say that the budget changed, as for any changed setting."""
    from passband.trainer._resume import changed_settings

    new = GRPOConfig().to_dict()
    old = {k: v for k, v in new.items() if k != "max_oversample"}
    assert changed_settings(old, new) == {"max_oversample": (1.5, OVERSAMPLE)}
    assert changed_settings({**old, "max_oversample": OVERSAMPLE}, new) == {}
