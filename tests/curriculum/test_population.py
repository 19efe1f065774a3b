"""The population prior (empirical Bayes over first looks) and the floor of the reuse cooldown."""

import random

from passband.curriculum import Curriculum


def _bimodal_rates(n: int) -> dict:
    """40% solved, 35% out of reach, 25% in band: the spread real RL datasets have."""
    rng = random.Random(0)
    return {
        i: 0.99 if i % 20 < 8 else (0.01 if i % 20 < 15 else rng.uniform(0.3, 0.7))
        for i in range(n)
    }


def _first_looks(cur: Curriculum, rates: dict, ids, seed: int = 1) -> None:
    rng = random.Random(seed)
    for i in ids:
        cur.observe(i, sum(rng.random() < rates[i] for _ in range(8)), 8)


def test_one_lucky_success_on_bimodal_data_reads_below_the_band():
    rates = _bimodal_rates(2000)
    fitted, flat = Curriculum(range(2000)), Curriculum(range(2000), empirical_prior=False)
    for cur in (fitted, flat):
        _first_looks(cur, rates, range(200))
        cur.observe(500, 1, 8)
        cur.observe(501, 2, 8)
    assert flat.classify(500) == "in_band"  # Beta(1, 1): 2/10 = 0.2, on the band's edge
    assert fitted.classify(500) == "too_hard" and fitted.estimate(500) < 0.17
    assert fitted.classify(501) == "in_band"  # a second success is evidence enough


def test_the_fit_waits_for_enough_first_looks_and_is_never_stronger_than_base_prior():
    cur = Curriculum(range(100))
    _first_looks(cur, {i: 0.5 for i in range(100)}, range(30))
    cur.observe(50, 1, 8)
    assert abs(cur.estimate(50) - 2 / 10) < 1e-9  # 31 first looks, this one included: Beta(1, 1)
    uniform = Curriculum(range(1000))
    _first_looks(uniform, {i: 0.5 for i in range(1000)}, range(300))
    uniform.observe(600, 1, 8)
    # a population all at 0.5 fits a peaked prior; capped at base_prior's 2 pseudo-counts
    assert abs(uniform.estimate(600) - 2 / 10) < 0.02


def test_pre_scores_fit_the_population_before_any_group_is_observed():
    rates = _bimodal_rates(1000)
    rng = random.Random(3)
    priors = {i: (sum(rng.random() < rates[i] for _ in range(8)), 8) for i in range(500)}
    cur = Curriculum(range(1000), priors=priors)
    cur.observe(900, 1, 8)  # a fresh prompt's first look
    assert cur.classify(900) == "too_hard"
    flat = Curriculum(range(1000), priors=priors, empirical_prior=False)
    flat.observe(900, 1, 8)
    assert flat.classify(900) == "in_band"


def test_once_fresh_prompts_run_out_the_few_in_band_ones_wait_the_reuse_floor():
    """200 prompts, 4 in band and the rest solved: without a floor the cooldown shrinks with the
    in-band pool and, once every prompt was seen, the same 4 are in every draw (the demo's model
    memorised such prompts)."""
    rates = {i: (0.5 if i < 4 else 0.99) for i in range(200)}

    def late_gaps(**options) -> list[int]:
        cur = Curriculum(range(200), seed=1, **options)
        rng, last, out = random.Random(2), {}, []
        for _ in range(150):
            late = cur.metrics()["pool/fresh"] == 0
            for pid in cur.sample(8):
                clock = cur.metrics()["clock"]
                if pid < 4 and pid in last and late:
                    out.append(clock - last[pid])
                last[pid] = clock
                cur.observe(pid, sum(rng.random() < rates[pid] for _ in range(8)), 8)
        return out

    floored = late_gaps()
    assert floored and min(floored) >= 0.1 * 200  # min_reuse_share = 0.1 of the dataset
    unfloored = late_gaps(min_reuse_share=0.0)
    assert len(unfloored) > 2 * len(floored) and min(unfloored) < 0.1 * 200
