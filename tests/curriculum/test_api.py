"""Pins the public names of passband.curriculum: a change here is a change users see."""

import passband.curriculum as curriculum


def test_public_names():
    assert sorted(curriculum.__all__) == sorted([
        "Curriculum", "CurriculumConfig", "PrescoreConfig", "PrescoreError", "PrescoreResult",
        "band_class", "plot_pass_rate_histogram", "prescore", "priors_from_rows", "read_rows",
        "write_rows",
    ])
    for name in curriculum.__all__:
        assert getattr(curriculum, name) is not None


def test_sampler_methods_and_metric_keys_of_the_contract():
    cur = curriculum.Curriculum(["a", "b"], band=(0.2, 0.8), priors=None, seed=0)
    for method in ("sample", "observe", "state_dict", "load_state_dict", "metrics", "estimate",
                   "classify"):
        assert callable(getattr(cur, method))
    keys = set(cur.metrics())
    assert {"in_band_share", "pool/active", "pool/warmup", "pool/easy", "admissions",
            "readmissions", "retests"} <= keys
    assert all(isinstance(v, (int, float)) for v in cur.metrics().values())


def test_histogram_png(tmp_path):
    path = curriculum.plot_pass_rate_histogram([0.0, 0.1, 0.5, 0.5, 0.9, 1.0, None], (0.2, 0.8),
                                               tmp_path / "h.png", title="t")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
