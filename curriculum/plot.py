"""The pass-rate histogram with the band marked: one picture for `passband score` and `report`."""

from __future__ import annotations

import os
from typing import Iterable


def plot_pass_rate_histogram(pass_rates: Iterable[float | None], band: tuple[float, float],
                             path: str | os.PathLike, title: str = "Pass rate per prompt",
                             bins: int = 20) -> str:
    """Write a PNG histogram of ``pass_rates`` (None / NaN skipped) with the band shaded.

    The bars are coloured by class so the shares of too-hard, in-band and too-easy prompts read
    at a glance. matplotlib is imported here, on the Agg backend, so nothing needs a display.
    Returns the path written.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rates = [float(p) for p in pass_rates if p is not None and p == p]
    lo, hi = band
    n_hard = sum(p < lo for p in rates)
    n_easy = sum(p > hi for p in rates)
    n_band = len(rates) - n_hard - n_easy
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    try:
        ax.axvspan(lo, hi, color="tab:green", alpha=0.12, label=f"band [{lo:g}, {hi:g}]")
        edges = [i / bins for i in range(bins + 1)]
        groups = [[p for p in rates if p < lo], [p for p in rates if lo <= p <= hi],
                  [p for p in rates if p > hi]]
        labels = [f"too hard ({n_hard})", f"in band ({n_band})", f"too easy ({n_easy})"]
        ax.hist(groups, bins=edges, stacked=True, label=labels,
                color=["tab:red", "tab:green", "tab:blue"])
        ax.set_xlim(0, 1)
        ax.set_xlabel("pass rate")
        ax.set_ylabel("prompts")
        ax.set_title(f"{title} (n={len(rates)})")
        ax.legend(loc="upper center", fontsize=8)
        fig.tight_layout()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fig.savefig(path)
    finally:
        plt.close(fig)
    return os.fspath(path)
