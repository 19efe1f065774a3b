"""The charts of ``passband report``: one PNG per question a practitioner asks about a GRPO run.

Each ``chart_*`` function takes a ``RunData`` and a target path, writes the PNG and returns None, or
returns a one-line reason why it could not (the metric was never logged, the curriculum was off);
the report shows that reason in place of the picture. Matplotlib is imported inside the functions
and driven through ``matplotlib.figure.Figure`` (Agg canvas, no pyplot global state), so the CLI
stays fast and drawing works from a worker thread or a headless machine.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from passband.rundir import RunData, series

__all__ = ["CHARTS", "inflation_steps", "prompt_table", "chart_accuracy_length", "chart_reward", "chart_groups",
           "chart_prompts", "chart_curriculum", "chart_pass_rate_histogram", "chart_optimization"]

_FIXED_REWARD_KEYS = {"reward/mean", "reward/std"}
_OPT_KEYS = ("kl", "clip_fraction", "entropy", "grad_norm", "lr", "loss")


def _figure(width: float = 9.0, height: float = 4.0, rows: int = 1, cols: int = 1, **grid):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, gridspec_kw=grid or None)
    return fig, axes


def _save(fig, path: Path) -> None:
    fig.savefig(path, format="png")


def inflation_steps(metrics: list[dict]) -> list[int]:
    """Steps where length inflation held: replayed with the trainer's ``AlertMonitor`` defaults,
    plus the steps where the trainer itself logged a ``length_inflation`` alert."""
    from passband.trainer.alerts import AlertMonitor

    monitor, steps = AlertMonitor(), set()
    for i, row in enumerate(metrics):
        monitor.update(row)
        step = row.get("step", i + 1)
        logged = any(str(a).startswith("length_inflation") for a in row.get("alerts") or [])
        if logged or "length_inflation" in monitor.active:
            steps.add(step)
    return sorted(steps)


def chart_accuracy_length(run: RunData, path: Path) -> str | None:
    acc, length = series(run.metrics, "pass_rate"), series(run.metrics, "length/mean")
    if not acc[0] and not length[0]:
        return "no pass_rate or length/mean in metrics.jsonl"
    fig, axes = _figure()
    ax = axes[0][0]
    ax.plot(*acc, color="tab:blue", label="pass rate")
    ax.set(xlabel="step", ylabel="pass rate", ylim=(-0.02, 1.02))
    twin = ax.twinx()
    twin.plot(*length, color="tab:orange", label="mean completion length")
    twin.set_ylabel("tokens")
    marked = set(inflation_steps(run.metrics))
    points = [(x, y) for x, y in zip(*length) if x in marked]
    if points:
        twin.scatter(*zip(*points), marker="v", s=36, color="tab:red", zorder=3,
                     label="length inflation")
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="upper left", fontsize=8)
    ax.set_title("Accuracy and completion length")
    _save(fig, path)
    return None


def chart_reward(run: RunData, path: Path) -> str | None:
    steps, mean = series(run.metrics, "reward/mean")
    components = sorted({k for row in run.metrics for k in row
                         if k.startswith("reward/") and k not in _FIXED_REWARD_KEYS})
    if not steps and not components:
        return "no reward/mean or reward components in metrics.jsonl"
    fig, axes = _figure()
    ax = axes[0][0]
    if steps:
        ax.plot(steps, mean, color="black", lw=2, label="reward mean")
        std = dict(zip(*series(run.metrics, "reward/std")))
        band = [(x, m - std[x], m + std[x]) for x, m in zip(steps, mean) if x in std]
        if band:
            xs, lo, hi = zip(*band)
            ax.fill_between(xs, lo, hi, color="gray", alpha=0.25, label="± std")
    for key in components:
        ax.plot(*series(run.metrics, key), lw=1, label=key.removeprefix("reward/"))
    ax.set(xlabel="step", ylabel="reward", title="Reward and its components")
    ax.legend(loc="best", fontsize=8, ncol=2)
    _save(fig, path)
    return None


def chart_groups(run: RunData, path: Path) -> str | None:
    share = series(run.metrics, "groups/zero_variance_share")
    effective = series(run.metrics, "groups/effective")
    refills = series(run.metrics, "groups/refill_rounds")
    if not (share[0] or effective[0] or refills[0]):
        return "no groups/* metrics in metrics.jsonl"
    fig, axes = _figure(9, 5.5, rows=2)
    top, bottom = axes[0][0], axes[1][0]
    top.plot(*share, color="tab:purple")
    top.set(ylabel="zero-variance share", ylim=(-0.02, 1.02),
            title="Groups with no signal (before filtering)")
    if effective[0]:
        bottom.bar(*effective, color="tab:green", alpha=0.6, label="effective groups")
    bottom.set(xlabel="step", ylabel="effective groups", title="Groups trained on, and refills")
    twin = bottom.twinx()
    twin.step(*refills, where="mid", color="tab:red", label="refill rounds")
    twin.set_ylabel("refill rounds")
    from matplotlib.ticker import MaxNLocator

    for axis in (bottom.yaxis, twin.yaxis):  # counts: no 0.2-round ticks
        axis.set_major_locator(MaxNLocator(integer=True))
    handles = bottom.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    fig.legend(handles=handles, loc="outside right lower", fontsize=8)
    _save(fig, path)
    return None


def _visits(groups: list[dict], last: int) -> dict[str, list[dict]]:
    """prompt id -> its last ``last`` visits (oldest first)."""
    by_prompt: dict[str, list[dict]] = defaultdict(list)
    for g in groups:
        rewards = g.get("rewards")
        if isinstance(rewards, list) and rewards and "prompt_id" in g:
            by_prompt[str(g["prompt_id"])].append(g)
    return {pid: sorted(v, key=lambda g: g.get("step", 0))[-last:] for pid, v in by_prompt.items()}


def _grad_share(visits: list[dict]) -> float:
    return sum(g.get("grad_share") or 0.0 for g in visits if isinstance(g.get("grad_share"), (int, float)))


def prompt_table(groups: list[dict], *, last: int = 8, top: int = 30):
    """Per-prompt view of groups.jsonl -> (ids ranked by gradient share, their shares of the total,
    ids taking more than twice the fair share, mean reward per visit for each ranked id)."""
    visits = _visits(groups, last)
    ranked = sorted(visits, key=lambda pid: -_grad_share(visits[pid]))[:top]
    total = sum(_grad_share(v) for v in visits.values()) or 1.0
    shares = [_grad_share(visits[pid]) / total for pid in ranked]
    dominant = [pid for pid, s in zip(ranked, shares) if s > 2.0 / len(visits)]
    grid = [[sum(g["rewards"]) / len(g["rewards"]) for g in visits[pid]] for pid in ranked]
    return ranked, shares, dominant, grid


def chart_prompts(run: RunData, path: Path, *, last: int = 8, top: int = 30) -> str | None:
    ranked, shares, dominant, grid = prompt_table(run.groups, last=last, top=top)
    if not ranked:
        return "groups.jsonl is missing or has no rows with prompt_id and rewards"
    matrix = [[math.nan] * (last - len(row)) + row for row in grid]  # right-aligned: newest last
    fig, axes = _figure(10, max(3.0, 0.28 * len(ranked) + 1.6), cols=2, width_ratios=[3, 1])
    heat, bars = axes[0]
    values = [v for row in grid for v in row]
    image = heat.imshow(matrix, aspect="auto", cmap="viridis", interpolation="nearest",
                        vmin=min(0.0, *values), vmax=max(1.0, *values))
    fig.colorbar(image, ax=heat, label="mean group reward")
    heat.set(yticks=range(len(ranked)), xlabel=f"visit (last {last}, newest right)",
             title="Per-prompt group rewards")
    heat.set_yticklabels([pid[:24] for pid in ranked], fontsize=7)
    for label, pid in zip(heat.get_yticklabels(), ranked):
        if pid in dominant:
            label.set(color="tab:red", fontweight="bold")
    bars.barh(range(len(ranked)), shares, color=["tab:red" if p in dominant else "tab:gray" for p in ranked])
    bars.set(ylim=heat.get_ylim(), yticks=[], xlabel="share of gradient\n(|advantage| x tokens)",
             title="Gradient share\n(red: > 2x fair share)")
    _save(fig, path)
    return None


def chart_curriculum(run: RunData, path: Path) -> str | None:
    in_band = series(run.metrics, "curriculum/in_band_share")
    pools = sorted({k for row in run.metrics for k in row if k.startswith("curriculum/pool/")})
    if not in_band[0] and not pools:
        return "no curriculum/* metrics (curriculum off, or not logged)"
    fig, axes = _figure()
    ax = axes[0][0]
    ax.plot(*in_band, color="tab:blue", lw=2, label="in-band share")
    ax.set(xlabel="step", ylabel="share of sampled prompts in band", ylim=(-0.02, 1.02),
           title="Curriculum: in-band share and pool sizes")
    twin = ax.twinx()
    for key in pools:
        twin.plot(*series(run.metrics, key), lw=1, ls="--", label=key.removeprefix("curriculum/"))
    twin.set_ylabel("prompts")
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    fig.legend(handles=handles, loc="outside right upper", fontsize=8)
    _save(fig, path)
    return None


def chart_pass_rate_histogram(run: RunData, path: Path) -> str | None:
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

    plot_pass_rate_histogram(rates, band, path, title=f"Pass-rate estimates ({len(rates)} prompts)")
    return None


def chart_optimization(run: RunData, path: Path) -> str | None:
    present = [k for k in _OPT_KEYS if series(run.metrics, k)[0]]
    if not present:
        return "none of kl, clip_fraction, entropy, grad_norm, lr, loss in metrics.jsonl"
    fig, axes = _figure(10, 5.5, rows=2, cols=3)
    for ax, key in zip([a for row in axes for a in row], _OPT_KEYS):
        xs, ys = series(run.metrics, key)
        if xs:
            ax.plot(xs, ys, color="tab:blue", lw=1.2)
        else:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(key, fontsize=10)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("step", fontsize=8)
    _save(fig, path)
    return None


# (file stem, title, what to look for, function) in page order.
CHARTS = (
    ("accuracy_length", "Accuracy and length", "Length climbing while pass rate is flat (red "
     "markers) means the policy is paid for length, not correctness.", chart_accuracy_length),
    ("reward", "Reward", "Mean reward with a ±1 std band and every reward component by name.",
     chart_reward),
    ("groups", "Signal per step", "Zero-variance groups carry no gradient; refills replace them at "
     "extra rollout cost.", chart_groups),
    ("prompts", "Prompts", "Mean reward of each prompt's last visits; red prompts take more than "
     "twice their fair share of the gradient.", chart_prompts),
    ("curriculum", "Curriculum", "Share of sampled prompts in the pass-rate band, and pool sizes.",
     chart_curriculum),
    ("pass_rate_histogram", "Pass-rate histogram", "Latest per-prompt pass-rate estimates; the "
     "shaded band is where groups disagree and learning happens.", chart_pass_rate_histogram),
    ("optimization", "Optimization", "KL to the reference, clip fraction, entropy, gradient norm, "
     "learning rate and loss.", chart_optimization),
)
