"""``passband doctor``: the learning-rate range follows the model's parameter count."""

import json
from pathlib import Path

import pytest

from passband._doctor import (
    LARGE_MODEL_PARAMS,
    SMALL_MODEL_PARAMS,
    check_settings,
    learning_rate_range,
)
from passband._estimate import shape_from_config
from passband.cli import main
from passband.trainer.config import RECOMMENDED, GRPOConfig

ROOT = Path(__file__).resolve().parents[2]
# The shapes of two real models' config.json (only the fields the count reads): SmolLM2-135M
# and Llama-2-7B. Written out here, so the tests need neither the prepared model nor a hub.
SMOLLM2_135M = {
    "model_type": "llama",
    "hidden_size": 576,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "head_dim": 64,
    "intermediate_size": 1536,
    "vocab_size": 49152,
    "hidden_act": "silu",
    "tie_word_embeddings": True,
    "max_position_embeddings": 8192,
}
LLAMA_7B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "intermediate_size": 11008,
    "vocab_size": 32000,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "max_position_embeddings": 4096,
}


def _lr_finding(lr: float, params: float | None):
    values = {**GRPOConfig().to_dict(), "learning_rate": lr}
    (found,) = [
        f for f in check_settings(values, {"learning_rate"}, params) if f.field == "learning_rate"
    ]
    return found


@pytest.mark.parametrize(
    "params,expected",
    [
        (135e6, (1e-6, 2e-5)),
        (SMALL_MODEL_PARAMS, (1e-6, 2e-5)),  # the boundary belongs to the small tier
        (SMALL_MODEL_PARAMS + 1, (1e-6, 5e-6)),
        (7e9, (1e-6, 5e-6)),
        (LARGE_MODEL_PARAMS - 1, (1e-6, 5e-6)),
        (LARGE_MODEL_PARAMS, (5e-7, 1e-6)),
        (70e9, (5e-7, 1e-6)),
    ],
)
def test_range_follows_the_parameter_count(params, expected):
    assert learning_rate_range(params)[:2] == expected


def test_a_135m_model_at_1e5_is_fine():
    f = _lr_finding(1e-5, 135e6)
    assert (f.severity, f.status, f.message) == ("ok", "ok", "")
    assert "135M" in f.typical and "2e-05" in f.typical


def test_a_7b_model_at_1e5_warns_naming_its_count_and_range():
    f = _lr_finding(1e-5, 6.74e9)
    assert (f.severity, f.status) == ("warn", "high")
    assert "6.74B-parameter" in f.message and "1e-06..5e-06" in f.message


@pytest.mark.parametrize(
    "params,severity", [(SMALL_MODEL_PARAMS, "ok"), (SMALL_MODEL_PARAMS + 1, "warn")]
)
def test_the_small_model_boundary(params, severity):
    assert _lr_finding(1e-5, params).severity == severity


def test_a_70b_model_warns_where_a_7b_one_would_not():
    assert _lr_finding(3e-6, 7e9).severity == "ok"
    f = _lr_finding(3e-6, 70e9)
    assert f.severity == "warn" and "70B" in f.message and "5e-07..1e-06" in f.message


def test_unknown_size_keeps_the_1b_8b_range_as_a_note_and_says_so():
    f = _lr_finding(1e-5, None)
    assert (f.severity, f.status) == ("note", "high")
    assert "1e-06..5e-06" in f.typical and "--params" in f.typical


def test_above_the_trainers_bound_the_trainers_text_is_kept():
    risk = RECOMMENDED["learning_rate"][2]
    over = _lr_finding(3e-5, 135e6)  # above every size's range: GRPOConfig itself warns
    assert over.severity == "warn" and risk in over.message and "2e-05" in over.message
    # the top of the small range: usual for a 135M model, and the trainer agrees (no warning)
    inside = _lr_finding(2e-5, 135e6)
    assert (inside.severity, inside.status) == ("ok", "ok")
    assert _lr_finding(3e-7, 7e9).status == "low"


def test_the_trainer_checks_the_loaded_models_size_as_the_doctor_does():
    import warnings

    from passband.trainer._recommended import check_learning_rate

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GRPOConfig(learning_rate=2e-5)  # size unknown: within some size's range, no warning
        assert check_learning_rate(2e-5, 135e6) is None
    with pytest.warns(UserWarning, match="6.74B-parameter model") as caught:
        message = check_learning_rate(1e-5, 6.74e9)
    assert "1e-06..5e-06" in message and len(caught) == 1
    assert _lr_finding(1e-5, 6.74e9).severity == "warn", "the doctor says the same"
    with pytest.warns(UserWarning, match="above 2e-5"):
        GRPOConfig(learning_rate=3e-5)
    assert check_learning_rate(3e-5, 6.74e9) is None, "GRPOConfig has said it already"


def _model(tmp_path: Path, name: str, cfg: dict) -> Path:
    (tmp_path / name).mkdir()
    (tmp_path / name / "config.json").write_text(json.dumps(cfg))
    return tmp_path / name


def _run_config(tmp_path: Path, model: Path, lr: float) -> str:
    path, data = tmp_path / f"{model.name}.toml", tmp_path / "d.jsonl"
    data.write_text('{"prompt": "1+1=", "answer": "2"}\n')
    path.write_text(
        f'[model]\npath = "{model}"\n[data]\npath = "{data}"\n[trainer]\nlearning_rate = {lr}\n'
    )
    return str(path)


def test_cli_reads_the_count_from_config_json(tmp_path, capsys):
    small, big = _model(tmp_path, "smol", SMOLLM2_135M), _model(tmp_path, "llama7b", LLAMA_7B)
    assert 134e6 < shape_from_config(small).params < 136e6
    assert main(["doctor", _run_config(tmp_path, small, 1e-5), "--gpu", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "ok    learning_rate = 1e-05" in out and "135M-parameter" in out
    assert main(["doctor", _run_config(tmp_path, big, 1e-5), "--gpu", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "WARN  learning_rate = 1e-05" in out and "6.74B-parameter" in out
    # --params overrides config.json
    assert main(["doctor", _run_config(tmp_path, big, 1e-5), "--params", "135M"]) == 0
    assert "ok    learning_rate = 1e-05" in capsys.readouterr().out


@pytest.mark.parametrize(
    "config,params",
    [
        *[(p, "135M") for p in sorted((ROOT / "examples" / "smollm2").glob("*.toml"))],
        (ROOT / "examples" / "gsm8k.toml", "0.5B"),  # Qwen2.5-0.5B-Instruct
        (ROOT / "examples" / "gsm8k.toml", None),  # the model is not here: size unknown
    ],
)
def test_example_configs_have_no_warnings(config, params, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples' paths are relative to the repository root
    extra = ["--params", params] if params else []
    rc = main(["doctor", str(config), *extra])
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("WARN  ")]
    # the model and the data are prepared by scripts, not kept in the checkout: where they are
    # missing, train refuses those two paths, and nothing else of the config
    failed = {line.split()[1] for line in lines if line.lstrip().startswith("FAIL  ")}
    assert failed <= {"model.path", "data.path"} and rc == (1 if failed else 0)
