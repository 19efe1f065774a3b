"""``passband verify`` never writes over its input, never keeps a verdict for a row that changed,
and reads chat-format completions as their text. Real files through the CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passband.cli import main


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _read(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_output_naming_the_input_is_refused_and_the_input_kept(tmp_path, capsys, overwrite):
    src = tmp_path / "c.jsonl"
    _write(src, [{"completion": "4", "answer": "4"}])
    before = src.read_bytes()
    for out in (str(src), str(tmp_path / "." / "c.jsonl")):
        assert (
            main(["verify", str(src), "-v", "exact", "-o", out, "--no-progress", *overwrite]) == 2
        )
        assert "would overwrite the input" in capsys.readouterr().err
    link = tmp_path / "link.jsonl"
    link.symlink_to(src)
    assert (
        main(["verify", str(src), "-v", "exact", "-o", str(link), "--no-progress", *overwrite]) == 2
    )
    assert src.read_bytes() == before


def test_resume_refuses_rows_that_changed_since_they_were_scored(tmp_path, capsys):
    src, out = tmp_path / "c.jsonl", tmp_path / "v.jsonl"
    rows = [{"completion": str(i), "answer": str(i)} for i in range(6)]
    _write(src, rows)
    args = ["verify", str(src), "-v", "exact", "-o", str(out), "--no-progress", "--workers", "1"]
    assert main(args) == 0
    assert [r["status"] for r in _read(out)] == ["ok"] * 6
    rows[2]["completion"] = "wrong now"  # edited in place: the old verdict must not survive
    _write(src, rows)
    assert main(args) == 2
    assert "row 2 changed since" in capsys.readouterr().err
    assert main(args + ["--overwrite"]) == 0
    assert [r["status"] for r in _read(out)][2] == "wrong"
    _write(src, rows + [{"completion": "7", "answer": "7"}])  # rows appended: scored, rest kept
    assert main(args) == 0
    got = _read(out)
    assert len(got) == 7 and got[6]["status"] == "ok" and got[2]["status"] == "wrong"


def test_chat_completions_are_read_as_their_assistant_text(tmp_path):
    src, out = tmp_path / "chat.jsonl", tmp_path / "v.jsonl"
    _write(
        src,
        [
            {"completion": [{"role": "assistant", "content": "42"}], "answer": "42"},
            {
                "completion": [
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": [{"type": "text", "text": "7"}]},
                ],
                "answer": "7",
            },
            {"completion": [{"role": "assistant", "content": "41"}], "answer": "42"},
        ],
    )
    assert (
        main(["verify", str(src), "-v", "exact", "-o", str(out), "--no-progress", "--workers", "1"])
        == 0
    )
    assert [r["status"] for r in _read(out)] == ["ok", "ok", "wrong"]
