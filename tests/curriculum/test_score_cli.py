"""`passband score` end to end with a tiny real model (random weights) saved to disk."""

import json

import pytest

from passband.cli import main
from passband.curriculum import read_rows, write_rows


def _dataset(tmp_path):
    # Random 6-character answers: "any text" always passes, "has a digit" often, "starts with x"
    # rarely, so the pass rates spread over the band classes.
    patterns = [".*", ".*[0-9].*", "x.*", ".*[aeiou].*", "[a-m ]*", ".*z.*"]
    rows = [{"prompt": f"what is {i}+{i}?", "pattern": p} for i, p in enumerate(patterns * 2)]
    path = tmp_path / "data.jsonl"
    write_rows(rows, path)
    return path, rows


@pytest.mark.slow
def test_score_command_end_to_end_is_reproducible(tiny_model, score_flags, tmp_path, capsys):
    data, rows = _dataset(tmp_path)
    outs = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    common = score_flags
    flags = ["--model", str(tiny_model), "--verifier", "regex", "--ref", "pattern=pattern"]
    assert main(["score", str(data), *flags, "--out", str(outs[0]), *common]) == 0
    # The same through a training config: [model], [data] prompt template, [reward] references.
    config = tmp_path / "run.toml"
    config.write_text(
        f'[model]\npath = "{tiny_model}"\n[data]\npath = "{data}"\n'
        'prompt_template = "{prompt}"\n'
        '[reward]\nverifier = "regex"\nreferences = {pattern = "pattern"}\n'
    )
    assert main(["score", str(data), "--config", str(config), "--out", str(outs[1]), *common]) == 0
    printed = capsys.readouterr().out
    assert "in_band" in printed and "saved" in printed
    first, second = (read_rows(o) for o in outs)
    # the template is recorded as given; it asked the same prompts (score_prompt_sha256)
    assert {r.pop("score_prompt_template") for r in second} == {"{prompt}"}
    assert {r.pop("score_prompt_template") for r in first} == {None}
    assert first == second  # seeded per batch: a rerun (or a resumed run) regenerates the same
    assert [r["prompt"] for r in first] == [r["prompt"] for r in rows]
    for row in first:
        assert row["trials"] in (3, 6) and 0 <= row["passes"] <= row["trials"]
        assert row["score_model"] == str(tiny_model) and row["score_max_tokens"] == 6
        assert row["score_k"] == 6 and row["score_temperature"] == 1.0
    assert {r["pass_rate"] for r in first if r["pattern"] == ".*"} == {1.0}
    assert len({r["pass_rate"] for r in first}) >= 3
    assert (tmp_path / "a.parquet.pass_rate.png").exists()

    # what the flags leave open comes from the run it scores for: its sampling and its band
    config.write_text(
        config.read_text() + "[trainer]\ntemperature = 0.7\nmax_new_tokens = 5\n"
        "[curriculum]\nband = [0.3, 0.7]\n"
    )
    at = common.index("--max-tokens")
    own = common[:at] + common[at + 2 :]
    out = tmp_path / "c.jsonl"
    assert main(["score", str(data), "--config", str(config), "--out", str(out), *own]) == 0
    assert "band [0.3, 0.7]" in capsys.readouterr().out
    for row in read_rows(out):
        assert row["score_temperature"] == 0.7 and row["score_max_tokens"] == 5
    flags = ["--temperature", "1.0", "--max-tokens", "6"]  # a flag given wins over the config
    out = tmp_path / "d.jsonl"
    assert main(["score", str(data), "--config", str(config), "--out", str(out), *own, *flags]) == 0
    assert all(r["score_temperature"] == 1.0 for r in read_rows(out))
    # a scored file scored again: its rows are taken as they are, with what they were scored with
    again = tmp_path / "e.jsonl"
    model = ["--model", str(tiny_model), "--verifier", "regex", "--ref", "pattern=pattern"]
    assert main(["score", str(out), *model, "--out", str(again), *common]) == 0
    for before, after in zip(read_rows(out), read_rows(again)):
        assert after["score_source"].startswith("prior:")
        for key in ("passes", "trials", "score_model", "score_temperature", "score_max_tokens"):
            assert after[key] == before[key], key
    # a finished --out is not replaced unless asked: scoring a large set can take hours
    stamp = again.read_bytes()
    assert main(["score", str(out), *model, "--out", str(again), *common]) == 2
    assert "--overwrite" in capsys.readouterr().err and again.read_bytes() == stamp
    assert main(["score", str(data), *model, "--out", str(again), *common, "--overwrite"]) == 0
    assert all(r["score_source"] == "sampled" for r in read_rows(again))
    # a journal left by a run with other settings is refused, and --overwrite starts over
    journal = tmp_path / "e.jsonl.journal.jsonl"
    header = {"journal": "passband.prescore/1", "settings": {"k": 99}}
    row = {"i": 0, "passes": 1, "trials": 2, "unchecked": 0}
    journal.write_text(json.dumps(header) + "\n" + json.dumps(row) + "\n")
    assert main(["score", str(data), *model, "--out", str(again), *common]) == 2
    assert "other settings" in capsys.readouterr().err
    assert main(["score", str(data), *model, "--out", str(again), *common, "--overwrite"]) == 0
    assert not journal.exists() and all(r["trials"] > 0 for r in read_rows(again))


