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
# A fifth of each draw re-tests the warm-up pool (``warmup_retest_share``): at 0.05 this run gave
# 0.708 / 1.41 cold and 0.841 / 1.19 with priors, but found fewer prompts that became learnable
# than uniform sampling does in most simulated worlds (BENCHMARKS.md, "Recovery"); at 0.2, 0.660 /
# 1.52 and 0.812 / 1.23, still twice uniform sampling's signal share.
@pytest.mark.parametrize("name, signal, overhead", [("cold", 0.65, 1.55), ("priors", 0.80, 1.25)])
def test_curriculum_meets_signal_and_overhead_targets(results, name, signal, overhead):
    r = results[name]
    assert r["signal_share"] >= signal
    assert r["generated_per_trained"] <= overhead
    # at most about half of DAPO dynamic sampling's generation per group trained (0.50x cold,
    # 0.41x with priors)
    assert r["generated_per_trained"] <= 0.52 * results["dynamic"]["generated_per_trained"]


def test_curriculum_keeps_its_signal_while_the_policy_drifts(results):
    first, middle, last = results["cold"]["signal_share_by_third"]
    assert middle >= 0.75 and last >= 0.75
    assert min(results["priors"]["signal_share_by_third"]) >= 0.75


def test_hopeless_prompts_that_become_learnable_come_back(results):
    for name in ("cold", "priors"):
        r = results[name]
        assert r["became_learnable"] > 50
        assert r["recovered_share"] >= 0.58  # 0.649 cold, 0.618 with priors (0.50 / 0.54 at 0.05)
        assert r["curriculum"]["readmissions"] > 0
        assert r["curriculum"]["retests/warmup"] > 0


def test_simulation_rejects_unknown_strategy():
    with pytest.raises(ValueError, match="strategy"):
        run_simulation("random", SimConfig(n_prompts=10, steps=1))


# The recovery target, in the standard scenario (2000 prompts, 150 steps of 64 groups): the
# prompts that become learnable are trained on again about as often as uniform sampling finds
# them, cold and with priors, while the signal share stays more than twice uniform's. Measured
# (seeds 0-2): uniform 0.772; cold 0.795 and with priors 0.820 with due warm-up re-tests ranked on
# twice the evidence half-life (_selection.RETEST_MEMORY), against 0.705 and 0.701 when they were
# ranked on the estimate's own half-life, which fails here.
@pytest.mark.parametrize("noise", [0.0, 0.7])
def test_recovery_keeps_up_with_uniform_sampling(noise):
    seeds = (0, 1, 2)
    uniform = [run_simulation("uniform", SimConfig(seed=s)) for s in seeds]
    ours = [run_simulation("curriculum", SimConfig(seed=s, prior_noise=noise)) for s in seeds]

    def mean(runs, key):
        return sum(r[key] for r in runs) / len(runs)

    assert mean(ours, "recovered_share") >= mean(uniform, "recovered_share") - 0.02
    assert mean(ours, "signal_share") >= 2 * mean(uniform, "signal_share")


# Texts that name a prompt's kind 4 times in 5 (SimConfig.text_signal): the curriculum ranks the
# prompts it has not seen by them, so the cold first pass finds the in-band ones sooner. Measured
# here (seeds 0-2): first-third signal 0.675-0.686 with texts against 0.543-0.552 without, whole
# run 0.729-0.741 against 0.704-0.716. The middle third gives some back (0.73-0.75 against
# 0.82-0.84): the unseen prompts left then are mostly out of band, and the exploration floor still
# draws them. Uniform sampling ignores texts, so its run is the same draw for draw.
def test_texts_speed_up_the_cold_first_pass():
    cold = [run_simulation("curriculum", SimConfig(**_RUN, seed=s)) for s in range(3)]
    texts = [
        run_simulation("curriculum", SimConfig(**_RUN, seed=s, text_signal=0.8)) for s in range(3)
    ]
    for without, with_texts in zip(cold, texts):
        assert with_texts["signal_share_by_third"][0] >= without["signal_share_by_third"][0] + 0.08
        assert with_texts["signal_share"] >= without["signal_share"]
        assert with_texts["curriculum"]["fresh_model/looks"] > 0
    plain = run_simulation("dynamic", SimConfig(**_RUN))
    assert run_simulation("dynamic", SimConfig(**_RUN, text_signal=0.8)) == plain


