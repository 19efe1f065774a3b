import json
import random
import subprocess
import sys

import numpy as np
import pytest

from passband.curriculum import Curriculum, CurriculumConfig


def _drive(cur: Curriculum, rates: dict, steps: int, n: int, rng: random.Random, g: int = 8):
    """Sample/observe loop with a refill like the trainer's; returns every id handed out."""
    out = []
    for _ in range(steps):
        ids = cur.sample(n)
        refill = cur.sample(max(1, n // 4), exclude=ids)
        for pid in ids + refill:
            cur.observe(pid, sum(rng.random() < rates[pid] for _ in range(g)), g)
        out.append(ids + refill)
    return out


def test_sample_is_distinct_and_respects_exclude():
    cur = Curriculum(range(50), seed=1)
    first = cur.sample(20)
    assert len(first) == 20 == len(set(first))
    second = cur.sample(20, exclude=first)
    assert not set(first) & set(second) and len(set(second)) == 20
    # fewer prompts than asked for: every prompt once, then repeats (counted)
    small = Curriculum(["a", "b", "c"])
    got = small.sample(5)
    assert sorted(set(got)) == ["a", "b", "c"] and len(got) == 5
    assert small.metrics()["drawn/repeat"] == 2


def test_handed_out_prompts_are_not_handed_out_again_before_observed():
    cur = Curriculum(range(30), seed=0)
    a = cur.sample(10)
    b = cur.sample(10)
    assert not set(a) & set(b)


def test_same_seed_same_draws_and_other_seed_differs():
    rates = {i: i / 99 for i in range(100)}
    runs = [
        _drive(Curriculum(range(100), seed=s), rates, 20, 16, random.Random(7)) for s in (3, 3, 4)
    ]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_resume_from_json_state_continues_exactly():
    rates = {i: random.Random(i).random() for i in range(200)}
    straight = Curriculum(range(200), seed=5, priors={i: (4, 8) for i in range(0, 200, 3)})
    head = _drive(straight, rates, 15, 16, random.Random(11))
    state = json.loads(json.dumps(straight.state_dict()))  # through real JSON
    rng_state = random.Random(99)
    tail = _drive(straight, rates, 15, 16, rng_state)

    resumed = Curriculum(range(200), seed=123)  # seed and priors come back from the state
    resumed.load_state_dict(state)
    again = _drive(resumed, rates, 15, 16, random.Random(99))
    assert again == tail and head != tail
    assert resumed.metrics() == straight.metrics()
    assert resumed.estimates() == straight.estimates()


def test_load_state_rejects_other_prompts():
    state = Curriculum(range(10)).state_dict()
    with pytest.raises(ValueError, match="other prompts"):
        Curriculum(range(11)).load_state_dict(state)
    with pytest.raises(ValueError, match="not a curriculum state"):
        Curriculum(range(10)).load_state_dict({"format": "x"})


def test_unanimous_groups_move_prompts_out_of_the_band_and_are_counted():
    cur = Curriculum(["hard", "easy", "mid"], seed=0)
    cur.observe("hard", 0, 8)
    cur.observe("easy", 8, 8)
    cur.observe("mid", 4, 8)
    assert [cur.classify(p) for p in ("hard", "easy", "mid")] == ["too_hard", "too_easy", "in_band"]
    m = cur.metrics()
    assert (m["pool/warmup"], m["pool/easy"], m["pool/active"]) == (1, 1, 1)
    assert (m["probes"], m["admissions"], m["to_warmup"], m["to_easy"]) == (3, 1, 1, 1)
    assert m["groups_with_signal"] == 1 and m["groups_observed"] == 3
    assert cur.estimate("hard") < 0.2 < cur.estimate("mid") < 0.8 < cur.estimate("easy")


def test_warmup_prompt_is_retested_on_schedule_and_readmitted():
    cfg = dict(
        warmup_retest_after=40,
        warmup_retest_share=0.25,
        easy_retest_share=0.0,
        min_explore_share=0.0,
    )
    ids = ["hopeless"] + [f"m{i}" for i in range(40)]
    cur = Curriculum(ids, seed=0, **cfg)
    for i in range(40):
        cur.observe(f"m{i}", 4, 8)
    cur.observe("hopeless", 0, 8)
    assert cur.classify("hopeless") == "too_hard"
    due_at = cur.metrics()["clock"] + 40
    seen_at = None
    for _ in range(30):
        ids_now = cur.sample(8)
        clock = cur.metrics()["clock"]
        if "hopeless" in ids_now:
            seen_at = clock
            assert clock >= due_at
            break
        for pid in ids_now:
            cur.observe(pid, 4, 8)
    assert seen_at is not None, "the warm-up prompt was never re-tested"
    cur.observe("hopeless", 5, 8)  # the policy caught up
    assert cur.classify("hopeless") == "in_band"
    assert cur.metrics()["readmissions"] == 1 and cur.metrics()["retests/warmup"] == 1


def _waits(cur):
    """Each prompt's re-test wait, read back from the (compact, array) state."""
    from passband.curriculum._state import decode

    return decode(cur.state_dict()["arrays"]["wait"]).tolist()


def test_failed_retests_back_off():
    cur = Curriculum(["x", "y"], warmup_retest_after=10, retest_backoff=2.0, max_retest_after=35)
    cur.observe("x", 0, 8)
    waits = []
    for _ in range(4):
        waits.append(_waits(cur)[0])
        cur.observe("x", 0, 8)  # a re-test, still all wrong
    assert waits == [10, 20, 35, 35]


def test_a_mixed_retest_that_stays_out_of_the_band_backs_off_too():
    """One success in 8 after a record of failures leaves the prompt too hard: its wait grows
    as after an all-wrong group, so it cannot take the re-test slots of prompts not seen since."""
    cur = Curriculum(["x", "y"], warmup_retest_after=10, retest_backoff=2.0, max_retest_after=35)
    for _ in range(3):
        cur.observe("x", 0, 8)
    assert _waits(cur)[0] == 35
    cur.observe("x", 1, 8)  # mixed, still too hard
    assert cur.classify("x") == "too_hard" and _waits(cur)[0] == 35
    cur = Curriculum(["x", "y"], warmup_retest_after=10, retest_backoff=2.0, max_retest_after=80)
    cur.observe("x", 0, 8)
    cur.observe("x", 1, 8)
    assert cur.classify("x") == "too_hard" and _waits(cur)[0] == 20


def test_priors_are_down_weighted_and_classify_before_any_observation():
    cur = Curriculum(
        ["p", "q", "r"], priors={"p": (0, 16), "q": (16, 16), "zzz": (1, 2)}, prior_weight=0.25
    )
    assert cur.classify("p") == "too_hard" and cur.classify("q") == "too_easy"
    assert cur.classify("r") == "in_band"  # no prior: Beta(1, 1)
    assert cur.estimate("p") == pytest.approx(1 / (2 + 4))  # 16 trials count as 4
    m = cur.metrics()
    assert m["priors/used"] == 2 and m["priors/unused"] == 1 and m["pool/fresh"] == 1
    # with a prior, one contrary group is not enough to move an easy prompt
    cur.observe("q", 3, 8)
    assert cur.estimate("q") > 0.5


def test_in_band_prompts_near_half_are_preferred():
    def draws(**options):
        ids = list(range(60))
        cur = Curriculum(
            ids,
            seed=2,
            min_explore_share=0.0,
            warmup_retest_share=0.0,
            easy_retest_share=0.0,
            **options,
        )
        rates = {i: 0.5 if i < 10 else 0.22 for i in ids}
        for i in ids:
            for _ in range(3):
                cur.observe(i, round(rates[i] * 8), 8)
        counts = {i: 0 for i in ids}
        for _ in range(50):
            for pid in cur.sample(10):
                counts[pid] += 1
                cur.observe(pid, round(rates[pid] * 8), 8)
        return counts

    assert sum(draws(cooldown_factor=0.0)[i] for i in range(10)) > 0.6 * 500  # no reuse penalty
    # with the default cooldown every in-band prompt is walked through like an epoch (none is
    # re-drawn within its cooldown), the central ones first in each pass
    counts = draws()
    central, edge = (
        sum(counts[i] for i in range(10)) / 10,
        sum(counts[i] for i in range(10, 60)) / 50,
    )
    assert central > 1.05 * edge and min(counts.values()) >= 6


def test_easy_policy_drop_vs_downweight():
    ids = [f"e{i}" for i in range(20)] + ["m0", "m1"]
    for policy, expect_easy in (("drop", False), ("downweight", True)):
        cur = Curriculum(
            ids,
            easy_policy=policy,
            easy_retest_share=0.0,
            warmup_retest_share=0.0,
            min_explore_share=0.0,
            cooldown_factor=0.0,
        )
        for pid in ids:
            cur.observe(pid, 8 if pid.startswith("e") else 4, 8)
        drawn = cur.sample(2)
        assert sorted(drawn) == ["m0", "m1"]
        more = cur.sample(5, exclude=drawn)  # the in-band pool is exhausted
        assert len(more) == 5 and all(p.startswith("e") for p in more)
        key = "drawn/active" if expect_easy else "drawn/fallback"
        assert cur.metrics()[key] >= 5


def test_hard_pool_cap_parks_the_longest_hopeless():
    cur = Curriculum(range(5), max_warmup_pool=2, warmup_retest_after=10, max_retest_after=1000)
    for i in range(3):
        cur.observe(i, 0, 8)
    assert cur.metrics()["parked"] == 1
    waits = sorted(_waits(cur)[:3])
    assert waits == [10, 10, 1000]


def test_bad_inputs_name_the_problem():
    cur = Curriculum(["a"])
    with pytest.raises(KeyError, match="unknown prompt id 'b'"):
        cur.observe("b", 1, 8)
    with pytest.raises(ValueError, match="successes=9, trials=8"):
        cur.observe("a", 9, 8)
    with pytest.raises(ValueError, match="duplicate prompt id"):
        Curriculum(["a", "a"])
    with pytest.raises(TypeError, match="unknown curriculum option"):
        Curriculum(["a"], hard_retest_every=3)
    with pytest.raises(ValueError, match=r"CurriculumConfig.band = \(0.8, 0.2\) is out of range"):
        Curriculum(["a"], band=(0.8, 0.2))
    with pytest.raises(ValueError, match="easy_policy"):
        CurriculumConfig(easy_policy="forget")
    with pytest.raises(
        ValueError,
        match=r"warmup_retest_share=1.5 is outside the allowed range: "
        r"a number in \[0, 1\]",
    ):
        CurriculumConfig(warmup_retest_share=1.5)
    with pytest.raises(ValueError, match=r"spaced_reuse=1.0 is outside .* in \[0, 1\)"):
        CurriculumConfig(spaced_reuse=1.0)  # at 1 a prompt would never come back
    with pytest.raises(ValueError, match=r"run_groups=1.5 is outside"):
        CurriculumConfig(run_groups=1.5)
    with pytest.raises(TypeError, match="selection.*no longer exists"):
        Curriculum(["a"], selection="pool")


def test_inputs_that_were_misread_silently_are_refused_or_read_as_meant():
    """An independent review (stop 40): a string prior "38" was read as 3 passes of 8, ``True``
    as a pass rate of 1, ``exclude="ab"`` as the ids 'a' and 'b'; ``exclude=None``, a list of
    priors and ``seed=-1`` failed without naming what was wrong."""
    with pytest.raises(ValueError, match=r"prior for 'ab' .* got '38' \(numbers, not text"):
        Curriculum(["ab", "c"], priors={"ab": "38"})
    with pytest.raises(ValueError, match="got True"):
        Curriculum(["ab", "c"], priors={"ab": True})
    with pytest.raises(ValueError, match=r"got \('3', 8\)"):
        Curriculum(["ab", "c"], priors={"ab": ("3", 8)})
    with pytest.raises(TypeError, match="priors must map prompt ids .* got a list"):
        Curriculum(["ab", "c"], priors=[("ab", (3, 8))])
    with pytest.raises(ValueError, match="seed=-1 must be a whole number >= 0"):
        Curriculum(["ab"], seed=-1)
    cur = Curriculum(["ab", "a", "b"], seed=0)
    for _ in range(5):
        assert "ab" not in cur.sample(2, exclude="ab")  # one id, not its characters
    assert len(cur.sample(1, exclude=None)) == 1
    numbered = Curriculum(range(3), seed=0, priors={0: np.array(0.4), 1: (np.int64(2), 8)})
    for _ in range(5):
        assert 0 not in numbered.sample(2, exclude=0)  # one int id


def test_curriculum_never_imports_torch():
    code = (
        "import sys, passband.curriculum, passband.curriculum.simulate, "
        "passband.curriculum.prescore; "
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_signal_surplus_is_spent_on_warmup_retests():
    def retests(rounds=4, **options):
        options = {"warmup_retest_share": 0.05, **options}  # a base under the top: the rise shows
        cur = Curriculum(range(600), warmup_retest_after=1, min_explore_share=0.0, **options)
        for i in range(300):
            cur.observe(i, 0, 8)  # the warm-up pool, due for re-tests right away
        for _ in range(rounds):
            for i in range(300, 600):
                cur.observe(i, 4, 8)  # groups with signal: the budget builds up
        cur.sample(100)
        return cur.metrics()["drawn/retest_warmup"]

    # 1200 groups at 0.2 over the floor (4 rounds): the discovery budget saturates
    assert retests(signal_floor=1.0) == 5  # no surplus: the base 5%
    assert retests() == 20  # default floor 0.8: full surplus, up to max_warmup_retest_share
    assert retests(max_warmup_retest_share=0.05) == 5
    assert 5 < retests(rounds=1) < 20  # 300 groups: still building (it integrates, no jump)


def test_numpy_ids_and_counts_are_accepted_as_plain_values():
    np = pytest.importorskip("numpy")
    cur = Curriculum(np.arange(10), priors={np.int64(3): (np.int64(0), np.int64(8)), 4: 1.0})
    ids = cur.sample(4)
    assert all(type(i) is int for i in ids)
    cur.observe(np.int64(ids[0]), np.int64(4), np.int64(8))
    assert cur.classify(np.int64(3)) == "too_hard" and cur.classify(4) == "too_easy"
    json.dumps(cur.state_dict())


def test_fresh_prompts_get_the_exploration_floor_when_they_look_worse_than_known_ones():
    def fresh_drawn(**options):
        cur = Curriculum(  # no cooldown: the known prompts were all drawn just now
            range(3600),
            warmup_retest_share=0.0,
            max_warmup_retest_share=0.0,
            cooldown_factor=0.0,
            **options,
        )
        for i in range(300, 3000):
            cur.observe(i, 0, 8)  # most first looks are hopeless: an unseen prompt looks poor
        for _ in range(4):
            for i in range(300):
                cur.observe(i, 4, 8)  # known in-band prompts and a sustained signal surplus
        assert 0.05 < cur.metrics()["fresh_signal"] < 0.25  # 300 of 3000 first looks (decayed)
        cur.sample(100)
        return cur.metrics()["drawn/fresh"]

    assert fresh_drawn(signal_floor=1.0) == 2  # min_explore_share only
    assert fresh_drawn() == 20  # surplus_explore_share


def test_an_all_in_band_population_is_covered_before_any_prompt_repeats():
    rng = random.Random(0)
    cur = Curriculum(range(400), seed=3)
    seen, first_repeat = set(), None
    for _ in range(40):
        ids = cur.sample(16)
        refill = cur.sample(4, exclude=ids)
        for pid in ids + refill:
            if pid in seen and first_repeat is None:
                first_repeat = len(seen)
            seen.add(pid)
            cur.observe(pid, sum(rng.random() < 0.5 for _ in range(8)), 8)
    assert first_repeat is not None and first_repeat >= 0.9 * 400
    assert cur.metrics()["coverage"] == 1.0 and cur.metrics()["fresh_signal"] > 0.9


def test_a_prompt_just_trained_on_is_not_redrawn_within_the_cooldown():
    cur = Curriculum(range(100), seed=4, warmup_retest_share=0.0, easy_retest_share=0.0)
    for pid in cur.sample(100):
        cur.observe(pid, 4, 8)  # every prompt known and in band: no fresh ones left
    drawn = []
    for _ in range(10):
        ids = cur.sample(8)
        drawn += ids
        for pid in ids:
            cur.observe(pid, 4, 8)
    assert len(set(drawn)) == 80  # 80 draws, no prompt twice while 100 are in band
    assert cur.metrics()["cooldown"] > 80
    # without the cooldown the highest-scoring prompts are re-drawn at once
    hot = Curriculum(
        range(100), seed=4, warmup_retest_share=0.0, easy_retest_share=0.0, cooldown_factor=0.0
    )
    for pid in hot.sample(100):
        hot.observe(pid, 4, 8)
    first = hot.sample(8)
    for pid in first:
        hot.observe(pid, 4, 8)
    assert set(hot.sample(8)) == set(first)  # more evidence, higher P(signal): memorisation


def test_surplus_retests_wait_while_fresh_prompts_are_better():
    def retests(n_fresh):
        cur = Curriculum(
            range(600 + n_fresh),
            warmup_retest_after=1,
            warmup_retest_share=0.05,  # a base under the top
            min_explore_share=0.0,
            priors={i: (0, 8) for i in range(300)},
        )  # a warm-up pool, due at once
        for _ in range(4):
            for i in range(300, 600):
                cur.observe(i, 4, 8)  # every first look had signal: a full discovery budget
        cur.sample(100)
        return cur.metrics()["drawn/retest_warmup"]

    assert retests(0) == 20  # nothing unseen left: the surplus goes to re-tests
    assert retests(600) == 5  # unseen prompts are likelier to disagree: only the scheduled base


@pytest.mark.parametrize("successes, trials", [(0.7, 1), (2.9, 8), ("3", 8), (3, 8.5), (True, 8)])
def test_observe_refuses_counts_that_are_not_whole_numbers(successes, trials):
    """A sum of shaped rewards (2.9) was truncated to 2 without a word."""
    cur = Curriculum(range(4))
    with pytest.raises(ValueError, match="need whole numbers"):
        cur.observe(1, successes, trials)
    cur.observe(1, 3.0, np.int64(8))  # whole numbers of any numeric type are counts
    torch = pytest.importorskip("torch")
    cur.observe(2, torch.tensor(3), torch.tensor(8.0))  # 0-d tensors from a custom loop, too
    assert cur.metrics()["groups_observed"] == 2
    with pytest.raises(ValueError, match="need whole numbers"):
        cur.observe(1, torch.tensor(2.5), 8)


@pytest.mark.parametrize("prior", [(float("inf"), float("inf")), (1.0, float("nan")), float("inf")])
def test_non_finite_priors_are_refused(prior):
    """An infinite count gave a NaN estimate and a state that JSON cannot hold."""
    with pytest.raises(ValueError, match="not finite"):
        Curriculum(range(3), priors={0: prior})


def test_prior_weight_zero_ignores_the_priors_altogether():
    """At weight 0 the counts still fitted the population prior and counted as used."""
    from passband.curriculum._priors import TrainingPriors

    priors = {i: (0, 8) for i in range(50)}
    cur = Curriculum(range(60), priors=priors, prior_weight=0.0)
    plain = Curriculum(range(60))
    assert cur.metrics()["priors/used"] == 0
    assert cur.signal_chance([0, 55]) == plain.signal_chance([0, 55])
    line = TrainingPriors(priors=priors, rows=60, sources={"passes/trials": 50}).summary(0.0, 0.5)
    assert line.endswith("ignored: prior_weight = 0")
