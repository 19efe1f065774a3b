"""``passband report``: a run directory -> PNG charts, one self-contained HTML page, a text summary.

The page embeds every chart as a base64 data URI and carries its CSS inline, so it can be copied
off a cluster and opened anywhere with no network. While a run is live the page has a meta
refresh, so a browser left open on it follows the run. The text summary is the same information
for people on SSH, and the thing the tests read.

Files are replaced atomically (write to a temporary name, then ``os.replace``) so a browser that
refreshes mid-render never sees half a page.
"""

from __future__ import annotations

import os
import textwrap
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from passband._rundir import RunData, load_run, series
from passband._runstats import SCALE_FACTOR, Flag, RunView, describe, gradient_threshold

__all__ = ["Report", "summarize", "format_summary", "write_report", "run_alerts"]


@dataclass
class Report:
    """What ``write_report`` produced."""

    html: Path
    run_dir: Path
    charts: dict[str, Path]  # stem -> PNG path, only the charts that were drawn
    skipped: dict[str, str]  # stem -> why it was not drawn
    summary: list[tuple[str, str]]  # (label, value) rows of the summary table
    alerts: list[tuple[int, str]]  # (step, "name: message")
    notes: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)  # outlier prompts, worst first
    text: str = ""  # the terminal summary


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def run_alerts(run: RunData) -> list[tuple[int, str]]:
    """Alerts the trainer logged; for a run logged without an ``alerts`` field, a replay of the
    metrics through the default ``AlertMonitor`` (marked as replayed)."""
    if any("alerts" in row for row in run.metrics):
        return [
            (row.get("step", i + 1), str(a))
            for i, row in enumerate(run.metrics)
            for a in row.get("alerts") or []
        ]
    from passband.trainer.alerts import AlertMonitor

    monitor = AlertMonitor()
    return [
        (a.step, f"{a} (replayed by passband report)")
        for row in run.metrics
        for a in monitor.update(row)
    ]