def test_text_signal_is_a_probability():
    with pytest.raises(ValueError, match="text_signal"):
        SimConfig(text_signal=1.5)


def test_when_the_policy_forgets_the_fallback_trains_solved_prompts_again():
    # prompts learned by training slip back when not trained (SimConfig.forgetting); once looks
    # at parked solved prompts pay more than looks at warm-up ones, the fallback turns to them.
    # Before that rule: 0.41-0.44 signal share per seed here, against 0.48-0.53 with it.
    world = dict(learn_step=0.3, forgetting=0.02)
    for seed in (0, 1):
        cur = run_simulation("curriculum", SimConfig(seed=seed, **world))
        assert cur["curriculum"]["fallback_easy_weight"] == 1.0
        assert cur["signal_share"] > 0.46, seed
        dynamic = run_simulation("dynamic", SimConfig(seed=seed, **world))
        assert cur["final_pass_rate"] > dynamic["final_pass_rate"]


def test_nothing_is_forgotten_by_default():
    out = run_simulation("uniform", SimConfig(n_prompts=200, steps=20, prompts_per_step=16))
    again = run_simulation(
        "uniform", SimConfig(n_prompts=200, steps=20, prompts_per_step=16, forgetting=0.0)
    )
    assert out == again and 0.0 < out["final_pass_rate"] < 1.0


# Prompts that jump into the band mid-run with no success before (``SimConfig.jump``; 5,000
# prompts, 300 steps): only a re-test finds them. Measured (seeds 0-2): uniform 0.84-0.87; the
# curriculum 0.79-0.80 with half its re-tests a round robin of the stalest, 0.67-0.72 when every
# re-test went by P(signal), which a prompt with no success never wins.
def test_prompts_that_jump_into_the_band_are_found_by_the_round_robin():
    cfgs = [SimConfig(seed=s, jump=True, n_prompts=5000, steps=300) for s in (0, 1, 2)]
    uniform = [run_simulation("uniform", c)["recovered_share"] for c in cfgs]
    ours = [run_simulation("curriculum", c) for c in cfgs]
    assert min(r["recovered_share"] for r in ours) >= 0.76
    assert sum(r["recovered_share"] for r in ours) / 3 >= sum(uniform) / 3 - 0.08
    assert min(r["signal_share"] for r in ours) >= 2 * max(
        run_simulation("uniform", c)["signal_share"] for c in cfgs[:1]
    )


# A dataset larger than the run (50,000 prompts, 60 draws of 64): the in-band walk never ends, so
# before ``spaced_reuse`` no prompt came back and a cold curriculum had uniform sampling's signal
# share (0.329-0.339 against 0.322-0.327, seeds 0-3; 0.724-0.732 with priors). Now a prompt comes
# back once the run has doubled since its last draw: 0.391-0.399 cold, 0.781-0.790 with priors,
# and prompts that become learnable are still found more often than uniform sampling finds them.
@pytest.mark.parametrize("seed", [0, 1])
def test_a_dataset_larger_than_the_run_brings_its_in_band_prompts_back(seed):
    cfg = SimConfig(n_prompts=50_000, steps=60, prompts_per_step=64, seed=seed)
    uniform = run_simulation("uniform", cfg)
    cold = run_simulation("curriculum", cfg)
    priors = run_simulation("curriculum", SimConfig(**{**cfg.__dict__, "prior_noise": 0.7}))
    assert cold["signal_share"] >= 1.15 * uniform["signal_share"]
    assert priors["signal_share"] >= 0.76
    for r in (cold, priors):
        assert r["recovered_share"] >= uniform["recovered_share"]
        assert r["curriculum"]["drawn/active"] > 0  # known prompts drawn again


@pytest.mark.parametrize("factor", [1.0, 2.0])
def test_spaced_reuse_waits_32_of_the_largest_draws_however_small_the_refills(factor):
    """A review (stop 42): the floor was 32 times the recent draw-size hint, which a step of one
    draw of 64 and many refills of 1 shrinks to 1, so in-band prompts came back a step later."""
    import numpy as np

    from passband.curriculum import Curriculum

    n, rng = 50_000, np.random.default_rng(0)
    rate = np.where(rng.random(n) < 0.5, rng.uniform(0.3, 0.7, n), 0.999)  # in band or solved
    no_retests = dict(warmup_retest_share=0.0, max_warmup_retest_share=0.0, easy_retest_share=0.0)
    # cooldown_factor scales the walk, not the spaced rest (at 2 it once turned spaced reuse off)
    cur = Curriculum(range(n), seed=0, run_groups=3000, cooldown_factor=factor, **no_retests)
    last, gaps, clock = {}, [], 0
    for step in range(30):
        if step == 15:  # the largest draw survives a save and a load (refills do not shrink it)
            state = cur.state_dict()
            assert state["n_max"] == 64
            cur = Curriculum(
                range(n), seed=0, run_groups=3000, cooldown_factor=factor, **no_retests
            )
            cur.load_state_dict(state)
        used = cur.sample(64)
        for _ in range(40):
            used += cur.sample(1, exclude=used)
        for i in used:
            if i in last:
                gaps.append(clock - last[i])
            cur.observe(i, int(rng.binomial(8, rate[i])), 8)
            last[i], clock = clock, clock + 1
    assert gaps, "no prompt came back: spaced_reuse did not bind"
    assert min(gaps) >= 32 * 64 - 64  # the floor (within one draw: gaps are counted per group)


def test_a_run_that_can_walk_its_in_band_prompts_draws_as_without_spaced_reuse():
    """A review (stop 42): the cap bound early in any run whose in-band walk was longer than 32
    draws, GSM8K-sized runs of 8 prompts a step included (prompts back after 10 steps, not 70).
    It binds now only where the walk is longer than the run has left (``run_groups``)."""
    import numpy as np

    from passband.curriculum import Curriculum

    def draws(steps=150, **options):
        n, rng = 7473, np.random.default_rng(1)
        rate = rng.choice([0.001, 0.5, 0.999], size=n, p=[0.35, 0.3, 0.35])
        cur, out = Curriculum(range(n), seed=0, **options), []
        for _ in range(steps):
            ids = cur.sample(8)
            out.append(ids)
            for i in ids:
                cur.observe(i, int(rng.binomial(8, rate[i])), 8)
        return out

    assert draws(run_groups=500 * 8) == draws(spaced_reuse=0.0)
    assert draws(run_groups=150 * 8) != draws(spaced_reuse=0.0)  # a run too short: it binds
    # over the whole run only prompts the walk would bring back after its end return sooner (a
    # second review: with the cap on the whole draw, draws changed from step 222 on)
    ours, walk = draws(500, run_groups=500 * 8), draws(500, spaced_reuse=0.0)
    first = next(t for t, (a, b) in enumerate(zip(ours, walk)) if a != b)
    assert first >= 400  # 465 measured


def test_prompts_the_trainer_never_scores_are_not_drawn_again_and_again():
    """A review (stop 42): GRPOTrainer observes no group without a checkable answer (a broken
    reference, answers that always time out), so such a prompt stayed unseen, and late in a run,
    with the other unseen prompts used up, unseen-prompt slots kept going to it: with 15% of 2,000
    prompts unscorable, 19% of the last third's rollouts over 300 steps (uniform: 15%)."""
    import numpy as np

    from passband.curriculum import Curriculum

    n, steps, rng = 2000, 300, np.random.default_rng(0)
    u = rng.random(n)
    rate = np.select([u < 0.4, u < 0.75], [0.97, 0.01], rng.uniform(0.2, 0.8, n))
    broken = rng.random(n) < 0.15
    cur = Curriculum(range(n), seed=0, run_groups=steps * 20)
    late = wasted = 0
    for step in range(steps):  # the trainer's loop: 16 a step, refills, at most 20 rolled
        used, kept = [], 0
        while kept < 16 and len(used) < 20:
            ids = cur.sample(min(16 - kept, 20 - len(used)), exclude=used)
            used += ids
            for i in ids:
                late += step >= 2 * steps // 3
                if broken[i]:
                    wasted += step >= 2 * steps // 3
                    cur.unscored(i)  # no checkable answer: what GRPOTrainer says then
                    continue
                s = int(rng.binomial(8, rate[i]))
                cur.observe(i, s, 8)
                kept += 0 < s < 8
    assert wasted / late < 0.12  # 0.101 measured; 0.19 before (uniform sampling: 0.15)
    assert cur.metrics()["unscored"] > 0


