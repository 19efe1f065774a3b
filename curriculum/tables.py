"""Read and write datasets as lists of row dicts: JSONL, Parquet, CSV, saved Hugging Face datasets.

Pre-scoring needs every row in order and writes a whole new file, so a list of dicts is enough and
keeps the formats interchangeable. Writes are atomic (a sibling temporary, then a rename): a killed
run never leaves a half-written output behind. Heavy readers (pyarrow, datasets) load lazily.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
from pathlib import Path

FORMATS = ("jsonl", "parquet", "csv", "hf")
_SUFFIXES = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
             ".csv": "csv"}


def table_format(path: str | os.PathLike, *, must_exist: bool) -> str:
    """The format a path stands for: by suffix, or ``hf`` for a directory (saved dataset)."""
    path = Path(path)
    if path.is_dir() or (not must_exist and not path.suffix):
        return "hf"
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{str(path)!r}: unknown dataset format {path.suffix!r}; use .jsonl, "
                         ".parquet, .csv, or a directory saved with datasets' save_to_disk")
    if must_exist and not path.exists():
        raise FileNotFoundError(f"dataset {str(path)!r} does not exist")
    return fmt


def read_rows(path: str | os.PathLike, *, split: str | None = None) -> list[dict]:
    """All rows of a dataset file or saved dataset directory, in order."""
    fmt = table_format(path, must_exist=True)
    if fmt == "jsonl":
        return _read_jsonl(Path(path))
    if fmt == "csv":
        with open(path, newline="", encoding="utf-8") as f:
            return [dict(row) for row in csv.DictReader(f)]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    return _read_hf(Path(path), split)


def write_rows(rows: list[dict], path: str | os.PathLike) -> str:
    """Write ``rows`` atomically in the format ``path`` names; returns the format used."""
    path = Path(path)
    fmt = table_format(path, must_exist=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if fmt == "jsonl":
        with open(tmp, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    elif fmt == "csv":
        _write_csv(rows, tmp)
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), tmp)
    else:
        from datasets import Dataset

        Dataset.from_list(rows).save_to_disk(str(tmp))
    _replace(tmp, path)
    return fmt


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{lineno}: each line must be a JSON object")
            rows.append(row)
    return rows


def _read_hf(path: Path, split: str | None) -> list[dict]:
    from datasets import DatasetDict, load_from_disk

    data = load_from_disk(str(path))
    if isinstance(data, DatasetDict):
        if split is None and len(data) == 1:
            split = next(iter(data))
        if split not in data:
            raise ValueError(f"{path} holds splits {sorted(data)}; choose one with --split")
        data = data[split]
    return data.to_list()


def _write_csv(rows: list[dict], path: Path) -> None:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns))
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
