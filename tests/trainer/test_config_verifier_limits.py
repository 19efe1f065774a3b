"""GRPOConfig's verifier_timeout / verifier_workers follow verify_batch's own rule: one rule.

The trainer hands both values to ``verify_batch``; the config checks them at construction (so a
bad value fails before any model loads) with the rule ``verify_batch`` applies on every call, so
neither accepts a value the other refuses.
"""

from __future__ import annotations

import math

import pytest

from passband.errors import ConfigError
from passband.trainer.config import GRPOConfig
from passband.verifiers import verify_batch


def _refused(build) -> str | None:
    """The ValueError's message when ``build()`` refuses its value, else None."""
    try:
        build()
    except ValueError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("timeout", [10.0, 0.5, 3, 0.0, -1.0, math.inf, math.nan])
def test_verifier_timeout_is_refused_exactly_where_verify_batch_refuses_it(timeout):
    by_config = _refused(lambda: GRPOConfig(verifier_timeout=timeout))
    by_batch = _refused(lambda: verify_batch("exact", [], timeout=timeout))  # checks, runs nothing
    assert (by_config is None) == (by_batch is None), (by_config, by_batch)
    if by_config is not None:
        assert "verifier_timeout" in by_config and repr(timeout) in by_config
        assert "timeout" in by_batch and repr(timeout) in by_batch


@pytest.mark.parametrize("workers", [None, 1, 4, 0, -2, True])
def test_verifier_workers_are_refused_exactly_where_verify_batch_refuses_them(workers):
    by_config = _refused(lambda: GRPOConfig(verifier_workers=workers))
    by_batch = _refused(lambda: verify_batch("exact", [], workers=workers))
    assert (by_config is None) == (by_batch is None), (by_config, by_batch)
    if by_config is not None:
        assert "verifier_workers" in by_config and "workers" in by_batch


def test_a_refused_verifier_setting_is_a_config_error():
    with pytest.raises(ConfigError, match=r"GRPOConfig\.verifier_timeout = inf"):
        GRPOConfig(verifier_timeout=math.inf)
