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
    for bad in (float("nan"), float("inf"), float("-inf")):  # inf swamped a Reward's total
        with pytest.raises(ValueError, match="must be finite"):
            Verdict(bad, "ok")


def _installed_plugin(tmp_path, monkeypatch, name: str, entry_points: str) -> None:
    """A real distribution ``name`` on sys.path (found by importlib) declaring ``entry_points``
    in the verifier group; the registry is a copy, with its plugins not loaded yet."""
    dist = tmp_path / f"{name.replace('-', '_')}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[passband.verifiers]\n" + entry_points)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))
    monkeypatch.setattr(_registry, "_plugins_loaded", False)


def test_an_entry_point_whose_name_is_taken_is_named_in_a_warning(tmp_path, monkeypatch):
    """A plugin registering ``exact`` was skipped without a word; it still does not replace the
    built-in, but its author is told. A real distribution on sys.path, found by importlib."""
    _installed_plugin(
        tmp_path,
        monkeypatch,
        "clash-plugin",
        "exact = clash_mod:always\nclash_new = clash_mod:always\n",
    )
    (tmp_path / "clash_mod.py").write_text(
        "from passband.verifiers import Verdict\n\n\ndef always(completion, **_):\n"
        "    return Verdict(1.0, 'ok')\n"
    )
    builtin = get("exact")
    with pytest.warns(UserWarning, match=r"plugin 'exact' \(clash_mod:always\) is not loaded"):
        assert get("clash_new")("anything").passed
    assert get("exact") is builtin and not get("exact")("anything", answer="4").passed


def test_a_plugin_that_registered_itself_through_a_re_export_is_not_warned_about(
    tmp_path, monkeypatch
):
    """``selfreg = selfreg_pkg:grade`` names, through the package's re-export, the very
    function ``selfreg_pkg.impl`` registered on import: no "name is taken" warning."""
    import warnings

    _installed_plugin(tmp_path, monkeypatch, "selfreg", "selfreg = selfreg_pkg:grade\n")
    pkg = tmp_path / "selfreg_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from selfreg_pkg.impl import grade\n")
    (pkg / "impl.py").write_text(
        "from passband.verifiers import Verdict, register\n\n\n@register('selfreg')\n"
        "def grade(completion, **_):\n    return Verdict(1.0, 'ok')\n"
    )
    import selfreg_pkg

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        names()  # loads the plugins
    assert get("selfreg") is selfreg_pkg.grade


def test_a_plugin_that_fails_to_import_is_named_as_broken_not_unknown(tmp_path, monkeypatch):
    """``get`` of an installed plugin whose module raises said "unknown verifier ... Known
    verifiers: ...", as if nothing were installed under that name."""
    _installed_plugin(tmp_path, monkeypatch, "broke-plugin", "broke = broke_mod:grade\n")
    monkeypatch.setattr(_registry, "_BROKEN", {})
    (tmp_path / "broke_mod.py").write_text("raise ImportError('needs libfoo')\n")
    with pytest.warns(UserWarning, match="could not load verifier plugin 'broke'"):
        with pytest.raises(KeyError) as info:
            get("broke")
    said = str(info.value)
    assert "plugin 'broke' is installed but could not be loaded (broke_mod:grade)" in said
    assert "ImportError: needs libfoo" in said and "Known verifiers" not in said


def test_the_demo_verifier_is_found_by_name_without_importing_the_demo_first():
    """The README names ``demo_arith``; ``passband score --verifier demo_arith`` failed as an
    unknown verifier because only importing ``passband.demo.task`` registered it. passband's own
    entry point names it now (a fresh interpreter: nothing imported the demo before)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom passband.verifiers import get\n"
        "assert 'passband.demo.task' not in sys.modules\n"
        "v = get('demo_arith')\nprint(v('12', answer='12').status, v('13', answer='12').status)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["ok", "wrong"]


def test_a_reloaded_definition_replaces_itself_another_one_still_clashes(
    clean_name, tmp_path, monkeypatch
):
    """importlib.reload of a verifier module (or a notebook cell run twice) raised 'already
    registered': the same module and qualified name is the same verifier, defined again."""
    import importlib
    import sys

    (tmp_path / "reloaded_verifiers.py").write_text(
        "from passband.verifiers import register\n\n"
        f"@register({clean_name!r})\ndef check(completion, **_):\n    return 1.0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("reloaded_verifiers")
    first = get(clean_name)
    importlib.reload(module)
    assert get(clean_name) is module.check and module.check is not first
    sys.modules.pop("reloaded_verifiers", None)

    def check(completion, **_):  # another function of that name, elsewhere: a clash
        return 0.0

    with pytest.raises(ValueError, match="already registered"):
        register(clean_name)(check)


def test_an_installed_verifiers_name_is_taken_before_it_loads(monkeypatch):
    """register("demo_arith") replaced the demo's verifier (an entry point not loaded yet)."""
    monkeypatch.delitem(_registry._REGISTRY, "demo_arith", raising=False)  # as in a fresh process
    monkeypatch.setattr(_registry, "_plugins_loaded", False)
    with pytest.raises(ValueError, match=r"'demo_arith' is installed \(passband.demo"):
        register("demo_arith")(lambda c, **r: 1.0)
    assert get("demo_arith").__class__.__module__.startswith("passband.demo")


@pytest.mark.parametrize("name", ["math ", " x", "pkg:fn", ""])
def test_names_with_spaces_around_or_a_colon_are_refused(name):
    with pytest.raises(ValueError, match="verifier name must be"):
        register(name)


def test_closures_of_one_factory_clash_configured_instances_made_again_do_not(clean_name):
    """The first version of the reload rule let a second closure of a factory replace the first
    in silence, and still refused code_verifier(...) made again by a cell run twice."""
    from passband.verifiers import code_verifier

    def factory(k):
        def check(completion, **_):
            return float(k)

        return check

    register(clean_name)(factory(1))
    with pytest.raises(ValueError, match="already registered"):
        register(clean_name)(factory(2))
    _registry._REGISTRY.pop(clean_name)
    register(clean_name)(code_verifier(timeout_s=5))
    again = code_verifier(timeout_s=5)
    assert register(clean_name)(again) is again and get(clean_name) is again
    with pytest.raises(ValueError, match="already registered"):
        register(clean_name)(code_verifier(timeout_s=6))
