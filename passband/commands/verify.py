"""``passband verify``: score a file of completions with a verifier, resumably.

Rows are read by ``passband.curriculum.read_rows`` (JSONL, JSON, Parquet, CSV, a saved dataset);
each output row is the input row plus ``score``, ``status``, ``detail`` and ``components``. A
completion given as chat messages is read as its assistant text, as ``as_trl_reward`` reads it.
The output is JSONL written append-only in chunks, each chunk flushed and fsynced, so a run that
is killed loses at most the chunk in flight: rerunning the same command truncates a torn last
line, checks that every row already written still matches the input row it came from (so an
input edited in between is refused, not silently mixed), and continues. A ``.parquet`` output
path is produced from that JSONL file once every row is scored. The output may never be the input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from passband.sandbox._worker_limits import TIMEOUT_ALLOWED, WORKERS_ALLOWED, timeout_ok, workers_ok

HELP = "Score a JSONL/Parquet file of completions with a verifier (resumable)."
_VERDICT_KEYS = ("score", "status", "detail", "components")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "input", type=Path, nargs="?", help="JSONL or Parquet file with one completion per row"
    )
    parser.add_argument(
        "--list", action="store_true", help="print the registered verifier names and exit"
    )
    parser.add_argument(
        "--verifier",
        "-v",
        help="registered verifier name (math, json_schema, exact, regex, ...) or module:attribute of a verifier/Reward",
    )
    parser.add_argument(
        "--completion-column", "-c", default="completion", help="column holding the completion"
    )
    parser.add_argument(
        "--ref",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="reference field from a column, e.g. --ref answer=gold (repeatable); "
        "by default every other column is passed under its own name",
    )
    parser.add_argument(
        "--output",
        "-o",
        type=Path,
        help="output .jsonl or .parquet (default: INPUT.verdicts.jsonl)",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per completion (hard, worker killed)"
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: CPU count)"
    )
    parser.add_argument(
        "--chunk-size", type=int, default=256, help="rows scored and fsynced per chunk"
    )
    parser.add_argument(
        "--success-threshold",
        type=float,
        default=0.5,
        help="a plain-number reward passes (status ok) at >= this, the rule passband score and "
        "training use; verdicts pass on passed (default 0.5)",
    )
    parser.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    from passband.errors import UsageError

    if args.list:
        from passband.verifiers import names

        print("\n".join(names()))
        return 0
    _check_options(args)
    from passband.curriculum._success import describe_success_rule, with_success_rule

    verifier = _resolve_verifier(args.verifier)
    print(describe_success_rule(verifier, args.success_threshold), file=sys.stderr)
    verifier = with_success_rule(verifier, args.success_threshold)  # score's and training's rule
    rows = _read_rows(args.input)
    refs = _parse_refs(args.ref)
    _check_columns(rows, args.completion_column, refs)
    final = args.output or args.input.with_name(args.input.with_suffix("").name + ".verdicts.jsonl")
    journal = final if final.suffix == ".jsonl" else final.with_name(final.name + ".partial.jsonl")
    if final.suffix not in (".jsonl", ".parquet"):
        raise UsageError(f"--output must end in .jsonl or .parquet, got {final}")
    _refuse_own_input(args.input, final, journal)
    done = _prepare_journal(journal, args, rows)
    _score_rows(verifier, rows, refs, journal, done, args)
    if final.suffix == ".parquet":
        _write_parquet(journal, final)
    return _print_summary(journal, final)


def _check_options(args) -> None:
    from passband.errors import UsageError

    if args.input is None or not args.verifier:
        raise UsageError("pass an INPUT file and --verifier NAME (see --list for the names)")
    if not args.input.exists():
        raise UsageError(f"input file not found: {args.input}")
    if not timeout_ok(args.timeout):
        raise UsageError(f"--timeout must be {TIMEOUT_ALLOWED}, got {args.timeout}")
    if not workers_ok(args.workers):
        raise UsageError(f"--workers must be {WORKERS_ALLOWED}, got {args.workers}")
    if args.chunk_size < 1:
        raise UsageError(f"--chunk-size must be >= 1, got {args.chunk_size}")
    if not math.isfinite(args.success_threshold):
        raise UsageError(
            f"--success-threshold must be a finite number, got {args.success_threshold}"
        )


def _refuse_own_input(source: Path, *outputs: Path) -> None:
    from passband.errors import UsageError

    for out in outputs:
        meta = out.with_name(out.name + ".meta.json")
        for path in (out, meta):
            same = path.resolve() == source.resolve() or (
                path.exists() and os.path.samefile(path, source)
            )
            if same:
                raise UsageError(
                    f"--output {str(out)!r} would overwrite the input {str(source)!r}"
                    "; choose another output path (verdicts are written beside the "
                    "input rows, never over them)"
                )


def _resolve_verifier(spec: str):
    from passband._verifier_spec import resolve_verifier

    return resolve_verifier(spec)


def _read_rows(path: Path) -> list[dict]:
    """JSONL, Parquet, CSV or a saved dataset directory, read the way ``passband score`` reads them."""
    from passband.curriculum import read_rows
    from passband.errors import UsageError

    try:
        return read_rows(path)
    except (ValueError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None


def _parse_refs(specs: list[str]) -> dict[str, str]:
    from passband.errors import UsageError

    refs = {}
    for spec in specs:
        field, sep, column = spec.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise UsageError(f"--ref expects FIELD=COLUMN (e.g. answer=gold), got {spec!r}")
        refs[field.strip()] = column.strip()
    return refs


def _check_columns(rows: list[dict], completion_column: str, refs: dict[str, str]) -> None:
    from passband.errors import UsageError

    if not rows:
        return
    columns = sorted({k for row in rows[:100] for k in row})
    for what, column in [(f"--completion-column {completion_column}", completion_column)] + [
        (f"--ref {f}={c}", c) for f, c in refs.items()
    ]:
        if column not in columns:
            raise UsageError(
                f"{what}: no such column {column!r}; the input has {', '.join(columns)}"
            )
    wanted = [completion_column, *refs.values()]
    lacking = [
        f"row {i} lacks {missing}"
        for i, row in enumerate(rows)
        if (missing := [c for c in wanted if c not in row])
    ]
    if lacking:  # graded as an empty answer or a missing reference, they would read as wrong
        from passband.errors import first_few

        raise UsageError(
            f"{len(lacking)} of {len(rows)} rows lack a column to grade: {first_few(lacking)}"
        )
    clash = [k for k in _VERDICT_KEYS if k in columns]
    if clash:
        raise UsageError(
            f"input already has column(s) {clash} that the verdict would overwrite; rename them"
        )


def _references(row: dict, completion_column: str, refs: dict[str, str]) -> dict:
    reference = {k: v for k, v in row.items() if k != completion_column}
    for field, column in refs.items():
        reference[field] = row.get(column)
    return reference


def _prepare_journal(journal: Path, args, rows: list[dict]) -> int:
    """Rows already scored (0 for a fresh run); a torn last line from a kill is cut off, and each
    row already written must still match its input row."""
    from passband.errors import UsageError

    meta_path = journal.with_name(journal.name + ".meta.json")
    meta = {
        "input": str(args.input.resolve()),
        "verifier": args.verifier,
        "completion_column": args.completion_column,
        "ref": sorted(args.ref),
        "success_threshold": args.success_threshold,
    }
    if args.overwrite or not journal.exists():
        journal.parent.mkdir(parents=True, exist_ok=True)
        journal.write_bytes(b"")
        meta_path.write_text(json.dumps(meta))
        return 0
    if meta_path.exists() and json.loads(meta_path.read_text()) != meta:
        raise UsageError(
            f"{journal} was written by a different run ({meta_path}); pass --overwrite or another --output"
        )
    data = journal.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep != len(data):
        with open(journal, "r+b") as f:
            f.truncate(keep)
    written = data[:keep].splitlines()
    if len(written) > len(rows):
        raise UsageError(
            f"{journal} has {len(written)} rows but the input only {len(rows)}; pass --overwrite"
        )
    changed = _first_changed(written, rows)
    if changed is not None:
        raise UsageError(
            f"{args.input}: row {changed} changed since {journal} was written, so its "
            "verdict (and any after it) may be stale; pass --overwrite to score the "
            "input again"
        )
    return len(written)


def _first_changed(written: list[bytes], rows: list[dict]) -> int | None:
    """Index of the first written record whose input fields differ from the input row now."""
    for i, (line, row) in enumerate(zip(written, rows)):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return i
        before = {k: v for k, v in record.items() if k not in _VERDICT_KEYS}
        if _canonical(before) != _canonical(json.loads(_canonical(row))):
            return i
    return None


def _canonical(obj) -> str:
    # As a string: NaN equals itself there, and non-JSON values compare as they were written.
    return json.dumps(obj, ensure_ascii=False, default=str, sort_keys=True)


def _score_rows(verifier, rows: list[dict], refs: dict, journal: Path, done: int, args) -> None:
    from tqdm import tqdm

    from passband.verifiers import verify_batch
    from passband.verifiers._from_trl import is_adapted

    trl = is_adapted(verifier)
    with (
        open(journal, "ab") as out,
        tqdm(
            total=len(rows),
            initial=done,
            unit="row",
            desc="verify",
            disable=args.no_progress,
            dynamic_ncols=True,
        ) as bar,
    ):
        for start in range(done, len(rows), args.chunk_size):
            chunk = rows[start : start + args.chunk_size]
            completions = [_text(row.get(args.completion_column)) for row in chunk]
            references = [_references(row, args.completion_column, refs) for row in chunk]
            if trl:  # as TRL gives it: no 'completion' column
                references = [{k: v for k, v in r.items() if k != "completion"} for r in references]
            verdicts = verify_batch(
                verifier, completions, references, timeout=args.timeout, workers=args.workers
            )
            lines = []
            for row, verdict in zip(chunk, verdicts):
                record = dict(
                    row,
                    score=verdict.score,
                    status=verdict.status,
                    detail=verdict.detail,
                    components=dict(verdict.components),
                )
                lines.append(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            # backslashreplace writes a lone surrogate as the JSON escape \udXXX: still valid JSON
            _append(out, "".join(lines).encode("utf-8", "backslashreplace"), journal)
            bar.update(len(chunk))


def _append(out, data: bytes, journal: Path) -> None:
    import errno

    from passband.errors import DiskFullError

    try:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        raise DiskFullError(
            f"no space left on {journal}; free some space and rerun the same "
            "command: it resumes after the last complete row"
        ) from None


def _text(value) -> str:
    """A completion's text; chat messages (or content blocks) are read as ``as_trl_reward`` reads them."""
    from passband.verifiers.adapters import _completion_text

    return "" if value is None else _completion_text(value)


