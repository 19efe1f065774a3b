"""``passband report``: a run directory -> PNG charts, one self-contained HTML page, a text summary.

The page embeds every chart as a base64 data URI and carries its CSS inline, so it can be copied
off a cluster and opened anywhere with no network. While a run is live the page has a meta
refresh, so a browser left open on it follows the run. The text summary is the same information
for people on SSH, and the thing the tests read.

Files are replaced atomically (write to a temporary name, then ``os.replace``) so a browser that
refreshes mid-render never sees half a page.
"""

from __future__ import annotations

import base64
import html
import os
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from passband.rundir import RunData, load_run, series

__all__ = ["Report", "summarize", "format_summary", "render_html", "write_report", "run_alerts"]


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
    text: str = ""  # the terminal summary


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def run_alerts(run: RunData) -> list[tuple[int, str]]:
    """Alerts the trainer logged; for a run logged without an ``alerts`` field, a replay of the
    metrics through the default ``AlertMonitor`` (marked as replayed)."""
    if any("alerts" in row for row in run.metrics):
        return [(row.get("step", i + 1), str(a)) for i, row in enumerate(run.metrics)
                for a in row.get("alerts") or []]
    from passband.trainer.alerts import AlertMonitor

    monitor = AlertMonitor()
    return [(a.step, f"{a} (replayed by passband report)") for row in run.metrics
            for a in monitor.update(row)]


