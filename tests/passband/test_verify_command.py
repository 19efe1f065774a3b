"""``passband verify``: columns, output, summary, errors, and resuming after a real kill -9."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from passband.cli import main


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_scores_rows_with_ref_mapping_and_prints_summary(tmp_path, capsys):
    rows = [{"id": i, "completion": str(i % 3), "gold": "1"} for i in range(10)]
    rows.append({"id": 10, "completion": "\ud800", "gold": "1"})
    src = tmp_path / "data.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert (
        main(
            [
                "verify",
                str(src),
                "--verifier",
                "exact",
                "--ref",
                "answer=gold",
                "--chunk-size",
                "4",
                "--no-progress",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    out = _read_jsonl(tmp_path / "data.verdicts.jsonl")
    assert [r["id"] for r in out] == list(range(11))
    assert [r["status"] for r in out[:3]] == ["wrong", "ok", "wrong"]
    assert out[1]["score"] == 1.0 and out[1]["gold"] == "1" and "components" in out[1]
    assert out[10]["completion"] == "\ud800"  # survived the round trip
    printed = capsys.readouterr().out
    assert "ok" in printed and "total" in printed and " 3 " in printed.replace("  ", " ")


def test_parquet_in_and_out(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    src = tmp_path / "data.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {"completion": '{"a": 1}', "schema": '{"type": "object"}'},
                {"completion": "[1]", "schema": '{"type": "object"}'},
            ]
        ),
        src,
    )
    dst = tmp_path / "out.parquet"
    assert main(["verify", str(src), "-v", "json_schema", "-o", str(dst), "--no-progress"]) == 0
    table = pq.read_table(dst).to_pylist()
    assert [r["status"] for r in table] == ["ok", "wrong"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--verifier", "no_such"], "unknown verifier"),
        (["--verifier", "exact", "--ref", "answer"], "FIELD=COLUMN"),
        (["--verifier", "exact", "--ref", "answer=nope"], "--ref answer=nope: no such column"),
        (["--verifier", "exact", "-c", "text"], "--completion-column text: no such column"),
        (["--verifier", "nosuchmodule:fn"], "cannot import"),
        (["--verifier", "exact", "--timeout", "0"], "--timeout"),
        ([], "--verifier NAME"),
    ],
)
def test_user_mistakes_exit_2_with_a_message(tmp_path, capsys, argv, message):
    src = tmp_path / "d.jsonl"
    _write_jsonl(src, [{"completion": "1", "gold": "1"}])
    assert main(["verify", str(src), "--no-progress"] + argv) == 2
    assert message in capsys.readouterr().err


def test_rows_lacking_the_completion_or_a_reference_are_named_not_graded(tmp_path, capsys):
    """A row without its completion was graded "invalid: empty answer", as if the model had
    answered nothing; it is named, with the others, before anything is graded."""
    src = tmp_path / "d.jsonl"
    rows = [{"completion": "1", "gold": "1"}, {"gold": "2"}, {"completion": "3"}]
    _write_jsonl(src, rows)
    argv = ["verify", str(src), "--no-progress", "-v", "exact", "--ref", "answer=gold"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        "2 of 3 rows lack a column to grade: row 1 lacks ['completion']; row 2 lacks ['gold']"
        in err
    )
    assert not (tmp_path / "d.verdicts.jsonl").exists()


def test_a_run_where_every_row_is_an_error_exits_1_and_says_why(tmp_path, capsys):
    """A verifier wired to the wrong column grades every row ``error``; that used to exit 0
    with only the table to show it."""
    src = tmp_path / "d.jsonl"
    _write_jsonl(src, [{"completion": "1", "gold": "1"}, {"completion": "2", "gold": "2"}])
    argv = ["verify", str(src), "--no-progress", "-v", "exact", "--ref", "answer=completion"]
    assert main(argv[:-2]) == 1  # no --ref: exact gets no 'answer' keyword
    assert "every row got an error verdict" in capsys.readouterr().err
    assert main(argv + ["--output", str(tmp_path / "ok.jsonl")]) == 0


def test_list_prints_registered_names(capsys):
    assert main(["verify", "--list"]) == 0
    listed = capsys.readouterr().out.split()
    assert {"exact", "json_schema", "math", "regex", "format"} <= set(listed)


def test_torn_last_line_is_cut_and_run_resumes(tmp_path):
    src = tmp_path / "d.jsonl"
    _write_jsonl(src, [{"id": i, "completion": "1", "answer": "1"} for i in range(7)])
    argv = ["verify", str(src), "-v", "exact", "--no-progress", "--chunk-size", "3"]
    assert main(argv) == 0
    dst = tmp_path / "d.verdicts.jsonl"
    lines = dst.read_text().splitlines(keepends=True)
    dst.write_text("".join(lines[:4]) + lines[4][:10])  # 4 rows plus half a row, as after a kill
    assert main(argv) == 0
    assert [r["id"] for r in _read_jsonl(dst)] == list(range(7))


SLOW_VERIFIER = textwrap.dedent(
    """
    import time
    from passband.verifiers import Verdict

    def slow(completion, **reference):
        time.sleep(0.02)
        return Verdict.ok(completion)
    """
)


@pytest.mark.slow  # ~10 s: two CLI subprocesses
def test_resume_after_kill_9_loses_and_duplicates_nothing(tmp_path):
    (tmp_path / "slowmod.py").write_text(SLOW_VERIFIER)
    n = 120
    src = tmp_path / "d.jsonl"
    _write_jsonl(src, [{"id": i, "completion": f"c{i}"} for i in range(n)])
    dst = tmp_path / "d.verdicts.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "passband.cli",
        "verify",
        str(src),
        "-v",
        "slowmod:slow",
        "--chunk-size",
        "7",
        "--workers",
        "1",
        "--no-progress",
    ]
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if dst.exists() and dst.read_bytes().count(b"\n") >= 20:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"finished before it could be killed: {proc.stderr.read()}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        try:  # the session we started: its forkserver/workers, should any outlive the kill
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    partial = dst.read_bytes().count(b"\n")
    assert 20 <= partial < n
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ids = [r["id"] for r in _read_jsonl(dst)]
    assert ids == list(range(n))
    assert all(r["status"] == "ok" and r["detail"] == r["completion"] for r in _read_jsonl(dst))
    assert "total" in done.stdout and str(n) in done.stdout


def test_module_verifier_from_the_current_folder(tmp_path, monkeypatch, capsys):
    (tmp_path / "cwd_verifiers.py").write_text(
        "import os\nfrom passband.verifiers import Verdict\n\n"
        "def where(completion, **reference):\n    return Verdict.ok(str(os.getpid()))\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    _write_jsonl(tmp_path / "d.jsonl", [{"completion": "x"}, {"completion": "y"}])
    assert main(["verify", "d.jsonl", "-v", "cwd_verifiers:where", "--no-progress"]) == 0
    rows = _read_jsonl(tmp_path / "d.verdicts.jsonl")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all(r["detail"] != str(os.getpid()) for r in rows)  # scored in worker processes


def test_a_shaped_number_passes_only_at_the_success_threshold(tmp_path, capsys):
    """The rule ``passband score`` and training use: 0.1 is ``wrong`` at the default threshold
    0.5, 0.7 is ``ok``; the score is kept as the verifier returned it. A journal written at
    another threshold is not resumed as if it were the same run."""
    (tmp_path / "shaped_mod.py").write_text(
        "def shaped(completion, **_):\n    return 0.7 if completion[:1].isdigit() else 0.1\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        src = tmp_path / "comps.jsonl"
        _write_jsonl(src, [{"completion": "4"}, {"completion": "x"}])
        args = ["verify", str(src), "--verifier", "shaped_mod:shaped", "--no-progress"]
        assert main([*args, "--workers", "1"]) == 0
        out = _read_jsonl(tmp_path / "comps.verdicts.jsonl")
        assert [(r["score"], r["status"]) for r in out] == [(0.7, "ok"), (0.1, "wrong")]
        assert "success_threshold=0.5" in capsys.readouterr().err
        assert main([*args, "--workers", "1", "--success-threshold", "0.8"]) == 2
        assert main([*args, "--overwrite", "--success-threshold", "0.8"]) == 0
        out = _read_jsonl(tmp_path / "comps.verdicts.jsonl")
        assert [r["status"] for r in out] == ["wrong", "wrong"]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("shaped_mod", None)


def test_a_trl_reward_function_from_a_module_scores_in_workers(tmp_path, monkeypatch, capsys):
    """As TRL calls it: the prompt (an SFT row's answer left out), the row's columns as lists, and
    no 'completion' column; in worker processes."""
    (tmp_path / "trl_rewards.py").write_text(
        "import os\n\n"
        "def matches(prompts, completions, answer, **kwargs):\n"
        "    assert 'completion' not in kwargs and prompts[0][-1]['role'] == 'user'\n"
        "    assert os.getpid() != int(kwargs['parent'][0])\n"
        "    return [float(c[0]['content'].strip() == a) for c, a in zip(completions, answer)]\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    chat = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    rows = [
        {"response": r, "messages": chat, "answer": "4", "completion": "4", "parent": os.getpid()}
        for r in ("4", "5")
    ]
    _write_jsonl(tmp_path / "d.jsonl", rows)
    args = ["verify", "d.jsonl", "-v", "trl_rewards:matches", "-c", "response", "--no-progress"]
    assert main(args) == 0
    assert "TRL reward function" in capsys.readouterr().err
    assert [r["status"] for r in _read_jsonl(tmp_path / "d.verdicts.jsonl")] == ["ok", "wrong"]
