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
