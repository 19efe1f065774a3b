"""``passband doctor`` runs the checks ``passband train`` runs before it loads the model: a
config train refuses at once gets a FAIL line naming the field and its value, and exit 1.
A real tiny model and real data files; the same config goes to both commands."""

from __future__ import annotations

import pytest

from passband.cli import main


def _toml(tmp_path, model, data, extra: str = "") -> str:
    path = tmp_path / "run.toml"
    path.write_text(
        f'[model]\npath = "{model}"\n[data]\npath = "{data}"\nprompt_column = "question"\n'
        '[reward]\nverifier = "regex"\nreferences = { pattern = "pattern" }\n'
        f"[trainer]\nmax_steps = 1\ngroup_size = 4\nprompts_per_step = 2\nmax_new_tokens = 6\n"
        f'learning_rate = 1e-5\noutput_dir = "{tmp_path / "run"}"\n{extra}'
    )
    return str(path)


def test_a_config_train_accepts_passes_the_start_up_checks(
    tiny_model, arithmetic_rows, tmp_path, capsys
):
    assert main(["doctor", _toml(tmp_path, tiny_model, arithmetic_rows), "--gpu", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "ok    start-up checks" in out and "FAIL" not in out
    assert "measured on 6 of 6 [data] rows" in out and "ok    context: 4-token prompts" in out


@pytest.mark.parametrize(
    "override,field,value,message",
    [
        ('data.path="nope.jsonl"', "data.path", "'nope.jsonl'", "does not exist"),
        ('data.prompt_column="nope"', "data.prompt_column", "'nope'", "column 'nope' is not in"),
        ('reward.verifier="nope"', "reward.verifier", "'nope'", "'nope' is not registered"),
        (
            'reward.references={pattern="nope"}',
            "reward.references",
            "{'pattern': 'nope'}",
            "reference column(s) ['nope'] are not in the dataset",
        ),
        ('model.path="no-such-model"', "model.path", "'no-such-model'", "not a local directory"),
    ],
)
def test_what_train_refuses_at_once_is_a_fail_in_doctor(
    tiny_model, arithmetic_rows, tmp_path, capsys, monkeypatch, override, field, value, message
):
    monkeypatch.chdir(tmp_path)
    cfg = _toml(tmp_path, tiny_model, arithmetic_rows)
    assert main(["doctor", cfg, override, "--gpu", "cpu"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  {field} = {value}" in out and message in out
    assert "passband train would stop at start-up: 1 FAIL above" in out
    assert "WARN  context" not in out  # never a warning about an assumed 256-token prompt
    assert main(["train", cfg, override]) == 2  # the same check, in train
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


def test_every_problem_is_listed_and_an_unread_prompt_length_is_not_guessed_at(
    tiny_model, tmp_path, capsys
):
    cfg = _toml(tmp_path, tmp_path / "no-model", tmp_path / "no-data.jsonl", "")
    assert main(["doctor", cfg, 'reward.verifier="nope"', "--params", "1M", "--gpu", "cpu"]) == 1
    out = capsys.readouterr().out
    failed = [line.split()[1] for line in out.splitlines() if line.startswith("  FAIL  ")]
    assert failed == ["data.path", "reward.verifier", "model.path"]
    assert "prompts: not measured" in out and "256 tokens assumed" in out
    assert "NOTE  context: not checked" in out and "WARN  context" not in out
    assert "time per step" in out  # the estimate is still made


def test_a_run_directory_given_as_the_config_says_what_to_pass(tmp_path, capsys, make_run):
    run = make_run(tmp_path / "runs" / "r1", steps=2)
    for command in ("doctor", "train"):
        assert main([command, str(run)]) == 2
        err = capsys.readouterr().err
        assert "is a run directory, not a config file" in err and "not found" not in err
        assert "pass the TOML config the run was started with" in err
        assert f"passband report {run}" in err
    assert main(["doctor", str(tmp_path)]) == 2
    assert "is a directory, not a config file" in capsys.readouterr().err
