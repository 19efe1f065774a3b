import pickle

import pytest

from passband.verifiers import Verdict, get, names, register
from passband.verifiers import registry as _registry


@pytest.fixture
def clean_name():
    name = "test_only_verifier"
    yield name
    _registry._REGISTRY.pop(name, None)


def test_register_get_and_names(clean_name):
    @register(clean_name)
    def always_ok(completion, **reference):
        return Verdict.ok("fine")

    assert get(clean_name) is always_ok
    assert clean_name in names()
    assert get(clean_name)("anything").passed


def test_duplicate_name_raises(clean_name):
    register(clean_name)(lambda c, **r: Verdict.ok())
    with pytest.raises(ValueError, match="already registered"):
        register(clean_name)(lambda c, **r: Verdict.wrong())


def test_unknown_name_lists_known_ones(clean_name):
    register(clean_name)(lambda c, **r: Verdict.ok())
    with pytest.raises(KeyError) as info:
        get("test_only_verifer")  # typo on purpose
    message = str(info.value)
    assert clean_name in message and "Did you mean" in message


@pytest.mark.parametrize("status", ["ok", "wrong", "invalid", "error", "timeout"])
def test_verdict_statuses_and_pickle(status):
    v = Verdict(0.5, status, "why", {"term": 0.5})
    assert v.passed == (status == "ok")
    assert v.checkable == (status not in ("error", "timeout"))
    clone = pickle.loads(pickle.dumps(v))
    assert clone == v and dict(clone.components) == {"term": 0.5}


def test_verdict_rejects_bad_status_and_nan():
    with pytest.raises(ValueError, match="status"):
        Verdict(1.0, "passed")
    with pytest.raises(ValueError, match="NaN"):
        Verdict(float("nan"), "ok")
