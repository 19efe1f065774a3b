"""Mistakes a user makes in configs, data and commands: each ends with a message naming the file,
field or value, exit code 2, and nothing lost. Real files, the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passband.cli import main
from passband.config import load_config
from passband.errors import ConfigError, UsageError

_BASE = """
[model]
path = "m"

[data]
path = "{data}"

[reward]
verifier = "{verifier}"
references = {{ answer = "answer" }}
"""


def _config(tmp_path: Path, extra: str = "", verifier: str = "exact") -> Path:
    data = tmp_path / "d.jsonl"
    if not data.exists():
        data.write_text('{"prompt": "1+1=", "answer": "2"}\n')
    path = tmp_path / "run.toml"
    path.write_text(_BASE.format(data=data.as_posix(), verifier=verifier) + extra)
    return path


@pytest.mark.parametrize(
    "extra,message",
    [
        ('[trainer]\nuse_curriculum = "false"\n', "use_curriculum = 'false' must be true or false"),
        ("[trainer]\nband = 0.5\n", "band = 0.5 must be a list of 2 numbers"),
        ('[trainer]\nmax_steps = "10"\n', "max_steps = '10' must be an integer"),
        ("[trainer]\nprogress = 1\n", "progress = 1 must be true or false"),
    ],
)
def test_toml_values_of_the_wrong_type_name_the_field(tmp_path, extra, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_config(_config(tmp_path, extra))


def test_section_values_of_the_wrong_type_name_the_field(tmp_path):
    path = _config(tmp_path)
    path.write_text(path.read_text().replace("[data]\n", '[data]\nlimit = "3"\n'))
    with pytest.raises(ConfigError, match=r"\[data\] limit = '3' must be an integer"):
        load_config(path)


def test_a_boolean_override_given_as_a_string_is_refused_by_the_cli(tmp_path, capsys):
    assert main(["train", str(_config(tmp_path)), 'trainer.use_curriculum="false"']) == 2
    assert "use_curriculum = 'false' must be true or false" in capsys.readouterr().err


def test_a_module_attr_verifier_in_toml_reward_is_imported(tmp_path, monkeypatch):
    (tmp_path / "my_checks.py").write_text(
        "from passband.verifiers import Verdict\n"
        "def digits(completion, **ref):\n"
        "    ok = completion.strip() == ref['answer']\n"
        "    return Verdict(float(ok), 'ok' if ok else 'wrong', '')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    reward, columns = load_config(_config(tmp_path, verifier="my_checks:digits")).reward.build()
    assert reward.__name__ == "digits" and columns == {"answer": "answer"}
    assert reward("2", answer="2").passed


def test_a_verifier_module_that_raises_on_import_is_a_clear_error(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_checks.py").write_text("x = 1\nraise RuntimeError('no licence key')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        UsageError, match=r"raised RuntimeError: no licence key at .*broken_checks.py:2"
    ):
        load_config(_config(tmp_path, verifier="broken_checks:fn")).reward.build()
    src = tmp_path / "c.jsonl"
    src.write_text('{"completion": "1", "answer": "1"}\n')
    assert main(["verify", str(src), "-v", "broken_checks:fn", "--no-progress"]) == 2
    assert "no licence key" in capsys.readouterr().err


def test_a_bad_line_in_the_training_data_names_file_and_line(tmp_path, capsys):
    cfg = _config(tmp_path)
    (tmp_path / "d.jsonl").write_text(
        '{"prompt": "a", "answer": "1"}\n\n{"prompt": "b", "answer": \n'
    )
    assert main(["train", str(cfg)]) == 2
    assert f"{tmp_path / 'd.jsonl'}:3: not valid JSON" in capsys.readouterr().err
    (tmp_path / "d.jsonl").write_bytes(b'{"prompt": "a", "answer": "1"}\n{"prompt": "\xff"}\n')
    assert main(["train", str(cfg)]) == 2
    assert f"{tmp_path / 'd.jsonl'}:2: not UTF-8 (byte 0xff" in capsys.readouterr().err


def test_score_refuses_an_unknown_output_format_before_loading_anything(tmp_path, capsys):
    src = tmp_path / "d.jsonl"
    src.write_text('{"prompt": "1+1=", "answer": "2"}\n')
    # The model path does not exist: a refusal that names --out proves nothing was loaded first.
    code = main(
        [
            "score",
            str(src),
            "--model",
            str(tmp_path / "no_model"),
            "--verifier",
            "exact",
            "--out",
            str(tmp_path / "x.txt"),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "'.txt'" in err
    assert not (tmp_path / "x.txt").exists()


def test_the_cli_lets_a_real_bug_keep_its_traceback(tmp_path, monkeypatch):
    """A KeyError / ValueError from inside training is a bug, not a usage error: it must not be
    printed as ``error: ...`` with exit 2 (``passband train`` used to do that)."""
    import passband.trainer.grpo as grpo

    def buggy(self, *args, **kwargs):
        return {}["not a user mistake"]

    monkeypatch.setattr(grpo.GRPOTrainer, "__init__", buggy)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()  # a model folder: the start-up checks pass, the trainer is built
    with pytest.raises(KeyError, match="not a user mistake"):
        main(["train", str(_config(tmp_path))])


def test_every_user_error_is_a_passband_error_with_its_builtin_base():
    from passband import errors

    assert issubclass(errors.ConfigError, ValueError) and issubclass(errors.DataError, ValueError)
    assert issubclass(errors.RunDirError, FileExistsError)
    assert issubclass(errors.DiskFullError, OSError)
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.PassbandError)
        assert name in errors.__doc__  # the tree in the docstring names every class


def test_doctor_warns_when_max_new_tokens_exceeds_the_models_positions(tmp_path, capsys):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps(
            {
                "model_type": "qwen2",
                "hidden_size": 32,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "intermediate_size": 64,
                "vocab_size": 64,
                "max_position_embeddings": 256,
            }
        )
    )
    cfg = _config(tmp_path, "[trainer]\nmax_new_tokens = 100000\n")
    cfg.write_text(cfg.read_text().replace('path = "m"', f'path = "{model.as_posix()}"'))
    assert main(["doctor", str(cfg), "--gpu", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "WARN  context: max_new_tokens = 100000 is not below the model's 256 positions" in out
    assert main(["doctor", str(cfg), "trainer.max_new_tokens=64", "--prompt-tokens", "100"]) == 0
    assert "ok    context: 100-token prompts + max_new_tokens = 64 fit" in capsys.readouterr().out


def test_report_on_malformed_run_files_gives_notes_not_a_traceback(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text(
        '{"step": 1, "reward/mean": 0.5, "alerts": []}\n[1, 2]\n'
        '{"step": "x"}\n{"step": 2, "alerts": 5}\nnot json\n'
        '{"step": 3, "reward/mean": 0.7, "alerts": []}\n'
    )
    (run / "curriculum.json").write_text('{"band": [0.2, 0.8], "estimates": [0.1, 0.5]}')
    (run / "config.json").write_text('{"trainer": {"max_steps": "x"}}')
    assert main(["report", str(run), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "metrics.jsonl: 4 malformed line(s) skipped" in out
    assert "curriculum.json: 'estimates' is not an object" in out
    (run / "curriculum.json").write_text('{"band": 0.5, "estimates": {}}')
    assert main(["report", str(run), "--out", str(tmp_path / "r")]) == 0
    assert "curriculum.json: 'band' is 0.5, not [low, high]" in capsys.readouterr().out


def test_a_full_disk_is_a_message_naming_the_file_not_a_traceback(tmp_path, capsys):
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        src = tmp_path / "c.jsonl"
        src.write_text(
            "".join(
                json.dumps({"completion": "x" * 200, "answer": "y"}) + "\n" for _ in range(2000)
            )
        )
        out = disk / "v.jsonl"
        assert (
            main(
                [
                    "verify",
                    str(src),
                    "-v",
                    "exact",
                    "-o",
                    str(out),
                    "--no-progress",
                    "--workers",
                    "1",
                    "--chunk-size",
                    "500",
                ]
            )
            == 2
        )
        assert f"error: no space left on {out}" in capsys.readouterr().err
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_unknown_names_and_wrong_kinds_are_passband_errors_keeping_their_builtin_bases():
    """A bare KeyError (its message printed quoted, escapes and all) and a bare TypeError."""
    from passband.errors import ConfigError, UnknownNameError, WrongTypeError
    from passband.trainer._scoring import Scorer
    from passband.trainer.registry import ADVANTAGE_REGISTRY
    from passband.verifiers import get, get_penalty

    for lookup, name in [
        (get, "wordcount"),
        (get_penalty, "overlnog"),
        (ADVANTAGE_REGISTRY.get, "grop"),
    ]:
        with pytest.raises(UnknownNameError) as info:
            lookup(name)
        assert isinstance(info.value, KeyError) and isinstance(info.value, ConfigError)
        assert str(info.value).startswith("unknown ") and not str(info.value).startswith('"')
    with pytest.raises(WrongTypeError, match="reward must be a verifier name") as info:
        Scorer(reward=3)
    assert isinstance(info.value, TypeError)


def test_warnings_on_the_command_line_are_one_line_each(tmp_path, capsys):
    """They printed the file and source line that raised them under the message."""
    import warnings

    before = warnings.showwarning
    config = _config(tmp_path, "[trainer]\nband = [0.1, 0.9]\n")
    main(["doctor", str(config), "--gpu", "cpu"])
    err = capsys.readouterr().err
    said = [x for x in err.splitlines() if "DeprecationWarning" in x]
    assert said and said[0].startswith(f"passband: {config}:")  # the user's file and line
    assert said[0].endswith(
        "[trainer] band = [0.1, 0.9] is deprecated; set it as [curriculum] band"
    )
    assert ".py:" not in err  # no file:line, no source line
    assert warnings.showwarning is before  # put back after the command


def test_output_dir_given_twice_is_refused(tmp_path, capsys):
    """--output-dir won over trainer.output_dir=... without a word."""
    config = _config(tmp_path)
    code = main(["train", str(config), "trainer.output_dir=runs/v3", "--output-dir", "runs/v2"])
    err = capsys.readouterr().err
    assert code == 2 and "--output-dir runs/v2 and the override trainer.output_dir=runs/v3" in err
    assert not (tmp_path / "runs").exists()


def test_the_resume_command_after_ctrl_c_pastes_back_as_it_was_given(tmp_path):
    """A config path with a space, or an override with quotes, came out unquoted."""
    import argparse
    import shlex

    from passband.commands.train import _interrupted

    (tmp_path / "run" / "checkpoints" / "step_4").mkdir(parents=True)
    (tmp_path / "run" / "checkpoints" / "step_4" / "state.json").write_text("{}")
    args = argparse.Namespace(
        config="my runs/run.toml", output_dir=None, overrides=['trainer.distributed="fsdp"']
    )
    said = _interrupted(args, str(tmp_path / "run"), 6)
    assert "newest checkpoint is step 4 (2 steps will be redone)" in said
    command = said.split("resume with: ")[1]
    assert shlex.split(command) == [
        "passband", "train", "my runs/run.toml", "--resume", 'trainer.distributed="fsdp"'
    ]  # fmt: skip
