"""The HTML page of ``passband report``: inline CSS, charts as data URIs, the flagged-prompt and
most-visited tables. Self-contained, so it can be copied off a cluster and opened anywhere."""

from __future__ import annotations

import base64
import html
import statistics
import time
from pathlib import Path

from passband._runstats import Flag, RunView, describe, most_visited

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;
padding:1.2rem;color:#1d2430;background:#fafbfc}
h1{font-size:1.4rem;margin:0}h2{font-size:1.1rem;border-bottom:1px solid #d8dee4;padding-bottom:.2rem}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-size:.8rem;margin-left:.5rem}
.live{background:#dff5e1;color:#145c24}.done{background:#e8eaee;color:#39424e}
table{border-collapse:collapse;font-size:.9rem}td,th{padding:.2rem .8rem .2rem 0;vertical-align:top;text-align:left}
th{color:#57606a;font-weight:600;border-bottom:1px solid #d8dee4}
table.summary td:first-child{color:#57606a;white-space:nowrap}
table.grid td{border-bottom:1px solid #eef1f4}
ul.alerts li{margin:.3rem 0;font-size:.88rem}.alerts b,.flagged b{color:#b42318}
section.flagged{background:#fff4f2;border:1px solid #f4c7c0;border-radius:6px;padding:.2rem .8rem .6rem}
.notes{color:#6e5b00;font-size:.85rem}.quiet{color:#57606a;font-size:.9rem}
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


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f'<table class="grid"><tr>{head}</tr>{body}</table>'


def _flags_html(flags: list[Flag]) -> str:
    if not flags:
        return ""
    rows = [[f.prompt, f.rule, f.reason, describe(f.visits)] for f in flags[:30]]
    more = f"<p>... and {len(flags) - 30} more.</p>" if len(flags) > 30 else ""
    return (
        f'<section class="flagged" id="flagged"><h2>Flagged prompts ({len(flags)})</h2>'
        "<p><b>These prompts stand out</b>: look at their reward before the learning rate.</p>"
        + _table(["prompt", "rule", "why", "reward distribution"], rows)
        + more
        + "</section>"
    )


def _visited_html(view: RunView, top: int) -> str:
    ranked, distinct = most_visited(view.visits, top)
    if not ranked:
        return ""
    flagged = {f.prompt for f in view.flags}
    steps = len({v.step for v in view.visits}) or 1
    rows = []
    for prompt, visits in ranked:
        rates = [v.pass_rate for v in visits if v.pass_rate is not None]
        spread = [statistics.pstdev(v.rewards) for v in visits if v.rewards]
        rows.append(
            [
                prompt,
                str(len(visits)),
                f"{visits[0].step}-{visits[-1].step}",
                f"{rates[0]:.2f} -> {rates[-1]:.2f}" if rates else "-",
                f"{statistics.fmean(spread):.3g}" if spread else "-",
                f"{sum(v.share for v in visits) / steps:.3%}",
                "yes" if prompt in flagged else "",
            ]
        )
    return (
        f'<figure id="visited"><figcaption><b>Most-visited prompts.</b> The {len(ranked)} '
        f"most-visited of {distinct:,} prompts; gradient share is of the whole run (equal "
        f"shares: {1 / distinct:.3%} per prompt).</figcaption>"
        + _table(
            [
                "prompt",
                "visits",
                "steps",
                "pass rate first -> last",
                "mean group std",
                "gradient share",
                "flagged",
            ],
            rows,
        )
        + "</figure>"
    )


def _figure_html(stem: str, title: str, caption: str, png: Path | None, reason: str | None) -> str:
    head = f"<figcaption><b>{html.escape(title)}.</b> {html.escape(caption)}</figcaption>"
    if png is None:
        body = f'<p class="missing">Not drawn: {html.escape(reason or "no data")}.</p>'
    else:
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        body = f'<img alt="{html.escape(title)}" src="data:image/png;base64,{data}">'
    return f'<figure id="chart-{stem}">{head}{body}</figure>'


def render_html(report, view: RunView, *, live: bool, refresh_s: int = 30, top: int = 15) -> str:
    """The self-contained page: inline CSS, charts as data URIs, meta refresh while live."""
    from passband.plots import CHARTS

    refresh = f'<meta http-equiv="refresh" content="{int(refresh_s)}">' if live else ""
    badge = (
        f'<span class="badge live">live, refreshes every {int(refresh_s)} s</span>'
        if live
        else '<span class="badge done">not live</span>'
    )
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in report.summary
    )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in report.notes)
    figures = "".join(
        _figure_html(stem, title, caption, report.charts.get(stem), report.skipped.get(stem))
        + (_visited_html(view, top) if stem == "pass_rate_moves" else "")  # per-prompt views
        for stem, title, caption, _ in CHARTS
    )
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{refresh}'
        f"<title>passband report: {html.escape(report.run_dir.name)}</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<header><h1>passband report{badge}</h1><p>rendered {stamp}</p></header>"
        f'<section><h2>Summary</h2><table class="summary">{rows}</table></section>'
        + _flags_html(view.flags)
        + f"<section><h2>Alerts ({len(report.alerts)})</h2>{_alerts_html(report.alerts)}</section>"
        + (f'<section class="notes"><h2>Notes</h2><ul>{notes}</ul></section>' if notes else "")
        + f"<section><h2>Charts</h2>{figures}</section></body></html>"
    )
