"""Charts over prompts and groups, from ``groups.jsonl`` and ``curriculum.json``. Each stays
readable from 100 to a million prompts: it draws shares, histograms and count grids, never one
row or one marker per prompt."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from passband._rundir import series
from passband._runstats import FRACTIONS, RunView, pass_rate_moves
from passband.curriculum.plot import POOL_COLORS, figure, save, say

__all__ = [
    "chart_concentration",
    "chart_outliers",
    "chart_reward_distributions",
    "chart_pass_rate_moves",
    "chart_curriculum",
    "chart_pass_rate_histogram",
]

_NO_GROUPS = "groups.jsonl is missing or has no rows with prompt_id and rewards"


def chart_concentration(view: RunView, path: Path) -> str | None:
    c = view.concentration
    if c is None:
        return _NO_GROUPS if not view.visits else "no effective group carried a gradient share"
    fig, axes = figure(11, 4, cols=2, width_ratios=[3, 2])
    ax, lorenz = axes[0]
    for f, color in zip(FRACTIONS, ("tab:red", "tab:blue")):
        ax.plot(c.steps, c.top[f], color=color, lw=1.2, label=f"top {f:.0%} of groups")
        ax.plot(c.steps, c.equal[f], color=color, lw=1, ls="--", label=f"equal shares, top {f:.0%}")
    flagged = {v.step for flag in view.flags if flag.rule == "gradient" for v in flag.visits}
    hits = [(s, y) for s, y in zip(c.steps, c.top[FRACTIONS[0]]) if s in flagged]
    if hits:
        ax.scatter(
            *zip(*hits), color="tab:red", marker="o", s=40, zorder=3, label="flagged outlier"
        )
    ax.set(
        xlabel="step",
        ylabel="share of Σ|advantage|·tokens",
        ylim=(0, 1.02),
        title="Per step: share carried by the heaviest effective groups (≥ 1 group)",
    )
    ax.legend(loc="upper right", fontsize=7)
    xs, ys = c.lorenz
    lorenz.plot([0, 1], [0, 1], color="gray", ls="--", lw=1, label="equal shares")
    lorenz.plot(xs, ys, color="black", lw=1.5, label="this run")
    for f, color in zip(FRACTIONS, ("tab:red", "tab:blue")):
        share, equal = c.run_top[f]
        lorenz.scatter(
            [equal],
            [share],
            color=color,
            zorder=3,
            label=f"top {f:.0%}: {share:.1%} (equal {equal:.1%})",
        )
    lorenz.set(
        xlabel="heaviest share of all effective groups",
        ylabel="share of the run's gradient",
        xlim=(0, 1),
        ylim=(0, 1.02),
        title=f"Over the run ({len(view.run.groups):,} groups)",
    )
    lorenz.legend(loc="lower right", fontsize=7)
    save(fig, path)
    return None


def _ratio_histogram(ax, ratios: list[float], limit: float, what: str) -> None:
    """How close the ordinary groups came to a rule's threshold, and who crossed it (red)."""
    if not ratios:
        say(ax, f"{what}: too few groups to judge")
        return
    top = max(max(ratios), limit) * 1.15
    edges = [top * i / 40 for i in range(41)]
    values = np.asarray(ratios)  # numpy: matplotlib reshapes a list of a million floats slowly
    ax.hist(values[values <= limit], bins=edges, color="tab:gray", label="ordinary groups")
    over = values[values > limit]
    if len(over):
        ax.hist(over, bins=edges, color="tab:red", label=f"flagged ({len(over)} groups)")
    ax.axvline(limit, color="tab:red", ls="--", lw=1.2, label=f"threshold {limit:g}x")
    ax.set(yscale="log", xlabel=what, ylabel="groups (log)", xlim=(0, top))
    ax.legend(fontsize=7, loc="upper right")