def _write_parquet(journal: Path, final: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:  # parquet needs one struct type; components keys vary between rows
        row["components"] = json.dumps(row["components"])
    tmp = final.with_name(final.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(rows), tmp)
    os.replace(tmp, final)


def _print_summary(journal: Path, final: Path) -> int:
    """The table by status; the exit code: 1 when every row is an ``error`` (the verifier or its
    ``--ref`` mapping, not the completions), else 0."""
    counts: dict[str, list[float]] = {}
    example = ""
    with open(journal, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            counts.setdefault(record["status"], []).append(float(record["score"]))
            if record["status"] == "error" and not example:
                example = record.get("detail") or ""
    total = sum(len(v) for v in counts.values())
    print(f"\n{'status':<10}{'rows':>8}{'share':>9}{'mean score':>12}")
    for status in ("ok", "wrong", "invalid", "error", "timeout"):
        scores = counts.get(status, [])
        share = len(scores) / total if total else 0.0
        mean = sum(scores) / len(scores) if scores else 0.0
        print(f"{status:<10}{len(scores):>8}{share:>9.1%}{mean:>12.3f}")
    print(f"{'total':<10}{total:>8}\nverdicts written to {final}")
    if total and len(counts.get("error", [])) == total:
        print(
            f"passband verify: every row got an error verdict (e.g. {example!r}): check the "
            "verifier and its --ref mapping on one row",
            file=sys.stderr,
        )
        return 1
    return 0
