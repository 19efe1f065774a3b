"""Adaptive group size: the budget is kept, the floor holds, and answers go where they raise the
chance of a mixed group most (checked against brute force on small cases)."""

import itertools

import pytest

from passband.curriculum import Curriculum
from passband.curriculum.allocation import allocate, signal_chance


def test_budget_and_floor_hold_and_certain_prompts_get_the_floor():
    posts = [(1, 60), (30, 30), (60, 1), (2, 12), (1, 1)]  # hopeless, even, solved, edge, unknown
    sizes = allocate(posts, 40, floor=4)
    assert sum(sizes) == 40 and min(sizes) >= 4
    assert sizes[0] == sizes[2] == 4  # near certain: more answers would still agree
    assert sizes[3] == max(sizes)  # a pass rate near 0.15: the group most worth growing


def test_greedy_matches_brute_force_optimum():
    posts = [(1.5, 9.0), (4.0, 4.0), (9.0, 1.2), (1.0, 3.0)]
    budget, floor = 28, 4
    best = max(
        (c for c in itertools.product(range(floor, budget + 1), repeat=4) if sum(c) == budget),
        key=lambda c: sum(signal_chance(a, b, g) for (a, b), g in zip(posts, c)),
    )
    got = allocate(posts, budget, floor=floor)
    value = lambda c: sum(signal_chance(a, b, g) for (a, b), g in zip(posts, c))  # noqa: E731
    assert value(got) == pytest.approx(value(best), abs=1e-12)


def test_too_small_a_budget_is_an_error_and_multiples_are_kept():
    with pytest.raises(ValueError, match="cannot give 3 prompts the floor of 4"):
        allocate([(1, 1)] * 3, 11, floor=4)
    sizes = allocate([(1, 8), (2, 2), (8, 1)], 30, floor=4, multiple=2)
    assert sum(sizes) == 30 and all(s % 2 == 0 for s in sizes)


def test_curriculum_group_sizes_are_fixed_unless_switched_on():
    fixed = Curriculum(range(4))
    assert fixed.group_sizes([0, 1, 2, 3], 32) == [8, 8, 8, 8]
    sure = dict(prior_weight=1.0, max_evidence=1000.0)  # 400 of 400 passed: certain
    cur = Curriculum(range(4), adaptive_group_size=True, priors={0: (400, 400), 1: (2, 16)}, **sure)
    sizes = cur.group_sizes([0, 1, 2, 3], 32)
    assert sum(sizes) == 32 and min(sizes) >= 4
    assert sizes[0] == 4 and sizes[1] > 8  # solved: the floor; a rare success: the most answers
    floor6 = Curriculum(
        range(4), adaptive_group_size=True, min_group_size=6, priors={0: (400, 400)}, **sure
    ).group_sizes([0, 1, 2, 3], 32)
    assert floor6[0] == 6 and sum(floor6) == 32
