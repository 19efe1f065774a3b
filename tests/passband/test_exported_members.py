"""The core's public names, derived from the package; the contract's dotted names resolve."""

from __future__ import annotations
import __future__

import importlib
import re
import types
from pathlib import Path

import pytest

import passband

ARCHITECTURE = Path(__file__).resolve().parents[2].parent / "shared" / "ARCHITECTURE.md"


def _public(module) -> list[str]:
    """What a user reaches in ``module``: every name not starting with ``_``, submodules aside."""
    return sorted(
        k
        for k, v in vars(module).items()
        if not k.startswith("_")
        and not isinstance(v, types.ModuleType)
        and v is not __future__.annotations
    )


def test_the_core_exports_only_its_version():
    assert sorted(passband.__all__) == sorted([*_public(passband), "__version__"])
    assert isinstance(passband.__version__, str)


def test_every_package_lists_what_it_exports():
    for name in ("verifiers", "sandbox", "curriculum", "trainer"):
        package = importlib.import_module(f"passband.{name}")
        assert len(set(package.__all__)) == len(package.__all__), name
        for attr in package.__all__:
            assert getattr(package, attr) is not None, f"passband.{name}.{attr}"


@pytest.mark.skipif(
    not ARCHITECTURE.is_file(), reason=f"{ARCHITECTURE} not found (shared/ beside the checkout)"
)
def test_dotted_names_of_the_public_contract_are_exported():
    dotted = set(
        re.findall(
            r"passband\.(verifiers|sandbox|curriculum|trainer)\.(\w+)", ARCHITECTURE.read_text()
        )
    )
    assert dotted, "the contract names no passband.<package>.<name>"
    for package, name in sorted(dotted):
        assert name in importlib.import_module(f"passband.{package}").__all__, (
            f"passband.{package}.{name}"
        )
