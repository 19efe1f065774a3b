"""The issue's targets on simulated runs with known, drifting pass rates (no model)."""

import pytest

from passband.curriculum.simulate import SimConfig, run_simulation

_RUN = dict(n_prompts=1000, steps=80, prompts_per_step=32)


@pytest.fixture(scope="module")
def results():
    return {
        name: run_simulation(strategy, SimConfig(**_RUN, **extra))
        for name, strategy, extra in (
            ("dynamic", "dynamic", {}),
            ("cold", "curriculum", {}),
            ("priors", "curriculum", {"prior_noise": 0.7}),
        )
    }


def test_dynamic_sampling_baseline_wastes_most_generation(results):
    assert 2.5 <= results["dynamic"]["generated_per_trained"] <= 6.0
    assert results["dynamic"]["signal_share"] < 0.45


# Cold, the first third is spent finding the in-band prompts, and a prompt drawn is not drawn again
# within its cooldown (re-drawing the best few earlier gave 0.79 here, and made the demo's model
# memorise them: 3 points less held-out accuracy), so the cold targets sit lower than with priors.
@pytest.mark.parametrize("name, signal, overhead", [("cold", 0.70, 1.45), ("priors", 0.80, 1.25)])
def test_curriculum_meets_signal_and_overhead_targets(results, name, signal, overhead):
    r = results[name]
    assert r["signal_share"] >= signal
    assert r["generated_per_trained"] <= overhead
    assert r["generated_per_trained"] <= 0.5 * results["dynamic"]["generated_per_trained"]


def test_curriculum_keeps_its_signal_while_the_policy_drifts(results):
    first, middle, last = results["cold"]["signal_share_by_third"]
    assert middle >= 0.75 and last >= 0.75
    assert min(results["priors"]["signal_share_by_third"]) >= 0.75


def test_hopeless_prompts_that_become_learnable_come_back(results):
    for name in ("cold", "priors"):
        r = results[name]
        assert r["became_learnable"] > 50
        assert r["recovered_share"] >= 0.2
        assert r["curriculum"]["readmissions"] > 0
        assert r["curriculum"]["retests/warmup"] > 0


def test_simulation_rejects_unknown_strategy():
    with pytest.raises(ValueError, match="strategy"):
        run_simulation("random", SimConfig(n_prompts=10, steps=1))