def test_score_command_names_user_mistakes(tmp_path, capsys):
    data, _ = _dataset(tmp_path)
    base = [
        "score",
        str(data),
        "--model",
        str(tmp_path / "nowhere"),
        "--out",
        str(tmp_path / "o.jsonl"),
    ]
    assert main(base + ["--verifier", "regex", "--prompt-column", "question"]) == 2
    assert "['question'] not in the dataset" in capsys.readouterr().err
    assert main(base + ["--verifier", "no_such_verifier"]) == 2
    assert "not registered" in capsys.readouterr().err
    assert main(base + ["--verifier", "regex", "--ref", "pattern"]) == 2
    assert "KEY=COLUMN" in capsys.readouterr().err
    assert main(base + ["--verifier", "regex"]) == 2
    assert "cannot load --model" in capsys.readouterr().err
    assert (
        main(["score", str(data), "--verifier", "regex", "--out", str(tmp_path / "o.jsonl")]) == 2
    )
    assert "give --model and --verifier" in capsys.readouterr().err
    assert main(base + ["--verifier", "regex", "--prompt-template", "{question}?"]) == 2
    assert "prompt template uses 'question'" in capsys.readouterr().err
    assert (
        main(
            [
                "score",
                str(tmp_path / "missing.jsonl"),
                "--model",
                "m",
                "--verifier",
                "regex",
                "--out",
                str(tmp_path / "o.jsonl"),
            ]
        )
        == 2
    )
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("cell", ["abc", 1.5, True])
def test_score_refuses_a_difficulty_cell_that_is_no_rate_before_loading_the_model(
    tmp_path, capsys, cell
):
    """'abc' in a *_solve_rate column was read as unscored and sampled again (training refuses
    it), and a bad cell was named by row only, after the model had loaded."""
    rows = [{"prompt": f"q{i}", "gsm_solve_rate": 0.5} for i in range(3)]
    rows[2]["gsm_solve_rate"] = cell
    write_rows(rows, tmp_path / "d.jsonl")
    args = ["score", str(tmp_path / "d.jsonl"), "--model", str(tmp_path / "nowhere")]
    assert main(args + ["--verifier", "regex", "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "d.jsonl (rows counted from 0)" in err and "row 2: difficulty column" in err
    assert "cannot load --model" not in err


def test_score_refuses_settings_training_would_refuse(tiny_model, tmp_path, capsys):
    """Scores made at temperature 0 (k copies of one answer), with --first above --k (was
    clamped in silence) or with more answer tokens than the model has positions are priors no
    run can use; each is named, and only the wrong ones."""
    data, _ = _dataset(tmp_path)
    base = ["score", str(data), "--model", str(tiny_model), "--verifier", "regex"]
    base += ["--ref", "pattern=pattern", "--out", str(tmp_path / "o.jsonl"), "--no-progress"]
    assert main(base + ["--temperature", "0"]) == 2
    err = capsys.readouterr().err
    assert "--temperature 0.0 must be > 0" in err and "--top-p" not in err
    assert main(base + ["--k", "4", "--first", "9"]) == 2
    assert "--first 9 must be in 1..--k (4)" in capsys.readouterr().err
    assert main(base + ["--band", "0.9", "0.1"]) == 2  # named as the flag, not PrescoreConfig
    assert "--band 0.9 0.1 must be two numbers 0 <= low < high <= 1" in capsys.readouterr().err
    from passband.commands import score as score_command  # --k below the default --first: fine

    parser = __import__("argparse").ArgumentParser()
    score_command.add_arguments(parser)
    args = parser.parse_args(["d.jsonl", "--out", "o.jsonl", "--k", "2"])
    args.temperature, args.top_p, args.max_tokens, args.band = 1.0, 1.0, 8, (0.2, 0.8)
    args.top_k, args.stop = 0, []  # as _apply_config fills them
    args.model = "m"
    assert score_command._prescore_options(args, None)["first"] == 2
    assert main(base + ["--max-tokens", "100000"]) == 2
    assert "--max-tokens 100000 leaves no room for a prompt" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.slow
def test_score_samples_with_the_runs_top_k_and_stop_and_records_them(
    tiny_model, score_flags, tmp_path, capsys, monkeypatch
):
    """``--config`` dropped the run's ``[trainer] top_k`` and ``stop``: the scores were made at other
    settings than the run samples with, and said nothing. There was no --top-k flag; a resumed run
    took a changed --stop or --tokenizer without a word."""
    data, _ = _dataset(tmp_path)
    config = tmp_path / "run.toml"
    config.write_text(
        f'[model]\npath = "{tiny_model}"\n[data]\npath = "{data}"\n'
        '[reward]\nverifier = "regex"\nreferences = {pattern = "pattern"}\n'
        '[trainer]\ntop_k = 1\nstop = ["a"]\n'
    )
    out = tmp_path / "k.jsonl"
    assert main(["score", str(data), "--config", str(config), "--out", str(out), *score_flags]) == 0
    rows = read_rows(out)
    assert all(r["score_top_k"] == 1 and r["score_stop"] == ["a"] for r in rows)
    assert {r["pass_rate"] for r in rows} <= {0.0, 1.0}  # top_k = 1: one answer, k times
    flags = ["--top-k", "0", "--stop", "b", "--stop", "c"]  # flags win over the config
    out = tmp_path / "f.jsonl"
    argv = ["score", str(data), "--config", str(config), "--out", str(out), *flags]
    assert main([*argv, *score_flags]) == 0
    assert all(r["score_top_k"] == 0 and r["score_stop"] == ["b", "c"] for r in read_rows(out))

    # a run that dies after its journal is complete (writing its plot fails: a full disk; a
    # --plot path that cannot be written is refused before sampling) ...
    import importlib

    prescore_module = importlib.import_module("passband.curriculum.prescore")

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    out = tmp_path / "r.jsonl"
    argv = ["score", str(data), "--config", str(config), "--out", str(out), *score_flags]
    with monkeypatch.context() as patched:
        patched.setattr(prescore_module, "_plot", full_disk)
        assert main(argv) == 2  # ENOSPC: a message, no traceback
    assert (tmp_path / "r.jsonl.journal.jsonl").exists()
    # ... is not resumed with another stop or tokenizer: each is named with both values
    assert main([*argv, "--stop", "b"]) == 2
    err = capsys.readouterr().err
    assert "other settings (settings.stop \"['a']\" there, \"['b']\" now)" in err, err
    assert main([*argv, "--tokenizer", str(tiny_model)]) == 2
    assert f'settings.tokenizer (unset) there, "{tiny_model}" now' in capsys.readouterr().err
    assert main(argv) == 0 and "resumed: 12 rows" in capsys.readouterr().out


def test_overwrite_never_deletes_a_folder_that_is_no_saved_dataset_or_holds_the_input(
    tmp_path, capsys
):
    """``--out outdir --overwrite`` replaced an ordinary folder whole: the notes and the input
    dataset in it were deleted."""
    folder = tmp_path / "outdir"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    data, _ = _dataset(folder)  # the input, inside --out
    argv = ["score", str(data), "--model", str(tmp_path / "nowhere"), "--verifier", "regex"]
    for extra in ([], ["--overwrite"]):
        assert main([*argv, "--out", str(folder), *extra]) == 2
        err = capsys.readouterr().err
        assert f"--out: {str(folder)!r} holds the input {str(data)!r}" in err, err
    outside = tmp_path / "data.jsonl"
    outside.write_bytes(data.read_bytes())
    argv[1] = str(outside)
    assert main([*argv, "--out", str(folder), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "no saved dataset" in err and "its 2 entries (data.jsonl, notes.txt)" in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["data.jsonl", "notes.txt"]
    write_rows(read_rows(outside), tmp_path / "saved")  # a saved dataset: replaced when asked
    assert main([*argv, "--out", str(tmp_path / "saved"), "--overwrite"]) == 2
    assert "cannot load --model" in capsys.readouterr().err  # past the checks of --out
