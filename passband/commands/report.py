"""``passband report RUN_DIR``: charts, one self-contained HTML page and a terminal summary."""

from __future__ import annotations

import argparse
import sys
import time

HELP = "Render charts, an HTML page and a text summary of a training run directory."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dir", metavar="RUN_DIR", help="the trainer's output_dir (has metrics.jsonl)"
    )
    parser.add_argument(
        "--out",
        default=None,
        help="the folder to write the PNGs and index.html to, made if missing (default: "
        "RUN_DIR/report)",
    )
    parser.add_argument(
        "--watch",
        nargs="?",
        type=float,
        const=30.0,
        default=None,
        metavar="SECONDS",
        help="re-render every SECONDS (default 30) while the run is live; the page "
        "refreshes itself in the browser",
    )
    parser.add_argument(
        "--stale-after",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="with --watch: stop once no file changed for this long (default 900)",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=15,
        metavar="N",
        help="rows of the most-visited-prompts table (default 15)",
    )
    parser.add_argument("--last", type=int, default=None, help=argparse.SUPPRESS)  # deprecated


def _positive(args: argparse.Namespace) -> None:
    from passband.errors import UsageError

    if args.top < 1:
        raise UsageError(f"--top {args.top}: must be >= 1 (rows of the most-visited table)")
    if args.last is not None:  # the heat map it sized is gone; accepted for one release
        print(
            "note: --last is deprecated and ignored: the per-prompt heat map it sized was "
            "replaced by views that scale (see --top)",
            file=sys.stderr,
        )
    if args.watch is not None and args.watch <= 0:
        raise UsageError(f"--watch {args.watch}: must be > 0 seconds")
    from passband._paths import path_problem

    problem = args.out is not None and path_problem(args.out, folder=True)
    if problem:
        raise UsageError(
            f"--out {args.out!r} {problem}; --out names the folder the PNGs and index.html "
            "are written to (default: RUN_DIR/report)"
        )


def _render_once(args: argparse.Namespace, *, live: bool):
    from passband._report import write_report
    from passband._rundir import load_run

    run = load_run(args.run_dir)
    if live and (run.finished() or run.idle_seconds() > args.stale_after):
        live = False
    refresh = int(args.watch or 30)
    report = write_report(run.path, args.out, live=live, refresh_s=refresh, top=args.top, run=run)
    return report, live


def run(args: argparse.Namespace) -> int:
    _positive(args)
    if args.watch is None:
        report, _ = _render_once(args, live=False)
        print(report.text)
        print(f"\nreport: {report.html} ({len(report.charts)} charts)")
        return 0
    try:
        while True:
            report, live = _render_once(args, live=True)
            stamp = time.strftime("%H:%M:%S")
            print(
                f"[{stamp}] {report.summary[1][1]}; {len(report.alerts)} alert(s); {report.html}",
                flush=True,
            )
            if not live:
                break
            time.sleep(args.watch)
    except KeyboardInterrupt:  # leave a page that no longer refreshes
        report, _ = _render_once(args, live=False)
        print("stopped watching", file=sys.stderr)
    print(report.text)
    return 0
