"""The advantage / loss-aggregation registries are what ``GRPOConfig`` validates against."""

from __future__ import annotations

import subprocess
import sys

import pytest

import passband.trainer as trainer
from passband.trainer.config import GRPOConfig
from passband.trainer.registry import ADVANTAGE_REGISTRY, AGGREGATION_REGISTRY


@pytest.fixture
def scratch_names():
    """Names a test registers, removed afterwards so the registries stay as the library ships."""
    made = []
    yield made
    for registry, name in made:
        registry.functions.pop(name, None)


def test_a_registered_aggregation_is_accepted_and_resolved(scratch_names):
    @trainer.register_aggregation("test_sum")
    def test_sum(loss, mask, norms):
        return (loss * mask).sum()

    scratch_names.append((AGGREGATION_REGISTRY, "test_sum"))
    assert GRPOConfig(loss_aggregation="test_sum").loss_aggregation == "test_sum"
    from passband.trainer.losses import get_aggregation

    assert get_aggregation("test_sum") is test_sum


def test_a_registered_advantage_is_accepted_and_resolved(scratch_names):
    @trainer.register_advantage("test_raw")
    def test_raw(rewards, valid):
        return rewards

    scratch_names.append((ADVANTAGE_REGISTRY, "test_raw"))
    assert GRPOConfig(advantage="test_raw").advantage == "test_raw"
    from passband.trainer.advantages import get_advantage

    assert get_advantage("test_raw") is test_raw


def test_a_builtin_name_cannot_be_taken_twice():
    with pytest.raises(ValueError, match="already registered"):
        trainer.register_advantage("group")(lambda rewards, valid: rewards)


def test_an_unknown_name_lists_the_known_ones_and_suggests_one():
    with pytest.raises(ValueError, match="group.*register_advantage"):
        GRPOConfig(advantage="grop")
    with pytest.raises(KeyError, match="Did you mean 'group'"):
        ADVANTAGE_REGISTRY.get("grop")


def test_validating_registered_names_does_not_import_torch():
    code = (
        "import sys, passband.trainer as t\n"
        "t.register_aggregation('mine')(lambda loss, mask, norms: loss)\n"
        "t.GRPOConfig(loss_aggregation='mine', advantage='no_std')\n"
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_old_name_tuples_still_work_but_warn():
    import passband.trainer.config as config

    with pytest.warns(DeprecationWarning, match="ADVANTAGES"):
        assert config.ADVANTAGES == ("group", "no_std", "batch_std")
    with pytest.warns(DeprecationWarning, match="LOSS_AGGREGATIONS"):
        assert config.LOSS_AGGREGATIONS == ("token_mean", "seq_mean_token_mean", "constant_norm")
