"""The one reader (and writer) of tables: training, ``passband verify`` and ``passband score``.

``read_rows(path, split=...)`` returns every row, in order, as a list of dicts. One behaviour per
format, chosen by the path:

==========================  ============================================================
``.jsonl`` / ``.ndjson``    JSON Lines: one JSON object per line; blank lines are skipped
``.json``                   a JSON array of objects; a file that does not start with ``[``
                            is read as JSON Lines (what ``datasets.load_dataset("json")`` does)
``.parquet``                Parquet (pyarrow)
``.csv``                    CSV with a header row; every cell is a string
a directory                 a dataset saved with ``datasets``' ``save_to_disk`` (``split``
                            picks one split of a ``DatasetDict``); otherwise the file
                            ``<split>.jsonl`` / ``.json`` / ``.parquet`` / ``.csv`` inside it
                            (``split`` defaults to ``train``)
==========================  ============================================================

Every problem raises ``passband.errors.DataError`` naming ``file:line``: a line that is not JSON,
a line that is not an object, bytes that are not UTF-8. Writes (``write_rows``) keep every row's
columns (a row without one holds null there), refuse a Parquet or saved-dataset column that mixes
types, would turn an int into a float (3 into 3.0) or holds an int past 64 bits, with a
``DataError`` naming it (``check_writable`` says so before the work), and are atomic (a
sibling temporary, then a rename): a killed run never leaves a half-written output behind. Heavy
readers (pyarrow, datasets) load lazily.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
from pathlib import Path

from passband.errors import DataError

FORMATS = ("jsonl", "json", "parquet", "csv", "hf")
_SUFFIXES = {
    ".jsonl": "jsonl",
    ".json": "json",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".csv": "csv",
}
_IN_DIRECTORY = (".jsonl", ".json", ".parquet", ".csv")
_SAVED_DATASET = ("dataset_info.json", "state.json", "dataset_dict.json")


def table_format(path: str | os.PathLike, *, must_exist: bool) -> str:
    """The format a path stands for: by suffix, or ``hf`` for a directory (saved dataset)."""
    path = Path(path)
    if path.is_dir() or (not must_exist and not path.suffix):
        return "hf"
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise DataError(
            f"{str(path)!r}: unknown dataset format {path.suffix!r}; use .jsonl, "
            ".json, .parquet, .csv, or a directory saved with datasets' save_to_disk"
        )
    if must_exist and not path.exists():
        raise DataError(f"dataset {str(path)!r} does not exist")
    return fmt


def read_rows(path: str | os.PathLike, *, split: str | None = None) -> list[dict]:
    """All rows of a table file or directory, in order (the formats: see the module doc)."""
    path = Path(path)
    if path.is_dir() and not any((path / name).exists() for name in _SAVED_DATASET):
        path = _split_file(path, split or "train")
    fmt = table_format(path, must_exist=True)
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "json":
        return _read_json(path)
    if fmt == "csv":
        text = "".join(line for _, line in _lines(path))
        return [dict(row) for row in csv.DictReader(io.StringIO(text, newline=""))]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow's errors share no base class
            raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
    return _read_hf(path, split)


def _split_file(directory: Path, split: str) -> Path:
    for ext in _IN_DIRECTORY:
        if (directory / f"{split}{ext}").is_file():
            return directory / f"{split}{ext}"
    raise DataError(
        f"directory {str(directory)!r} is neither a dataset saved with save_to_disk "
        f"nor holds {split}.jsonl/.json/.parquet/.csv (choose the split, or point at "
        "a file)"
    )


def write_rows(rows: list[dict], path: str | os.PathLike) -> str:
    """Write ``rows`` atomically in the format ``path`` names; returns the format used."""
    path = Path(path)
    fmt = table_format(path, must_exist=False)
    fmt = "jsonl" if fmt == "json" else fmt  # JSON Lines, which read_rows reads back as .json
    if fmt == "hf":
        check_replaceable(path)  # before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if fmt == "jsonl":
        with open(tmp, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    elif fmt == "csv":
        _write_csv(rows, tmp)
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(_arrow_table(rows, path), tmp)
    else:
        from datasets import Dataset

        _arrow_table(rows, path)  # a column it cannot hold, named
        columns = _columns(rows)  # every row's, not only the first row's
        Dataset.from_list([{c: row.get(c) for c in columns} for row in rows]).save_to_disk(str(tmp))
    _replace(tmp, path)
    return fmt


def check_writable(rows: list[dict], path: str | os.PathLike) -> None:
    """A ``DataError`` naming the column when ``rows`` cannot be written to ``path`` (Parquet
    and saved datasets hold one type per column); call it before the work that makes them."""
    fmt = table_format(path, must_exist=False)
    if fmt == "hf":
        check_replaceable(path)
    if fmt in ("parquet", "hf"):
        _arrow_table(rows, Path(path))


def check_replaceable(path: str | os.PathLike, inputs=()) -> None:
    """A ``DataError`` when ``path`` is a directory that writing a saved dataset there would
    delete but that is no saved dataset (an ordinary folder: all of it would go), or that holds
    one of ``inputs`` (the data being read); it names what would be deleted."""
    path = Path(path)
    if not path.is_dir():
        return
    here = path.resolve()
    for given in inputs:
        where = Path(given).resolve()
        if where == here or here in where.parents:
            raise DataError(
                f"{str(path)!r} holds the input {os.fspath(given)!r}: writing a dataset there "
                "replaces the directory and would delete it; choose another output path"
            )
    names = sorted(p.name for p in path.iterdir())  # an empty directory loses nothing
    if names and not any((path / name).exists() for name in _SAVED_DATASET):
        listed = ", ".join(names[:5]) + (", ..." if names[5:] else "")
        raise DataError(
            f"{str(path)!r} is a directory but no saved dataset: writing one there replaces the "
            f"directory and would delete its {len(names)} entries ({listed}); choose another "
            "output path (a file path with a suffix: .jsonl, .parquet, .csv), or remove it yourself"
        )


def _columns(rows: list[dict]) -> list[str]:
    """Every column of every row, in order of first appearance."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)


