"""Read a training run directory (the trainer's ``output_dir``) for ``passband report``.

The files may be read while the trainer appends to them, so a truncated last line is expected and
skipped, not an error; a malformed line in the middle is skipped and counted. Every problem that
leaves a chart empty becomes a human-readable note in ``RunData.notes`` that the report shows,
instead of an exception: the user asked to *see* the run, and a partial picture beats a traceback.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from passband.errors import UsageError

__all__ = ["RunData", "load_run", "read_jsonl", "series"]

METRICS, GROUPS, CURRICULUM, CONFIG = (
    "metrics.jsonl",
    "groups.jsonl",
    "curriculum.json",
    "config.json",
)


@dataclass
class RunData:
    """Everything ``passband report`` draws, as plain Python objects."""

    path: Path
    metrics: list[dict] = field(default_factory=list)  # one dict per optimizer step, by step
    groups: list[dict] = field(default_factory=list)  # one dict per rolled-out group
    curriculum: dict | None = None  # {"band": [lo, hi], "estimates": {id: p}} or None
    config: dict = field(default_factory=dict)  # config.json as written (nested or flat)
    notes: list[str] = field(default_factory=list)  # what was missing or skipped, for the page
    last_write: float = 0.0  # newest mtime of the files read (seconds since the epoch)

    def setting(self, name: str, default=None):
        """A trainer setting from config.json, whether stored flat or under ``trainer``."""
        for table in (self.config.get("trainer"), self.config):
            if isinstance(table, dict) and name in table:
                return table[name]
        return default

    @property
    def max_steps(self) -> int | None:
        value = self.setting("max_steps")
        return value if isinstance(value, int) else None

    @property
    def last_step(self) -> int | None:
        return self.metrics[-1].get("step") if self.metrics else None

    def finished(self) -> bool:
        """True when the last recorded step reached ``max_steps`` from config.json."""
        return self.max_steps is not None and (self.last_step or 0) >= self.max_steps

    def idle_seconds(self) -> float:
        return time.time() - self.last_write if self.last_write else math.inf


def read_jsonl(path: Path) -> tuple[list[dict], int, bool]:
    """Rows of a JSONL file -> (rows, malformed lines skipped, last line was truncated)."""
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    # A line still being written has no newline yet and does not parse; a complete one may
    # simply lack its newline (not flushed yet) and is kept.
    truncated = bool(lines[-1].strip()) and _loads(lines[-1]) is _BAD
    if truncated:
        lines = lines[:-1]
    rows, bad = [], 0
    for line in lines:
        if not line.strip():
            continue
        row = _loads(line)
        if isinstance(row, dict):
            rows.append(row)
        else:
            bad += 1
    return rows, bad, truncated


_BAD = object()


def _well_formed(row: dict) -> bool:
    """A step number, and alerts (when present) as a list of strings, as the trainer writes them."""
    step = row.get("step")
    if isinstance(step, bool) or not isinstance(step, int):
        return False
    alerts = row.get("alerts", [])
    return isinstance(alerts, list) and all(isinstance(a, str) for a in alerts)


def _loads(line: str):
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return _BAD


def series(rows: list[dict], key: str) -> tuple[list[int], list[float]]:
    """(steps, values) for the rows where ``key`` holds a finite number."""
    xs, ys = [], []
    for i, row in enumerate(rows):
        value = row.get(key)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            continue
        step = row.get("step")
        xs.append(step if isinstance(step, (int, float)) else i + 1)
        ys.append(float(value))
    return xs, ys


def _read_rows(run: RunData, name: str, what: str) -> list[dict]:
    path = run.path / name
    if not path.is_file():
        run.notes.append(f"{name} not found: no {what}.")
        return []
    run.last_write = max(run.last_write, path.stat().st_mtime)
    rows, bad, truncated = read_jsonl(path)
    shaped = [r for r in rows if _well_formed(r)]  # a line the trainer cannot have written
    bad += len(rows) - len(shaped)
    rows = shaped
    if truncated:
        run.notes.append(f"{name}: the last line is incomplete (the run is writing it); skipped.")
    if bad:
        run.notes.append(f"{name}: {bad} malformed line(s) skipped.")
    return rows


def _read_json(run: RunData, name: str) -> dict | None:
    path = run.path / name
    if not path.is_file():
        return None
    run.last_write = max(run.last_write, path.stat().st_mtime)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        run.notes.append(f"{name} could not be parsed ({exc}); ignored.")
        return None
    if not isinstance(value, dict):
        run.notes.append(f"{name} is not a JSON object; ignored.")
        return None
    return value


def _curriculum(run: RunData, value: dict | None) -> dict | None:
    """curriculum.json as the charts expect it, or None and a note saying what was wrong."""
    if value is None:
        return None
    band, estimates = value.get("band"), value.get("estimates")
    numbers = (int, float)
    if not (
        isinstance(band, list)
        and len(band) == 2
        and all(isinstance(b, numbers) and not isinstance(b, bool) for b in band)
    ):
        run.notes.append(f"{CURRICULUM}: 'band' is {band!r}, not [low, high]; ignored.")
        return None
    if not isinstance(estimates, dict):
        run.notes.append(
            f"{CURRICULUM}: 'estimates' is not an object of prompt id -> pass rate; ignored."
        )
        return None
    good = {
        k: v
        for k, v in estimates.items()
        if isinstance(v, numbers) and not isinstance(v, bool) and math.isfinite(v)
    }
    if len(good) < len(estimates):
        run.notes.append(
            f"{CURRICULUM}: {len(estimates) - len(good)} estimate(s) that are not numbers skipped."
        )
    return {**value, "estimates": good}


def _by_step(rows: list[dict]) -> list[dict]:
    """Rows ordered by step; after a resume a step is logged twice and the later line wins."""
    latest: dict = {}
    for i, row in enumerate(rows):
        step = row.get("step")
        latest[step if isinstance(step, (int, float)) else ("line", i)] = row
    numbered = sorted((k, r) for k, r in latest.items() if not isinstance(k, tuple))
    return [r for _, r in numbered] + [r for k, r in latest.items() if isinstance(k, tuple)]


def load_run(path: str | Path) -> RunData:
    """Read a run directory; ``UsageError`` if it is not one, notes for anything partial."""
    root = Path(path).expanduser()
    if not root.exists():
        raise UsageError(f"{root} does not exist; pass the output_dir of a training run.")
    if not root.is_dir():
        raise UsageError(
            f"{root} is a file; pass the run directory (the trainer's output_dir) "
            f"that contains {METRICS}."
        )
    if not (root / METRICS).is_file() and not (root / CONFIG).is_file():
        raise UsageError(
            f"{root} is not a training run: it has neither {METRICS} (one line per "
            f"step) nor {CONFIG} (the resolved config). Pass the trainer's output_dir."
        )
    run = RunData(path=root)
    run.config = _read_json(run, CONFIG) or {}
    metrics = _read_rows(run, METRICS, "per-step metrics yet (the run has not finished a step)")
    run.metrics = _by_step(metrics)
    run.groups = _read_rows(run, GROUPS, "per-prompt group rewards")
    run.curriculum = _curriculum(run, _read_json(run, CURRICULUM))
    if not (run.path / CURRICULUM).exists():
        run.notes.append(
            f"{CURRICULUM} not found: no pass-rate estimates (curriculum off, or no "
            "checkpoint written yet)."
        )
    return run
