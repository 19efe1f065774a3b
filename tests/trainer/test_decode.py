"""``HFRollout``'s decode loop drops finished rows from the batch and still samples, token for
token, what Hugging Face ``generate`` samples with the same seeded sampler."""

from __future__ import annotations

import pytest

from passband.trainer import HFRollout
from passband.trainer._decode import generate_reference
from passband.trainer._kvcache import preallocated_cache

PROMPTS = ["1+1=", "22+3=", "7*7=", "9-4=", "100+1=", "3=", "45+45=", "8*2="]


def _backend(model, tokenizer, **kw):
    """HFRollout on a random tiny model, with three common characters as extra end tokens, so
    completions end at many different lengths."""
    backend = HFRollout(model, tokenizer, max_new_tokens=24, **kw)
    backend.eos_ids |= {tokenizer.convert_tokens_to_ids(c) for c in "7a+"}
    return backend


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_the_same_tokens_as_generate_while_dropping_finished_rows(
    tiny, tokenizer, monkeypatch, temperature
):
    model = tiny.model(tokenizer)
    selects = []
    original = type(preallocated_cache(model, 8)).batch_select_indices

    def spy(self, indices):
        selects.append(len(indices))
        return original(self, indices)

    monkeypatch.setattr(type(preallocated_cache(model, 8)), "batch_select_indices", spy)
    seeds = list(range(10, 10 + len(PROMPTS)))
    backend = _backend(model, tokenizer, temperature=temperature)
    got = backend.rollout(PROMPTS, 4, seeds=seeds).completion_ids
    lengths = [len(x) for x in got]
    assert len(set(lengths)) > 3, f"completions should end at many lengths: {lengths}"
    assert selects, "finished rows were never dropped"
    assert got == generate_reference(backend, PROMPTS, 4, seeds)


def test_finished_rows_stop_costing_forwards(tiny, tokenizer):
    model = tiny.model(tokenizer, seed=1)
    fed = []
    hook = model.register_forward_pre_hook(
        lambda mod, args, kwargs: fed.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        out = _backend(model, tokenizer).rollout(PROMPTS, 4, seeds=list(range(8)))
    finally:
        hook.remove()
    longest = max(len(x) for x in out.completion_ids)
    assert len(fed) == longest, "one prefill, then one forward per token of the longest row"
    assert sum(fed) < 0.8 * len(out) * len(fed), (sum(fed), len(out), len(fed))


def test_the_vectorised_uniforms_are_the_counter_rng_bit_for_bit():
    import random

    import numpy as np

    from passband.trainer._seeded import _MASK64, _uniform, _uniforms

    rng = random.Random(0)
    seeds = [rng.getrandbits(64) for _ in range(500)] + [0, _MASK64, 1]
    for position in (0, 1, 7, 255, 10**6):
        many = _uniforms(np.array(seeds, dtype=np.uint64), position)
        assert many.tolist() == [_uniform(s, position) for s in seeds]