def test_an_unscored_prompt_with_evidence_keeps_its_estimate():
    """Parking a prompt handed out and never observed must not change what is known of it: its
    evidence (a pre-score here) keeps aging from when it was gathered, as a pre-scored prompt's
    that was never drawn does."""
    from passband.curriculum import Curriculum

    options = dict(seed=0, warmup_retest_after=1.0, evidence_half_life=50.0)
    cur = Curriculum(range(400), priors={i: (1, 8) for i in range(200)}, **options)
    drawn: set = set()
    for _ in range(80):
        for i in cur.sample(8):
            if i < 200:
                drawn.add(i)  # a pre-scored prompt whose group is never scored
                cur.unscored(i)
            else:
                cur.observe(i, 4, 8)
    est = cur.estimates()
    never = [est[i] for i in range(200) if i not in drawn]
    assert cur.metrics()["unscored"] > 0 and never
    assert max(abs(est[i] - never[0]) for i in drawn) < 1e-12


def test_prompts_sampled_ahead_are_not_taken_for_unscorable_ones():
    """A review (stop 42): parking prompts that went unobserved for 32 draws also parked those
    of a caller that samples ahead, and their first looks were lost (probes 1444 -> 3 with one
    prompt a draw and four groups in flight). Only ``unscored`` parks a prompt."""
    import numpy as np

    from passband.curriculum import Curriculum

    rng = np.random.default_rng(0)
    rate = rng.uniform(0.1, 0.9, 500)
    cur, queue = Curriculum(range(500), seed=0), []
    for _ in range(400):
        queue += cur.sample(1)
        if len(queue) > 40:  # observed 40 draws after it was handed out
            i = queue.pop(0)
            cur.observe(i, int(rng.binomial(8, rate[i])), 8)
    m = cur.metrics()
    # 3 when parked by time; 112 now (221 when a run of unknown length was taken as 500 draws,
    # before stop 44: in-band prompts now come back sooner, so fewer unseen ones are probed)
    assert m["unscored"] == 0 and m["probes"] >= 60


def test_an_unscored_parked_prompt_stays_in_its_pool_with_a_longer_wait():
    """A review: ``unscored`` on a too-easy prompt moved it to the warm-up pool, re-tested sooner
    (its wait 4096 -> 512) and classified too hard; a parked prompt now stays where it is."""
    from passband.curriculum import Curriculum

    cur = Curriculum(["easy", "hard", "new"], priors={"easy": (8, 8), "hard": (0, 8)}, seed=0)
    before = {p: cur.classify(p) for p in ("easy", "hard")}
    for p in ("easy", "hard", "new"):
        cur.unscored(p)
    assert {p: cur.classify(p) for p in ("easy", "hard")} == before
    assert cur.metrics()["pool/fresh"] == 0 and cur.metrics()["unscored"] == 3


def test_a_prompt_first_reported_unscored_then_scored_counts_as_a_first_look():
    """A review: its later look counted as a warm-up re-test and a readmission, missing the
    population prior's fit and ``probes``."""
    from passband.curriculum import Curriculum

    cur = Curriculum(["a", "b"], seed=0)
    cur.unscored("a")
    assert cur.classify("a") == "too_hard" and cur.metrics()["pool/fresh"] == 1
    cur.observe("a", 4, 8)
    m = cur.metrics()
    assert m["probes"] == 1 and m["retests"] == 0 and m["admissions"] == 1
    assert cur.classify("a") == "in_band"