def chart_outliers(view: RunView, path: Path) -> str | None:
    if not view.visits:
        return _NO_GROUPS
    from passband._runstats import SCALE_FACTOR, gradient_threshold

    shown = view.flags[:10]
    fig, axes = figure(
        11,
        3.6 if not shown else 3.6 + 0.3 * len(shown),
        rows=2 if shown else 1,
        cols=2,
        **({"height_ratios": [3, 1.2 + 0.3 * len(shown)]} if shown else {}),
    )
    k = gradient_threshold(view.group_size, view.advantage)
    gradient, scale = view.ratios
    _ratio_histogram(
        axes[0][0], list(gradient.values()), k, "group's gradient share / its step's median"
    )
    _ratio_histogram(
        axes[0][1],
        list(scale.values()),
        SCALE_FACTOR,
        "group's max |reward| / the run's 90th percentile",
    )
    axes[0][0].set_title(
        "Gradient rule" + ("" if any(f.rule == "gradient" for f in shown) else ": none flagged")
    )
    axes[0][1].set_title(
        "Reward-scale rule" + ("" if any(f.rule != "gradient" for f in shown) else ": none flagged")
    )
    if shown:
        gs = axes[1][0].get_gridspec()
        axes[1][0].remove()
        axes[1][1].remove()
        ax = fig.add_subplot(gs[1, :])
        everyone = sorted(r for v in view.visits for r in v.rewards)
        q = [everyone[int(f * (len(everyone) - 1))] for f in (0.0, 0.25, 0.5, 0.75, 1.0)]
        row = len(shown)  # the run's distribution: min-max whisker, quartile bar, median tick
        ax.hlines(row, q[0], q[4], color="black", lw=1)
        ax.hlines(row, q[1], q[3], color="tab:gray", lw=8)
        ax.scatter([q[2]], [row], color="black", marker="|", s=200, zorder=3)
        for row, flag in enumerate(shown):
            rewards = [r for v in flag.visits for r in v.rewards]
            ax.scatter(rewards, [row] * len(rewards), color="tab:red", alpha=0.5, s=18)
        ax.set_yticks(
            range(len(shown) + 1),
            [f"{f.prompt[:20]} ({f.rule})" for f in shown] + ["all groups"],
            fontsize=8,
        )
        ax.set(
            xlabel="reward of each answer",
            title="Flagged prompts' rewards (red) against the run's (range, quartiles, median)",
        )
    save(fig, path)
    return None


