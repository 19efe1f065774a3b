"""A sampler of the user's own, written to the minimal interface, through whole training steps."""

from __future__ import annotations

import json

import numpy as np
import pytest

from passband.trainer import GRPOConfig, GRPOTrainer

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")


class RoundRobin:
    """The documented minimum: ``sample(n)``, no ``exclude``; ``as_numpy`` draws numpy ints."""

    def __init__(self, n: int, as_numpy: bool = False):
        self.n, self.i, self.as_numpy, self.calls = n, 0, as_numpy, []

    def sample(self, n):
        self.calls.append(n)
        out = [(self.i + k) % self.n for k in range(n)]
        self.i += n
        return np.array(out, dtype=np.int64) if self.as_numpy else out

    def observe(self, prompt_id, successes, trials):
        assert type(prompt_id) is int

    def state_dict(self):
        return {"i": self.i}

    def load_state_dict(self, state):
        self.i = state["i"]

    def metrics(self):
        return {}


def _same(completion, **_):  # every group has zero variance: each step refills
    return 1.0


def _run(tiny, tokenizer, tmp_path, sampler):
    rows = [{"prompt": f"{i}+{i}="} for i in range(3)]
    config = GRPOConfig(
        group_size=4, prompts_per_step=2, max_new_tokens=4, beta=0.0, pretrained=False,
        max_steps=2, output_dir=str(tmp_path / "run"), progress=False, seed=0,
        max_refill_rounds=2, max_oversample=2.0,
    )  # fmt: skip
    GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, _same, config, sampler=sampler).train()
    return [json.loads(x) for x in (tmp_path / "run" / "groups.jsonl").read_text().splitlines()]


def test_a_sampler_without_exclude_refills_without_repeating_a_steps_prompts(
    tiny, tokenizer, tmp_path
):
    """Its first refill called sample(n, exclude=...) and the run died with a bare TypeError."""
    sampler = RoundRobin(3)
    groups = _run(tiny, tokenizer, tmp_path, sampler)
    assert len(sampler.calls) > 2  # refills did draw again
    for step in (1, 2):
        ids = [g["prompt_id"] for g in groups if g["step"] == step]
        assert ids and len(ids) == len(set(ids)), ids  # what a step had is left out of a refill


def test_numpy_ids_are_logged_as_ints(tiny, tokenizer, tmp_path):
    """np.int64 ids passed the id check, then the step crashed writing groups.jsonl after its
    update, leaving the run half-logged."""
    groups = _run(tiny, tokenizer, tmp_path, RoundRobin(3, as_numpy=True))
    assert groups and all(type(g["prompt_id"]) is int for g in groups)
    assert (tmp_path / "run" / "metrics.jsonl").read_text().count("\n") == 2


def test_a_sampler_state_json_cannot_hold_is_named_before_training(tiny, tokenizer, tmp_path):
    """A set in state_dict() was a bare TypeError at the first checkpoint, after an update."""
    from passband.errors import ConfigError

    class Sets(RoundRobin):
        def state_dict(self):
            return {"i": self.i, "seen": {1, 2}}

    config = GRPOConfig(output_dir=str(tmp_path / "run"), progress=False, pretrained=False)
    rows = [{"prompt": "1+1="}]
    with pytest.raises(
        ConfigError, match=r"Sets.state_dict\(\)\['seen'\] holds \{1, 2\} \(type set\)"
    ):
        GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, _same, config, sampler=Sets(1))

    class Odd(RoundRobin):
        def metrics(self):
            return {"ok": 1.0, "shape": [1, object()]}

    with pytest.raises(
        ConfigError, match=r"Odd.metrics\(\)\['shape'\]\[1\] holds <object .*\(type object\)"
    ):
        GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, _same, config, sampler=Odd(1))


def test_a_sampler_whose_metrics_need_draws_is_still_accepted(tiny, tokenizer, tmp_path):
    """Its metrics() divided by the draws made so far: the JSON check at construction raised
    ZeroDivisionError for a sampler that worked before it."""

    class Rates(RoundRobin):
        def metrics(self):
            return {"repeat_share": sum(self.calls) / len(self.calls)}

    groups = _run(tiny, tokenizer, tmp_path, Rates(3))
    assert groups
