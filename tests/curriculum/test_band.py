"""The band setting is checked by one function, shared by pre-scoring and the trainer."""

from __future__ import annotations

import pytest

from passband.curriculum import CurriculumConfig, PrescoreConfig, PrescoreError
from passband.curriculum.posterior import check_band
from passband.trainer.config import GRPOConfig


@pytest.mark.parametrize(
    "band",
    [(0.8, 0.2), (0.2, 0.2), (-0.1, 0.5), (0.5, 1.5), (0.2,), "ab", None, ("low", "high")]
    + [("0.1", "0.9")],  # numbers as text were read as numbers (a string is a mistake elsewhere)
)
def test_every_owner_rejects_a_bad_band_with_the_same_message(band):
    with pytest.raises(ValueError) as direct:
        check_band(band, owner="X")
    with pytest.raises(PrescoreError) as prescore:
        PrescoreConfig(band=band)
    with pytest.raises(ValueError) as trainer:
        GRPOConfig(band=band)
    with pytest.raises(ValueError) as curriculum:
        CurriculumConfig(band=band)
    expected = str(direct.value).removeprefix("X")
    assert str(prescore.value) == "PrescoreConfig" + expected
    assert str(curriculum.value) == "CurriculumConfig" + expected
    # the trainer checks exact types first: a band that is no pair of numbers says so instead
    typed = isinstance(band, tuple) and len(band) == 2 and all(isinstance(b, float) for b in band)
    assert str(trainer.value) == (
        "GRPOConfig" + expected
        if typed
        else f"GRPOConfig.band = {band!r} must be a list of 2 numbers"
    )
    assert "0 <= low < high <= 1" in expected and repr(band) in expected


def test_a_good_band_comes_back_as_two_floats():
    assert check_band([0, 1], owner="X") == (0.0, 1.0)
    with pytest.warns(DeprecationWarning, match="set \\[curriculum\\] band"):
        trained = GRPOConfig(band=[0.1, 0.9]).band  # the band now lives in [curriculum]
    assert PrescoreConfig(band=[0.1, 0.9]).band == trained == (0.1, 0.9)
