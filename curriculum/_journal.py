"""The append-only journal that makes pre-scoring resumable.

One header line records the settings; then one line per finished row (``{"i", "passes", "trials",
"unchecked"}``), flushed and fsynced after each batch. A run killed at any moment leaves at worst a
torn last line, which the next run cuts off; rows already written are never scored again, so
nothing is lost or duplicated. A journal written under other settings is refused, not mixed in
(one with no row scored yet, from a run that failed at its first batch, is started afresh).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from passband.curriculum.prescore_config import PrescoreError

_MAGIC = "passband.prescore/1"


class Journal:
    def __init__(self, path: str | os.PathLike, settings: dict) -> None:
        self.path = Path(path)
        self.settings = json.loads(json.dumps(settings, sort_keys=True, default=str))
        self.done: dict[int, dict] = {}
        if self.path.exists() and b"\n" in self.path.read_bytes():
            self._load()
        else:  # new, or killed before its header line was complete
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write_lines([{"journal": _MAGIC, "settings": self.settings}], fresh=True)

    def record(self, results: list[dict]) -> None:
        """Append finished rows (dicts with ``i``) that are not in the journal yet."""
        new = [r for r in results if r["i"] not in self.done]
        if new:
            self._write_lines(new)
            self.done.update((r["i"], r) for r in new)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def _load(self) -> None:
        raw = self.path.read_bytes()
        good_end = raw.rfind(b"\n") + 1  # bytes after the last newline are a torn write
        lines = raw[:good_end].decode("utf-8").splitlines()
        try:
            header = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            header = {}
        if header.get("journal") != _MAGIC:
            raise PrescoreError(f"{self.path} is not a passband pre-scoring journal; move it away")
        now = _flat(self.settings)
        was = {**{k: v for k, v in _IMPLIED.items() if k in now}, **_flat(header["settings"])}
        if was != now and len(lines) <= 1:  # no row scored: none lost
            self._write_lines([{"journal": _MAGIC, "settings": self.settings}], fresh=True)
            return
        if was != now:
            diff = [
                f"{k} {_short(was.get(k))} there, {_short(now.get(k))} now"
                for k in sorted(set(was) | set(now))
                if was.get(k) != now.get(k)
            ]
            older = "prompts_sha256" in header["settings"]  # before references were keyed
            raise PrescoreError(
                f"{self.path} was written with other settings ({'; '.join(diff)}); rerun with "
                "the same ones, or delete it (passband score --overwrite) to start over"
                + (
                    " (it was written by an older passband, whose journal did not record the "
                    "reference columns: it cannot be resumed)"
                    if older
                    else ""
                )
            )
        for line in lines[1:]:
            row = json.loads(line)
            self.done.setdefault(int(row["i"]), row)
        if good_end < len(raw):
            with open(self.path, "r+b") as f:
                f.truncate(good_end)

    def _write_lines(self, items: list[dict], fresh: bool = False) -> None:
        with open(self.path, "w" if fresh else "a", encoding="utf-8") as f:
            f.write("".join(json.dumps(item, sort_keys=True) + "\n" for item in items))
            f.flush()
            os.fsync(f.fileno())


# What a journal written before a setting was recorded sampled with (top_k and stop came in
# stop 44; before, passband score had neither): such a journal resumes at those values.
_IMPLIED = {"settings.top_k": "0", "settings.stop": "[]"}  # as the journal writes them


def _flat(settings: dict, prefix: str = "") -> dict:
    """Nested settings as ``{"a.b": value}``, so a difference names the field itself."""
    out: dict = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _short(value) -> str:
    text = "(unset)" if value is None else json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:18] + "..." + text[-18:]