def _pass_rate_rows(run: RunData) -> list[tuple[str, str]]:
    steps, acc = series(run.metrics, "pass_rate")
    if not acc:
        return [("pass rate", "not logged")]
    best = max(range(len(acc)), key=acc.__getitem__)
    k = max(1, len(acc) // 10)
    return [("pass rate (final)", f"{acc[-1]:.3f} at step {steps[-1]}"),
            ("pass rate (best)", f"{acc[best]:.3f} at step {steps[best]}"),
            ("pass rate (first 10% -> last 10%)", f"{_mean(acc[:k]):.3f} -> {_mean(acc[-k:]):.3f}")]


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
    _, zero = series(run.metrics, "groups/zero_variance_share")
    rows = []
    if rolled and effective and sum(rolled):
        rows.append(("effective-group share", f"{sum(effective) / sum(rolled):.1%} of "
                     f"{sum(rolled):.0f} rolled groups carried signal"))
    if zero:
        rows.append(("zero-variance share (mean, last)", f"{_mean(zero):.1%}, {zero[-1]:.1%}"))
    return rows or [("groups", "not logged")]


def _prompt_rows(run: RunData) -> list[tuple[str, str]]:
    from passband.plots import prompt_table

    ranked, shares, dominant, _ = prompt_table(run.groups)
    if not ranked:
        return []
    share = dict(zip(ranked, shares))
    value = ", ".join(f"{pid} ({share[pid]:.0%})" for pid in dominant[:5]) or "none above 2x fair share"
    return [("prompts dominating the gradient", value)]


def summarize(run: RunData, *, live: bool = False) -> list[tuple[str, str]]:
    """The rows of the summary table (and of the text summary), as (label, value) strings."""
    steps = len(run.metrics)
    target = f" of {run.max_steps}" if run.max_steps else ""
    state = "live" if live else ("finished" if run.finished() else "stopped")
    rows = [("run", str(run.path)),
            ("steps", f"{steps} logged, last step {run.last_step}{target} ({state})" if steps
             else f"no steps recorded yet ({state})")]
    if not steps:
        return rows
    rows += _pass_rate_rows(run) + _length_rows(run) + _group_rows(run) + _prompt_rows(run)
    _, kl = series(run.metrics, "kl")
    if kl:
        rows.append(("KL (last, max)", f"{kl[-1]:.4g}, {max(kl):.4g}"))
    _, seconds = series(run.metrics, "time/step_s")
    if seconds:
        rows.append(("time per step (mean)", f"{_mean(seconds):.1f} s"))
    return rows


def format_summary(summary: list[tuple[str, str]], alerts: list[tuple[int, str]],
                   notes: list[str], *, max_alerts: int = 20) -> str:
    """Plain-text summary for the terminal."""
    width = max(len(label) for label, _ in summary)
    lines = [f"{label:<{width}}  {value}" for label, value in summary]
    lines.append(f"alerts: {len(alerts) or 'none'}")
    for step, text in alerts[:max_alerts]:
        lines += textwrap.wrap(f"step {step}: {text}", width=100, initial_indent="  ",
                               subsequent_indent="      ")
    if len(alerts) > max_alerts:
        lines.append(f"  ... and {len(alerts) - max_alerts} more (see the HTML page)")
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;
padding:1.2rem;color:#1d2430;background:#fafbfc}
h1{font-size:1.4rem;margin:0}h2{font-size:1.1rem;border-bottom:1px solid #d8dee4;padding-bottom:.2rem}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-size:.8rem;margin-left:.5rem}
.live{background:#dff5e1;color:#145c24}.done{background:#e8eaee;color:#39424e}
table{border-collapse:collapse;font-size:.9rem}td{padding:.2rem .8rem .2rem 0;vertical-align:top}
td:first-child{color:#57606a;white-space:nowrap}
ul.alerts li{margin:.3rem 0;font-size:.88rem}.alerts b{color:#b42318}
.notes{color:#6e5b00;font-size:.85rem}
figure{margin:1rem 0;background:#fff;border:1px solid #d8dee4;border-radius:6px;padding:.6rem}
figure img{max-width:100%;height:auto;display:block}
figcaption{font-size:.88rem;color:#39424e;margin-bottom:.4rem}
.missing{color:#8c959f;font-style:italic}
"""


def _alerts_html(alerts: list[tuple[int, str]]) -> str:
    if not alerts:
        return "<p>No alerts.</p>"
    items = []
    for step, text in alerts:
        name, _, message = text.partition(": ")
        items.append(f"<li>step {step}: <b>{html.escape(name)}</b>: {html.escape(message)}</li>")
    return '<ul class="alerts">' + "".join(items) + "</ul>"


def _figure_html(stem: str, title: str, caption: str, png: Path | None, reason: str | None) -> str:
    head = f"<figcaption><b>{html.escape(title)}.</b> {html.escape(caption)}</figcaption>"
    if png is None:
        body = f'<p class="missing">Not drawn: {html.escape(reason or "no data")}.</p>'
    else:
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        body = f'<img alt="{html.escape(title)}" src="data:image/png;base64,{data}">'
    return f'<figure id="chart-{stem}">{head}{body}</figure>'


def render_html(report: Report, *, live: bool, refresh_s: int = 30) -> str:
    """The self-contained page: inline CSS, charts as data URIs, meta refresh while live."""
    from passband.plots import CHARTS

    refresh = f'<meta http-equiv="refresh" content="{int(refresh_s)}">' if live else ""
    badge = (f'<span class="badge live">live, refreshes every {int(refresh_s)} s</span>' if live
             else '<span class="badge done">not live</span>')
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
                   for k, v in report.summary)
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in report.notes)
    figures = "".join(_figure_html(stem, title, caption, report.charts.get(stem),
                                   report.skipped.get(stem)) for stem, title, caption, _ in CHARTS)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">{refresh}'
            f"<title>passband report: {html.escape(report.run_dir.name)}</title>"
            f"<style>{_CSS}</style></head><body>"
            f"<header><h1>passband report{badge}</h1><p>rendered {stamp}</p></header>"
            f"<section><h2>Summary</h2><table>{rows}</table></section>"
            f"<section><h2>Alerts ({len(report.alerts)})</h2>{_alerts_html(report.alerts)}</section>"
            + (f'<section class="notes"><h2>Notes</h2><ul>{notes}</ul></section>' if notes else "")
            + f"<section><h2>Charts</h2>{figures}</section></body></html>")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _draw(run: RunData, out: Path, *, last_visits: int) -> tuple[dict[str, Path], dict[str, str]]:
    from passband.plots import CHARTS, chart_prompts

    charts, skipped = {}, {}
    for stem, _, _, draw in CHARTS:
        path, tmp = out / f"{stem}.png", out / f".{stem}.tmp.png"
        kwargs = {"last": last_visits} if draw is chart_prompts else {}
        reason = draw(run, tmp, **kwargs)
        if reason is None and tmp.is_file():
            os.replace(tmp, path)
            charts[stem] = path
        else:
            tmp.unlink(missing_ok=True)
            skipped[stem] = reason or "the chart function wrote no file"
    return charts, skipped


def write_report(run_dir: str | Path, out_dir: str | Path | None = None, *, live: bool = False,
                 refresh_s: int = 30, last_visits: int = 8, run: RunData | None = None) -> Report:
    """Render every chart, the HTML page and the text summary of one run directory."""
    run = run or load_run(run_dir)
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    charts, skipped = _draw(run, out, last_visits=last_visits)
    alerts = run_alerts(run)
    summary = summarize(run, live=live)
    report = Report(html=out / "index.html", run_dir=run.path, charts=charts, skipped=skipped, summary=summary,
                    alerts=alerts, notes=list(run.notes))
    report.text = format_summary(summary, alerts, report.notes)
    _atomic_write(report.html, render_html(report, live=live, refresh_s=refresh_s).encode("utf-8"))
    return report
