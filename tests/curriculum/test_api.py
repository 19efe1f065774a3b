"""Pins the public names of passband.curriculum: a change here is a change users see."""

import __future__

import types

import passband.curriculum as curriculum


def _public(module) -> list[str]:
    """What a user reaches in ``module``: every name not starting with ``_``, submodules aside."""
    return sorted(
        k
        for k, v in vars(module).items()
        if not k.startswith("_")
        and not isinstance(v, types.ModuleType)
        and v is not __future__.annotations
    )


def test_public_names():
    """``__all__`` is what the package defines or imports without a ``_``, submodules aside."""
    lazy = ["Curriculum"]  # numpy-backed, loaded on first use by the package's __getattr__
    assert sorted(curriculum.__all__) == sorted(_public(curriculum) + lazy)
    assert len(set(curriculum.__all__)) == len(curriculum.__all__)
    for name in curriculum.__all__:
        assert getattr(curriculum, name) is not None


def test_sampler_methods_and_metric_keys_of_the_contract():
    cur = curriculum.Curriculum(["a", "b"], band=(0.2, 0.8), priors=None, seed=0)
    for method in (
        "sample",
        "observe",
        "state_dict",
        "load_state_dict",
        "metrics",
        "estimate",
        "classify",
    ):
        assert callable(getattr(cur, method))
    keys = set(cur.metrics())
    assert {
        "in_band_share",
        "pool/active",
        "pool/warmup",
        "pool/easy",
        "admissions",
        "readmissions",
        "retests",
    } <= keys
    assert all(isinstance(v, (int, float)) for v in cur.metrics().values())


def test_histogram_png(tmp_path):
    path = curriculum.plot_pass_rate_histogram(
        [0.0, 0.1, 0.5, 0.5, 0.9, 1.0, None], (0.2, 0.8), tmp_path / "h.png", title="t"
    )
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_a_bool_is_no_prompt_id_anywhere():
    """Refused as ids at construction, True and False were still read as ids 1 and 0 by
    ``observe`` and by priors (a stop-44 review)."""
    import pytest

    from passband.curriculum import Curriculum

    cur = Curriculum(range(5), priors={True: (8, 8)})
    assert cur.metrics()["priors/used"] == 0
    with pytest.raises(KeyError, match="unknown prompt id False"):
        cur.observe(False, 0, 8)
    assert 1 in cur.sample(5, exclude=[True])  # excludes no id


def test_group_sizes_are_plain_ints_for_any_whole_budget():
    import pytest

    from passband.curriculum import Curriculum

    np = pytest.importorskip("numpy")
    cur = Curriculum(range(5))
    for budget in (24, 24.0, np.int64(24)):
        sizes = cur.group_sizes([0, 1, 2], budget)
        assert sizes == [8, 8, 8] and all(type(x) is int for x in sizes)


def test_a_run_of_unknown_length_still_brings_in_band_prompts_back():
    """With ``run_groups`` unknown the run was taken as 500 draws: over a dataset larger than a
    shorter run no in-band prompt came back (``drawn/active`` 0; a stop-44 review)."""
    import numpy as np

    from passband.curriculum import Curriculum

    n, rng = 40_000, np.random.default_rng(0)
    p = np.where(rng.random(n) < 0.4, 0.97, np.where(rng.random(n) < 0.6, 0.01, 0.5))
    cur = Curriculum(range(n), seed=0)
    for _ in range(120):
        for i in cur.sample(64):
            cur.observe(i, int(rng.binomial(8, p[i])), 8)
    assert cur.metrics()["drawn/active"] > 0
