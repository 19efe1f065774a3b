"""The one place passband talks to matplotlib: figures, saving, empty states, the pass-rate histogram.

Every picture passband draws goes through here: the charts of ``passband report``
(``passband.plots``), the demo's headline picture, and the pass-rate histogram that
``passband score`` writes. It lives on the curriculum floor because that is the lowest floor that
draws (pre-scoring writes the histogram), and a floor may only import the ones below it: the
report and the demo sit above and use it, the curriculum could not import a module of theirs.

Figures are built with ``matplotlib.figure.Figure`` (Agg canvas, no pyplot global state), so
drawing works from a worker thread or a headless machine, and matplotlib is imported inside the
functions so importing passband stays fast. A test pins that no other module imports matplotlib.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["figure", "save", "say", "integer_ticks", "plot_pass_rate_histogram", "POOL_COLORS"]

# One colour per curriculum pool, shared by the histogram and the report's pool chart.
POOL_COLORS = {"warmup": "tab:red", "active": "tab:green", "easy": "tab:blue", "fresh": "tab:gray"}


def figure(width: float = 9.0, height: float = 4.0, rows: int = 1, cols: int = 1, **grid):
    """A constrained-layout figure and its axes as a 2-D list (``axes[row][col]``)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, gridspec_kw=grid or None)
    return fig, axes


def save(fig, path: str | os.PathLike) -> str:
    """Write the figure as PNG (creating the folder); returns the path written."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, format="png")
    return os.fspath(path)


def say(ax, text: str) -> None:
    """An empty state: one grey line in place of a plot that would carry no information."""
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=10,
        color="#57606a",
        wrap=True,
    )
    ax.set_xticks([])
    ax.set_yticks([])


def integer_ticks(*axes) -> None:
    """Counts on these axes: no 0.2-round ticks."""
    from matplotlib.ticker import MaxNLocator

    for axis in axes:
        axis.set_major_locator(MaxNLocator(integer=True))


def plot_pass_rate_histogram(
    pass_rates: Iterable[float | None],
    band: tuple[float, float],
    path: str | os.PathLike,
    title: str = "Pass rate per prompt",
    bins: int = 20,
) -> str:
    """Write a PNG histogram of ``pass_rates`` (None / NaN skipped) with the band shaded.

    The bars are coloured by class so the shares of too-hard, in-band and too-easy prompts read
    at a glance. Returns the path written.
    """
    rates = [float(p) for p in pass_rates if p is not None and p == p]
    lo, hi = band
    fig, axes = figure(7, 4)
    ax = axes[0][0]
    ax.axvspan(lo, hi, color="tab:green", alpha=0.12, label=f"band [{lo:g}, {hi:g}]")
    classes = [
        [p for p in rates if p < lo],
        [p for p in rates if lo <= p <= hi],
        [p for p in rates if p > hi],
    ]
    labels = [
        f"too hard ({len(classes[0])})",
        f"in band ({len(classes[1])})",
        f"too easy ({len(classes[2])})",
    ]
    ax.hist(
        classes,
        bins=[i / bins for i in range(bins + 1)],
        stacked=True,
        label=labels,
        color=[POOL_COLORS["warmup"], POOL_COLORS["active"], POOL_COLORS["easy"]],
    )
    ax.set(xlim=(0, 1), xlabel="pass rate", ylabel="prompts", title=f"{title} (n={len(rates)})")
    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    return save(fig, path)
