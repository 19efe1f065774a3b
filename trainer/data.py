"""Training rows: a ``datasets.Dataset`` or a list of dicts with ``prompt`` or ``messages``."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["as_rows", "prompt_of"]


def as_rows(dataset) -> tuple[Any, list[str]]:
    if hasattr(dataset, "column_names"):  # datasets.Dataset: rows are read on demand
        rows, columns = dataset, list(dataset.column_names)
    else:
        rows = list(dataset)
        if rows and not all(isinstance(r, Mapping) for r in rows):
            raise TypeError("train_dataset must be a datasets.Dataset or a list of dicts")
        columns = list(rows[0]) if rows else []
    if len(rows) == 0:
        raise ValueError("train_dataset is empty")
    if "prompt" not in columns and "messages" not in columns:
        raise ValueError("train_dataset needs a 'prompt' column (text or chat messages) or a "
                         f"'messages' column; its columns are: {', '.join(columns)}")
    return rows, columns


def prompt_of(row: Mapping[str, Any]):
    if row.get("prompt") is not None:
        return row["prompt"]
    messages = list(row["messages"])
    if messages and messages[-1].get("role") == "assistant":  # the reference answer of SFT data
        messages = messages[:-1]
    return messages