def _arrow_table(rows: list[dict], path: Path):
    """The rows as an Arrow table: every row's columns (a row without one holds null there); a
    column that mixes types raises a ``DataError`` naming it, rather than converting its cells."""
    import pyarrow as pa

    arrays = {}
    for column in _columns(rows):
        values = [row.get(column) for row in rows]
        try:
            arrays[column] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise DataError(_mixed(path, column, values, exc)) from None
        except OverflowError:  # an integer past 64 bits
            big = next((i for i, v in enumerate(values) if _too_big(v)), "?")
            raise DataError(
                f"{path}: column {column!r} row {big} holds an integer outside the signed 64-bit "
                f"range, which {path.suffix or 'a saved dataset'} cannot hold; write a .jsonl "
                "output instead, or store the column as text"
            ) from None
        if _holds_floats(arrays[column].type):  # where an int would come back a float
            _check_kept(path, column, values, arrays[column])
    return pa.table(arrays)


def _holds_floats(kind) -> bool:
    """Whether an Arrow type holds floats at any depth."""
    import pyarrow as pa

    if pa.types.is_floating(kind):
        return True
    if pa.types.is_struct(kind):
        return any(_holds_floats(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_map(kind):
        return _holds_floats(kind.key_type) or _holds_floats(kind.item_type)
    value_type = getattr(kind, "value_type", None)  # the list types
    return value_type is not None and _holds_floats(value_type)


def _too_big(value) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return not -(2**63) <= value < 2**63
    if isinstance(value, dict):
        return any(_too_big(v) for v in value.values())
    return isinstance(value, (list, tuple)) and any(_too_big(v) for v in value)


def _check_kept(path: Path, column: str, values: list, array) -> None:
    """A ``DataError`` naming the first cell that Arrow would change: an integer widened to a
    float where the column also holds floats (3 would come back as 3.0), at any depth."""
    import pyarrow as pa

    if pa.types.is_floating(array.type):  # flat: only a Python int changes
        if not any(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return
    for i, (v, b) in enumerate(zip(values, array.to_pylist())):
        if _as_written(v) != _as_written(b):
            raise DataError(
                f"{path}: column {column!r} row {i}: {v!r} would be written as {b!r} "
                f"({path.suffix or 'a saved dataset'} holds one type per column); write a .jsonl "
                "output instead, or make the column's cells one type"
            )


def _as_written(value) -> str:
    """``value`` as JSON, where 3 and 3.0 differ; a dict's null entries left out, as Arrow
    fills a key that only some rows' dicts hold with null."""
    return json.dumps(_without_nulls(value), sort_keys=True, default=str)


def _without_nulls(value):
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_without_nulls(v) for v in value]
    return value


def _mixed(path: Path, column: str, values: list, exc: Exception) -> str:
    first: dict[str, int] = {}  # type name -> first row holding one
    for i, v in enumerate(values):
        if v is not None:
            first.setdefault(type(v).__name__, i)
    seen = "; ".join(f"{name} in row {i} ({values[i]!r})" for name, i in list(first.items())[:3])
    return (
        f"{path}: column {column!r} mixes types ({seen}), which {path.suffix or 'a saved dataset'} "
        f"cannot hold in one column ({exc}); write a .jsonl output instead, or make the column's "
        "cells one type"
    )


def _lines(path: Path):
    """(line number, text) of every line; bytes that are not UTF-8 name their line and column."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"{path}:{lineno}: not UTF-8 (byte 0x{raw[exc.start]:02x} at "
                    f"column {exc.start + 1}); save the file as UTF-8"
                ) from None


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        try:
            row = json.loads(line.rstrip("\r\n"))  # else an unclosed line's error is on "line 2"
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(row, dict):
            raise DataError(
                f"{path}:{lineno}: each line must be a JSON object, got {type(row).__name__}"
            )
        rows.append(row)
    return rows


def _read_json(path: Path) -> list[dict]:
    text = "".join(line for _, line in _lines(path))
    if not text.lstrip().startswith("["):
        return _read_jsonl(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
        ) from None
    bad = next((i for i, row in enumerate(data) if not isinstance(row, dict)), None)
    if bad is not None:
        raise DataError(
            f"{path}: item {bad} of the array is a {type(data[bad]).__name__}; "
            "each row must be a JSON object"
        )
    return data


def _read_hf(path: Path, split: str | None) -> list[dict]:
    from datasets import DatasetDict, load_from_disk

    data = load_from_disk(str(path))
    if isinstance(data, DatasetDict):
        if split is None and len(data) == 1:
            split = next(iter(data))
        if split not in data:
            raise DataError(
                f"{path} holds splits {sorted(data)}; choose one with --split "
                "(data.split in a run config)"
            )
        data = data[split]
    return data.to_list()


def _write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=_columns(rows))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(v) for k, v in row.items()})


def _csv_cell(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value


def _replace(tmp: Path, path: Path) -> None:
    """Put ``tmp`` where ``path`` is; a directory is swapped via a trash name so the old one
    stays whole until the new one is in place."""
    if tmp.is_dir():
        trash = path.with_name(f".{path.name}.old-{os.getpid()}")
        if path.exists():
            os.replace(path, trash)
        os.replace(tmp, path)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(tmp, path)
