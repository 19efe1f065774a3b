"""Resume under changed settings, damaged states, and draws that must not drift (an adversarial
review of the public ``Curriculum`` API, 2026-12-04)."""

import copy
import json
import warnings

import numpy as np
import pytest

from passband.curriculum import Curriculum, CurriculumConfig


def _trained(cur: Curriculum, steps: int = 20, rate: int = 3, n: int = 16) -> Curriculum:
    for _ in range(steps):
        for pid in cur.sample(n):
            cur.observe(pid, rate, 8)
    return cur


def test_a_resume_under_another_band_moves_prompts_to_the_pools_it_gives():
    saved = json.loads(json.dumps(_trained(Curriculum(range(200))).state_dict()))
    resumed = Curriculum(range(200), band=(0.5, 0.9))
    with pytest.warns(UserWarning, match="changed settings.*band"):
        resumed.load_state_dict(saved)
    seen = [i for i in range(200) if resumed.estimate(i) < 0.5]
    assert seen and all(resumed.classify(i) == "too_hard" for i in seen)
    m = resumed.metrics()
    assert m["pool/active"] == 0 and m["pool/warmup"] + m["pool/fresh"] == 200
    drawn = resumed.sample(16)  # nothing in band: fresh prompts (none left) or re-tests
    assert len(drawn) == 16 and not any(resumed.classify(p) == "in_band" for p in drawn)


def test_a_resume_under_another_group_size_hint_uses_it():
    saved = _trained(Curriculum(range(50))).state_dict()
    resumed = Curriculum(range(50), group_size_hint=16)
    with pytest.warns(UserWarning, match="group_size_hint"):
        resumed.load_state_dict(saved)
    same = Curriculum(range(50))
    same.load_state_dict(saved)
    # a prompt at 3/8 disagrees more often in a group of 16 than in one of 8
    assert resumed.signal_chance([0])[0] > same.signal_chance([0])[0]


def test_the_state_stays_json_after_numpy_counts():
    cur = Curriculum(range(100))
    for pid in cur.sample(np.int64(16)):
        cur.observe(pid, np.int64(3), np.int64(8))
    json.dumps(cur.state_dict())
    with pytest.raises(ValueError, match=r"sample\(n=2.5\)"):
        cur.sample(2.5)


def test_one_odd_group_does_not_change_every_prompts_signal_chance():
    cur = Curriculum(range(100))
    for i in range(50):
        cur.observe(i, 1, 8)
    before = cur.signal_chance([0])
    cur.observe(60, 1, 2)
    cur.observe(61, 1, 10**9)  # absurd, and cheap: it does not become G
    assert cur.state_dict()["group_size"] == 8
    assert abs(cur.signal_chance([0])[0] - before[0]) < 0.01  # it read 0.2 when G followed it
    cur.sample(64)  # not slowed by the huge group


def test_one_outsized_draw_does_not_stay_the_draw_size():
    cur = _trained(Curriculum(range(5000)), steps=5, n=64)
    cur.sample(4000)
    assert cur.state_dict()["n_hint"] == 4000
    _trained(cur, steps=40, n=64)
    assert cur.state_dict()["n_hint"] == 64


def test_prompts_never_observed_stop_blocking_and_are_forgotten():
    cur = Curriculum(range(10_000))
    for _ in range(100):
        cur.sample(64)  # drawn, never observed
    assert len(cur.state_dict()["pending"]) <= 33 * 64


def test_a_draw_is_distinct_while_distinct_prompts_exist():
    cur = Curriculum(range(10))
    first = cur.sample(8)
    second = cur.sample(4)
    assert len(set(second)) == 4 and len(set(first) & set(second)) == 2
    few = Curriculum(range(3)).sample(5)  # only 3 exist: repeats
    assert len(few) == 5 and set(few) == {0, 1, 2}


def test_texts_follow_their_ids_when_a_state_is_loaded_in_another_order():
    ids = [f"q{i}" for i in range(100)]
    texts = [("easy sum " if i % 2 else "hard integral ") + str(i) for i in range(100)]
    a = Curriculum(ids, texts=texts)
    for _ in range(12):
        for pid in a.sample(8):
            a.observe(pid, 4 if int(pid[1:]) % 2 else 0, 8)
    b = Curriculum(ids[::-1], texts=texts[::-1])
    b.load_state_dict(a.state_dict())
    assert b.signal_chance(ids) == a.signal_chance(ids)  # unseen ones ranked by their texts
    assert b.sample(8) == a.sample(8)


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s.pop("queues"),
        lambda s: s["arrays"].update(succ=Curriculum(range(10)).state_dict()["arrays"]["succ"]),
        lambda s: s["pending"].append([10**6, 0]),
    ],
)
def test_a_damaged_state_is_refused_and_changes_nothing(damage):
    cur = _trained(Curriculum(range(50)))
    twin = copy.deepcopy(cur)
    state = copy.deepcopy(_trained(Curriculum(range(50)), steps=3, rate=8).state_dict())
    damage(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="damaged or incomplete"):
            cur.load_state_dict(state)
    assert cur.sample(16) == twin.sample(16) and cur.metrics() == twin.metrics()


@pytest.mark.parametrize(
    "build, error, words",
    [
        (lambda: Curriculum(range(3), base_prior=(float("inf"), 1)), "ConfigError", "finite"),
        (lambda: Curriculum(range(3), band=(0.2, True)), "ConfigError", "band"),
        (
            lambda: Curriculum(range(3), adaptive_group_size=True, min_group_size=16),
            "ConfigError",
            "min_group_size=16",
        ),
        (lambda: Curriculum(range(3), seed=None), "TypeError", "seed=None"),
        (
            lambda: Curriculum(range(3), config=CurriculumConfig(band=(0.3, 0.7)), band=(0.2, 0.8)),
            "TypeError",
            "not both",
        ),
        (lambda: Curriculum(range(3), config=5), "TypeError", "mapping"),
        (lambda: Curriculum(range(3)).group_sizes([0, 1, 2], -5), "ValueError", "budget=-5"),
        (lambda: Curriculum(range(3)).group_sizes([0, 1, 2], 2), "ValueError", "budget=2"),
    ],
)
def test_settings_that_would_break_the_estimates_are_refused(build, error, words):
    with pytest.raises(Exception) as info:
        build()
    assert type(info.value).__name__ == error and words in str(info.value)


def test_a_config_may_be_a_mapping_of_its_fields():
    cur = Curriculum(range(3), config={"band": (0.3, 0.7), "group_size": 4})
    assert cur.config.band == (0.3, 0.7) and cur.config.group_size_hint == 4
    big = CurriculumConfig(adaptive_group_size=True, min_group_size=16, group_size_hint=16)
    assert Curriculum(range(3), config=big).group_sizes([0, 1], 32) == [16, 16]


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"steps": 0}, "steps=0"),
        ({"n_prompts": 0}, "n_prompts=0"),
        ({"mix": (2, -1, 0)}, "mix="),
        ({"curriculum_options": {"band": (0.1, 0.9)}}, "SimConfig.band"),
    ],
)
def test_a_simulation_that_cannot_run_is_refused_naming_the_setting(settings, words):
    from passband.curriculum.simulate import SimConfig

    with pytest.raises(ValueError, match=words):
        SimConfig(**settings)