def _pass_rate_rows(run: RunData) -> list[tuple[str, str]]:
    steps, acc = series(run.metrics, "pass_rate")
    if not acc:
        return [("pass rate", "not logged")]
    best = max(range(len(acc)), key=acc.__getitem__)
    k = max(1, len(acc) // 10)
    return [
        ("pass rate (final)", f"{acc[-1]:.3f} at step {steps[-1]}"),
        ("pass rate (best)", f"{acc[best]:.3f} at step {steps[best]}"),
        ("pass rate (first 10% -> last 10%)", f"{_mean(acc[:k]):.3f} -> {_mean(acc[-k:]):.3f}"),
    ]


def _length_rows(run: RunData) -> list[tuple[str, str]]:
    _, length = series(run.metrics, "length/mean")
    if not length:
        return [("length trend", "not logged")]
    k = max(1, len(length) // 10)
    before, after = _mean(length[:k]), _mean(length[-k:])
    change = f" ({after / before - 1:+.0%})" if before else ""
    rows = [("length trend (first 10% -> last 10%)", f"{before:.0f} -> {after:.0f} tokens{change}")]
    _, truncated = series(run.metrics, "length/truncated_share")
    if truncated:
        rows.append(("truncated completions (last step)", f"{truncated[-1]:.1%}"))
    return rows


def _group_rows(run: RunData) -> list[tuple[str, str]]:
    _, rolled = series(run.metrics, "groups/rolled")
    _, effective = series(run.metrics, "groups/effective")
    _, surplus = series(run.metrics, "groups/surplus")
    _, zero = series(run.metrics, "groups/zero_variance_share")
    rows = []
    if rolled and effective and sum(rolled):
        # trained groups; groups with signal beyond prompts_per_step (surplus) are observed only
        text = f"{sum(effective) / sum(rolled):.1%} of {sum(rolled):.0f} rolled groups trained on"
        if len(surplus) == len(effective):  # logs from before the surplus count lack it
            signal = sum(effective) + sum(surplus)
            text += f", {signal / sum(rolled):.1%} carried signal"
        rows.append(("effective-group share", text))
    if zero:
        rows.append(("zero-variance share (mean, last)", f"{_mean(zero):.1%}, {zero[-1]:.1%}"))
    return rows or [("groups", "not logged")]


def _prior_rows(run: RunData) -> list[tuple[str, str]]:
    """Whether the curriculum started from pre-scores: the run's first logged count."""
    _, used = series(run.metrics, "curriculum/priors/used")
    if not used:
        return []  # uniform sampling, or a sampler that keeps no priors
    _, unused = series(run.metrics, "curriculum/priors/unused")
    text = f"{used[0]:.0f} prompts started from pre-scores" if used[0] else "none (cold start)"
    if unused and unused[0]:
        text += f"; {unused[0]:.0f} pre-scores matched no prompt"
    return [("curriculum priors", text)]


def _concentration_rows(view: RunView) -> list[tuple[str, str]]:
    c = view.concentration
    if c is None:
        return []
    per_step = []
    for f in c.top:
        share, equal = sum(c.top[f]) / len(c.steps), sum(c.equal[f]) / len(c.steps)
        per_step.append(f"top {f:.0%} carry {share:.1%} (equal shares: {equal:.1%})")
    run = [f"top {f:.0%} {s:.1%} (equal {e:.1%})" for f, (s, e) in c.run_top.items()]
    return [
        ("gradient concentration (mean per step)", ", ".join(per_step)),
        ("gradient concentration (whole run)", ", ".join(run)),
    ]


def _outlier_rows(view: RunView) -> list[tuple[str, str]]:
    if not view.visits:
        return []
    if not view.flags:
        k = gradient_threshold(view.group_size, view.advantage)
        return [
            (
                "outlier prompts",
                f"none (no group above {k:g}x its step's median gradient share "
                f"or {SCALE_FACTOR:g}x the run's 90th-percentile reward scale)",
            )
        ]
    named = "; ".join(
        f"{f.prompt}: {f.rule}, {f.reason}; rewards {describe(f.visits)}" for f in view.flags[:3]
    )
    more = f"; ... and {len(view.flags) - 3} more" if len(view.flags) > 3 else ""
    return [("outlier prompts", f"{len(view.flags)} flagged. {named}{more}")]


def _inactive_rows(view: RunView) -> list[tuple[str, str]]:
    off = [text.splitlines()[0] for text in map(view.inactive, ("clip_fraction", "kl")) if text]
    return [("inactive by configuration", "; ".join(off))] if off else []


def summarize(
    run: RunData, *, live: bool = False, view: RunView | None = None
) -> list[tuple[str, str]]:
    """The rows of the summary table (and of the text summary), as (label, value) strings."""
    view = view or RunView(run)
    steps = len(run.metrics)
    target = f" of {run.max_steps}" if run.max_steps else ""
    state = "live" if live else ("finished" if run.finished() else "stopped")
    rows = [
        ("run", str(run.path)),
        (
            "steps",
            f"{steps} logged, last step {run.last_step}{target} ({state})"
            if steps
            else f"no steps recorded yet ({state})",
        ),
    ]
    if not steps:
        return rows
    rows += _pass_rate_rows(run) + _length_rows(run) + _group_rows(run) + _prior_rows(run)
    rows += _concentration_rows(view) + _outlier_rows(view) + _inactive_rows(view)
    _, kl = series(run.metrics, "kl")
    if kl:
        rows.append(("KL (last, max)", f"{kl[-1]:.4g}, {max(kl):.4g}"))
    _, seconds = series(run.metrics, "time/step_s")
    if seconds:
        rows.append(("time per step (mean)", f"{_mean(seconds):.3g} s"))
    return rows


def format_summary(
    summary: list[tuple[str, str]],
    alerts: list[tuple[int, str]],
    notes: list[str],
    *,
    max_alerts: int = 20,
) -> str:
    """Plain-text summary for the terminal."""
    width = max(len(label) for label, _ in summary)
    lines = [f"{label:<{width}}  {value}" for label, value in summary]
    lines.append(f"alerts: {len(alerts) or 'none'}")
    for step, text in alerts[:max_alerts]:
        lines += textwrap.wrap(
            f"step {step}: {text}", width=100, initial_indent="  ", subsequent_indent="      "
        )
    if len(alerts) > max_alerts:
        lines.append(f"  ... and {len(alerts) - max_alerts} more (see the HTML page)")
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _draw(view: RunView, out: Path) -> tuple[dict[str, Path], dict[str, str]]:
    from passband.plots import CHARTS

    charts, skipped = {}, {}
    for stem, _, _, draw in CHARTS:
        path, tmp = out / f"{stem}.png", out / f".{stem}.tmp.png"
        reason = draw(view, tmp)
        if reason is None and tmp.is_file():
            os.replace(tmp, path)
            charts[stem] = path
        else:
            tmp.unlink(missing_ok=True)
            path.unlink(missing_ok=True)  # a chart drawn by an earlier render is stale now
            skipped[stem] = reason or "the chart function wrote no file"
    return charts, skipped


def write_report(
    run_dir: str | Path,
    out_dir: str | Path | None = None,
    *,
    live: bool = False,
    refresh_s: int = 30,
    top: int = 15,
    run: RunData | None = None,
    last_visits: int | None = None,
) -> Report:
    """Render every chart, the HTML page and the text summary of one run directory.

    ``top``: rows of the most-visited-prompts table. ``last_visits`` sized the per-prompt heat map
    that views which scale replaced; it is accepted, with a warning, for one release.
    """
    from passband._report_page import render_html

    if last_visits is not None:
        warnings.warn(
            "write_report(last_visits=...) is deprecated and ignored: the per-prompt heat "
            "map it sized is gone (see top=)",
            DeprecationWarning,
            stacklevel=2,
        )

    run = run or load_run(run_dir)
    view = RunView(run)
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    charts, skipped = _draw(view, out)
    alerts = run_alerts(run)
    summary = summarize(run, live=live, view=view)
    report = Report(
        html=out / "index.html",
        run_dir=run.path,
        charts=charts,
        skipped=skipped,
        summary=summary,
        alerts=alerts,
        notes=list(run.notes),
        flags=view.flags,
    )
    report.text = format_summary(summary, alerts, report.notes)
    page = render_html(report, view, live=live, refresh_s=refresh_s, top=top)
    _atomic_write(report.html, page.encode("utf-8"))
    return report