def _windows(visits, count: int = 4):
    """Split the logged steps into up to ``count`` windows of equal length -> [(label, visits)]."""
    steps = sorted({v.step for v in visits})
    count = min(count, len(steps))
    window_of = {s: rank * count // len(steps) for rank, s in enumerate(steps)}
    parts: list[list] = [[] for _ in range(count)]
    for v in visits:
        parts[window_of[v.step]].append(v)
    out = []
    for part in parts:
        lo, hi = min(v.step for v in part), max(v.step for v in part)
        out.append((f"steps {lo}-{hi}" if hi > lo else f"step {lo}", part))
    return out


def chart_reward_distributions(view: RunView, path: Path) -> str | None:
    visits = [v for v in view.visits if v.rewards]
    if not visits:
        return _NO_GROUPS
    windows = [(label, *zip(*(v.mean_std for v in part))) for label, part in _windows(visits)]
    fig, axes = figure(11, 3.8, cols=2)
    for col, what in ((1, "group mean reward"), (2, "group reward std")):
        ax = axes[0][col - 1]
        values = [x for w in windows for x in w[col]]
        lo, hi = min(values), max(values)
        edges = [lo + (hi - lo) * i / 30 for i in range(31)] if hi > lo else [lo - 0.5, lo + 0.5]
        for window in windows:
            ax.hist(
                np.asarray(window[col]),
                bins=edges,
                histtype="step",
                lw=1.5,
                label=f"{window[0]} ({len(window[col])} groups)",
            )
        ax.set(
            xlabel=what,
            ylabel="groups (log)",
            yscale="log",
            title=f"{what.capitalize()}, per window of steps",
        )
        ax.legend(fontsize=7)
    save(fig, path)
    return None


def chart_pass_rate_moves(view: RunView, path: Path) -> str | None:
    moves = pass_rate_moves(view.visits)
    if not moves:
        why = _NO_GROUPS if not view.visits else "no prompt was checked more than once yet"
        return why
    from collections import Counter

    g = view.group_size
    cells = Counter((round(a * g) / g, round(b * g) / g) for a, b in moves)
    up = sum(b > a for a, b in moves)
    down = sum(b < a for a, b in moves)
    fig, axes = figure(6.5, 5)
    ax = axes[0][0]
    xs, ys = zip(*cells)
    counts = list(cells.values())
    top = max(counts)
    dots = ax.scatter(
        xs,
        ys,
        s=[30 + 400 * (n / top) ** 0.5 for n in counts],
        c=counts,
        cmap="viridis",
        alpha=0.85,
        edgecolors="black",
        linewidths=0.3,
    )
    fig.colorbar(dots, ax=ax, label="prompts")
    ax.plot([0, 1], [0, 1], color="gray", ls="--", lw=1)
    ax.set(
        xlim=(-0.05, 1.05),
        ylim=(-0.05, 1.05),
        xlabel="pass rate at the first visit",
        ylabel="pass rate at the last visit",
        title=f"{len(moves):,} prompts seen more than once\n{up:,} up, "
        f"{len(moves) - up - down:,} same, {down:,} down",
    )
    save(fig, path)
    return None


def chart_curriculum(view: RunView, path: Path) -> str | None:
    m = view.run.metrics
    in_band = series(m, "curriculum/in_band_share")
    pools = [
        p for p in ("warmup", "active", "easy", "fresh") if series(m, f"curriculum/pool/{p}")[0]
    ]
    if not in_band[0] and not pools:
        return "no curriculum/* metrics (curriculum off, or not logged)"
    fig, axes = figure(10, 4, cols=2)
    ax, band = axes[0]
    if pools:
        rows = [
            r
            for r in m
            if all(isinstance(r.get(f"curriculum/pool/{p}"), (int, float)) for p in pools)
        ]
        steps = [r.get("step", i + 1) for i, r in enumerate(rows)]
        stack = [[r[f"curriculum/pool/{p}"] for r in rows] for p in pools]
        ax.stackplot(steps, stack, labels=pools, colors=[POOL_COLORS[p] for p in pools], alpha=0.8)
        ax.set(xlabel="step", ylabel="prompts", title="Curriculum pools over time")
        ax.legend(loc="center right", fontsize=8)
    else:
        say(ax, "pool sizes not logged by this run")
    if in_band[0]:
        band.plot(*in_band, color="tab:green", lw=1.5, label="sampled prompts in band")
        for pool, label in (
            ("warmup", "looks at warm-up prompts"),
            ("easy", "looks at solved ones"),
        ):
            xs, ys = series(m, f"curriculum/signal_share/{pool}")  # older runs: not logged
            first = next((k for k, y in enumerate(ys) if y > 0), len(ys))  # 0 until measured
            if xs[first:]:  # the fallback prefers the higher once the band runs dry
                band.plot(
                    xs[first:],
                    ys[first:],
                    color=POOL_COLORS[pool],
                    lw=1.0,
                    label=f"{label} with signal",
                )
        band.set(xlabel="step", ylabel="share", ylim=(-0.02, 1.02), title="Curriculum shares")
        band.legend(loc="best", fontsize=8)
    else:
        say(band, "in-band share not logged by this run")
    save(fig, path)
    return None


def chart_pass_rate_histogram(view: RunView, path: Path) -> str | None:
    run = view.run
    data = run.curriculum or {}
    estimates = data.get("estimates")
    rates = [float(p) for p in (estimates or {}).values() if isinstance(p, (int, float))]
    if not rates:
        return "curriculum.json is missing or has no pass-rate estimates"
    band = data.get("band") or run.setting("band") or (0.2, 0.8)
    try:
        band = (float(band[0]), float(band[1]))
    except (TypeError, ValueError, IndexError, KeyError):
        return f"curriculum.json has an unreadable band {band!r} (expected [low, high])"
    from passband.curriculum import plot_pass_rate_histogram  # the picture `passband score` draws

    plot_pass_rate_histogram(rates, band, path, title="Pass-rate estimates")
    return None
