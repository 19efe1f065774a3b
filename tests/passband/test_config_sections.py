"""``passband.config``: the [reward] penalties come from the verifiers' registry, and section
values are checked against the fields' real type hints (a new field type needs no new code)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from passband.config import _section, load_config
from passband.errors import UsageError
from passband.verifiers import Reward, register_penalty
from passband.verifiers.penalties import length_cap

TOML = """
[model]
path = "/models/tiny"
[data]
path = "rows.jsonl"
[reward]
verifier = "exact"
[reward.penalties.test_cap_from_toml]
max_length = 5
"""


def test_a_penalty_registered_by_the_user_is_accepted_in_a_config_file(tmp_path):
    register_penalty("test_cap_from_toml", replace=True)(length_cap)
    path = tmp_path / "run.toml"
    path.write_text(TOML)
    reward, _ = load_config(path).reward.build()
    assert isinstance(reward, Reward) and "length_cap" in reward.component_names
    assert (
        reward("a much longer answer", answer="a much longer answer").score == 0.0
    )  # the cap fired


def test_the_old_penalty_tuple_still_works_but_warns():
    import passband.config as config

    with pytest.warns(DeprecationWarning, match="penalty_names"):
        assert "overlong" in config.PENALTIES


@dataclass(frozen=True)
class _NewKinds:
    ratio: float = 0.5
    flag: bool = False
    names: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    note: str | None = None


def test_field_types_are_checked_from_the_real_hints():
    built = _section(
        _NewKinds,
        {"ratio": 1, "flag": True, "names": ["a"], "weights": {"x": 2.5}, "note": "n"},
        "new",
        "run.toml",
    )
    assert built == _NewKinds(1, True, ["a"], {"x": 2.5}, "n")


@pytest.mark.parametrize(
    "values, words",
    [
        ({"ratio": "high"}, ["[new] ratio", "'high'", "a number"]),
        ({"ratio": True}, ["[new] ratio", "a number"]),
        ({"flag": 1}, ["[new] flag", "true or false"]),
        ({"names": ["a", 3]}, ["[new] names", "a list of strings"]),
        ({"weights": {"x": "heavy"}}, ["[new] weights", "a table of numbers"]),
        ({"note": 3}, ["[new] note", "a string"]),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key_and_the_type(values, words):
    with pytest.raises(UsageError) as info:
        _section(_NewKinds, values, "new", "run.toml")
    for word in words:
        assert word in str(info.value)
