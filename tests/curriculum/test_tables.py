"""The one table reader: one behaviour per format, and ``file:line`` for every bad line."""

from __future__ import annotations

import json

import pytest

from passband.curriculum.tables import read_rows, write_rows
from passband.errors import DataError

ROWS = [{"prompt": "1+1=", "answer": "2"}, {"prompt": "2+2=", "answer": "4"}]


def test_json_is_an_array_or_json_lines(tmp_path):
    array, lines = tmp_path / "a.json", tmp_path / "l.json"
    array.write_text(json.dumps(ROWS, indent=2))
    lines.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert read_rows(array) == ROWS == read_rows(lines)
    write_rows(ROWS, tmp_path / "w.json")  # written as JSON Lines, read back the same
    assert read_rows(tmp_path / "w.json") == ROWS


def test_a_directory_is_a_saved_dataset_or_holds_split_files(tmp_path):
    pytest.importorskip("datasets")
    from datasets import Dataset, DatasetDict

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS[:1]))
    (plain / "train.json").write_text(json.dumps(ROWS))
    assert read_rows(plain) == ROWS and read_rows(plain, split="test") == ROWS[:1]
    saved = tmp_path / "saved"
    DatasetDict(
        {"train": Dataset.from_list(ROWS), "test": Dataset.from_list(ROWS[:1])}
    ).save_to_disk(str(saved))
    assert read_rows(saved, split="train") == ROWS and read_rows(saved, split="test") == ROWS[:1]
    with pytest.raises(DataError, match="holds splits"):
        read_rows(saved)
    with pytest.raises(DataError, match="nor holds validation.jsonl"):
        read_rows(plain, split="validation")


@pytest.mark.parametrize("name", ["d.jsonl", "d.json"])
def test_a_bad_line_names_file_and_line(tmp_path, name):
    path = tmp_path / name
    path.write_text('{"prompt": "a"}\n\n{"prompt": }\n')
    with pytest.raises(DataError, match=rf"{name}:3: not valid JSON"):
        read_rows(path)
    path.write_text('{"prompt": "a"}\n{"prompt": "b", "answer": "01"\n')  # unclosed: col 31
    with pytest.raises(DataError, match=rf"{name}:2: not valid JSON .*at column 31\)"):
        read_rows(path)
    path.write_text('{"prompt": "a"}\n[1, 2]\n')
    with pytest.raises(DataError, match=rf"{name}:2: each line must be a JSON object"):
        read_rows(path)


def test_a_bad_json_array_names_its_line(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[\n  {"prompt": "a"},\n  {"prompt" "b"}\n]\n')
    with pytest.raises(DataError, match=r"d.json:3: not valid JSON"):
        read_rows(path)


@pytest.mark.parametrize("name", ["d.jsonl", "d.json", "d.csv"])
def test_bytes_that_are_not_utf8_name_file_line_and_column(tmp_path, name):
    path = tmp_path / name
    body = (
        b'prompt\n"ok"\n"caf\xe9"\n'
        if name.endswith(".csv")
        else b'{"prompt": "ok"}\n{"prompt": "ok"}\n{"prompt": "caf\xe9"}\n'
    )
    path.write_bytes(body)
    with pytest.raises(DataError, match=rf"{name}:3: not UTF-8 \(byte 0xe9 at column"):
        read_rows(path)


def test_unknown_formats_and_missing_files_are_data_errors(tmp_path):
    with pytest.raises(DataError, match="unknown dataset format '.txt'"):
        read_rows(tmp_path / "d.txt")
    with pytest.raises(DataError, match="does not exist"):
        read_rows(tmp_path / "d.jsonl")


@pytest.mark.parametrize("name", ["t.parquet", "t"])
def test_a_column_only_later_rows_hold_is_written_not_dropped(tmp_path, name):
    """Parquet and saved datasets took their columns from the first row: 'note' was lost."""
    rows = [{"prompt": "a"}, {"prompt": "b", "note": "kept"}]
    write_rows(rows, tmp_path / name)
    assert read_rows(tmp_path / name) == [{"prompt": "a", "note": None}, rows[1]]


@pytest.mark.parametrize("name", ["t.parquet", "t"])
def test_a_column_that_mixes_types_is_named_not_a_pyarrow_traceback(tmp_path, name):
    rows = [{"answer": "3201"}, {"answer": 197}]
    with pytest.raises(
        DataError, match=r"column 'answer' mixes types \(str in row 0 .*int in row 1"
    ):
        write_rows(rows, tmp_path / name)
    assert not (tmp_path / name).exists()
    write_rows(rows, tmp_path / "t.jsonl")  # JSON Lines holds them as they are
    assert read_rows(tmp_path / "t.jsonl") == rows


def test_a_directory_that_is_no_saved_dataset_is_never_replaced(tmp_path):
    """A suffix-less path is a saved dataset; writing one replaced an ordinary folder whole."""
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match=r"no saved dataset: .* delete its 1 entries \(notes.txt\)"):
        write_rows(ROWS, folder)
    assert (folder / "notes.txt").read_text() == "mine"
    write_rows(ROWS, tmp_path / "saved")  # a saved dataset is replaced, as is an empty folder
    write_rows(ROWS[:1], tmp_path / "saved")
    (tmp_path / "empty").mkdir()
    write_rows(ROWS, tmp_path / "empty")
    assert read_rows(tmp_path / "saved") == ROWS[:1] and read_rows(tmp_path / "empty") == ROWS


@pytest.mark.parametrize("name", ["t.parquet", "t"])
@pytest.mark.parametrize(
    "cells, row",
    [
        ([3, 3.5], r"row 0: 3 would be written as 3\.0"),  # was silently 3.0 on reading back
        ([[2.5], [1, 2.5]], r"row 1: \[1, 2\.5\] would be written as \[1\.0, 2\.5\]"),
        ([{"x": 0.5}, {"x": 2}], r"row 1: \{'x': 2\} would be written as \{'x': 2\.0\}"),
    ],
)
def test_an_int_a_column_would_turn_into_a_float_is_refused(tmp_path, name, cells, row):
    rows = [{"answer": c} for c in cells]
    with pytest.raises(DataError, match=rf"column 'answer' {row}.*\.jsonl"):
        write_rows(rows, tmp_path / name)
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("big", [2**63, -(2**63) - 1, [1, 2**70], {"x": 2**64}])
def test_an_integer_past_64_bits_is_named_not_an_overflow_traceback(tmp_path, big):
    with pytest.raises(DataError, match=r"column 'n' row 1 holds an integer outside the signed 64"):
        write_rows([{"n": None}, {"n": big}], tmp_path / "t.parquet")


def test_what_arrow_keeps_as_written_is_still_written(tmp_path):
    rows = [
        {"n": 2**63 - 1, "f": 1.0, "x": float("nan"), "d": {"a": 1}, "l": [1.5, 2.0]},
        {"n": -(2**63), "f": None, "x": 2.5, "d": {"b": 2.5}, "l": []},
    ]
    write_rows(rows, tmp_path / "t.parquet")
    back = read_rows(tmp_path / "t.parquet")
    assert [r["n"] for r in back] == [2**63 - 1, -(2**63)]
    assert back[1]["d"] == {"a": None, "b": 2.5} and back[0]["l"] == [1.5, 2.0]
