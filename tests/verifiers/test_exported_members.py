"""Pin the public API of passband.verifiers, derived from the package (httpx's test_exported_members)."""

import __future__

import types

import passband.verifiers as verifiers


def _public(module) -> list[str]:
    """What a user reaches in ``module``: every name not starting with ``_``, submodules aside."""
    return sorted(
        k
        for k, v in vars(module).items()
        if not k.startswith("_")
        and not isinstance(v, types.ModuleType)
        and v is not __future__.annotations
    )


def test_all_is_what_the_package_defines():
    """``__all__`` is derived from the package itself: a name imported into it is public and
    must be listed; a listed name must exist. Adding one is a conscious edit of ``__all__``."""
    assert sorted(verifiers.__all__) == _public(verifiers)
    assert len(verifiers.__all__) == len(set(verifiers.__all__)), "duplicate names in __all__"


def test_every_exported_name_exists():
    for name in verifiers.__all__:
        assert hasattr(verifiers, name), name


def test_builtin_verifier_names_are_registered():
    assert {"exact", "regex", "format", "json_schema", "math"} <= set(verifiers.names())


def test_no_torch_import():
    import subprocess
    import sys

    code = (
        "import sys, passband.verifiers, passband.verifiers.testing; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr
