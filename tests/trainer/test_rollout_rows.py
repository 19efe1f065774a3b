"""Rows per ``generate`` call: by default a step's whole first round in one call (one process), a
round split evenly over ranks, and a CUDA out-of-memory error halves the calls instead of ending
the run, with the same samples."""

from __future__ import annotations

import warnings

import pytest
import torch

from passband.trainer import GRPOConfig, HFRollout
from passband.trainer._distributed import Dist, warn_if_unbalanced
from passband.trainer._refill import AUTO_ROLLOUT_ROWS, rollout_room, rollout_rows


def test_default_is_one_call_per_round_in_one_process():
    c = GRPOConfig(group_size=8, prompts_per_step=16)
    assert c.rollout_batch_size is None
    assert rollout_rows(c) == 8 * rollout_room(0, 16, c.max_oversample) == 160  # 1.25 x 16 x 8
    assert rollout_rows(GRPOConfig(group_size=8, prompts_per_step=16, max_oversample=1.5)) == 192
    assert rollout_rows(GRPOConfig(group_size=16, prompts_per_step=256)) == AUTO_ROLLOUT_ROWS
    assert rollout_rows(GRPOConfig(rollout_batch_size=32)) == 32, "a set value is kept"
    assert rollout_rows(GRPOConfig(group_size=16, prompts_per_step=1)) >= 16, "at least a group"


@pytest.mark.parametrize("oversample", [1.0, 1.25, 1.5, 2.0])
@pytest.mark.parametrize("ranks", [2, 3, 4, 8])
def test_with_several_ranks_every_rank_gets_a_chunk(ranks, oversample):
    c = GRPOConfig(group_size=8, prompts_per_step=16, max_oversample=oversample)
    per_call = rollout_rows(c, ranks) // 8
    assert -(-16 // per_call) >= ranks, (ranks, per_call)
    budget = rollout_room(0, 16, oversample)
    if ranks == 2 and oversample <= 1.5:  # a whole-budget round: one chunk per rank
        assert -(-budget // per_call) == ranks, (budget, per_call)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "ranks sit idle" warning at the defaults
        warn_if_unbalanced(Dist(rank=0, world_size=ranks), c)


def test_bad_values_name_the_field():
    with pytest.raises(ValueError, match="rollout_batch_size.*None"):
        GRPOConfig(rollout_batch_size=0)


class _SmallGPU(HFRollout):
    """Real ``generate``, behind a memory limit: more than ``limit`` rows raise the error CUDA
    raises when the KV cache does not fit."""

    limit = 4

    def _generate_batch(self, rows, seeds):
        if len(rows) > self.limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated limit)")
        return super()._generate_batch(rows, seeds)


def test_out_of_memory_halves_the_calls_with_the_same_samples(tiny, tokenizer, monkeypatch):
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)  # no CUDA on this machine
    model = tiny.model(tokenizer)
    kw = dict(max_new_tokens=6, temperature=1.0)
    small = _SmallGPU(model, tokenizer, batch_size=16, **kw)
    with pytest.warns(UserWarning, match="4 sequences per call"):
        got = small.rollout(["1+1=", "2+2=", "3+3="], 4, seeds=[1, 2, 3])
    assert small.batch_size == 4 and len(got) == 12
    want = HFRollout(model, tokenizer, batch_size=4, **kw).rollout(
        ["1+1=", "2+2=", "3+3="], 4, seeds=[1, 2, 3]
    )
    assert got.completion_ids == want.completion_ids
    small.limit = 0
    with pytest.raises(torch.cuda.OutOfMemoryError, match="one sequence per call"):
        with pytest.warns(UserWarning):
            small.rollout(["1+1="], 2, seeds=[1])
