"""Charts over optimizer steps, from ``metrics.jsonl``: accuracy and length, signal per step,
reward and its components' scales, the optimizer's gauges, and where the time goes."""

from __future__ import annotations

from pathlib import Path

from passband._rundir import series
from passband._runstats import RunView
from passband.curriculum.plot import figure, integer_ticks, save, say

__all__ = [
    "inflation_steps",
    "chart_accuracy_length",
    "chart_groups",
    "chart_reward",
    "chart_optimization",
    "chart_time",
    "PHASES",
]

_FIXED_REWARD_KEYS = {"reward/mean", "reward/std"}
_OPT_KEYS = ("kl", "clip_fraction", "entropy", "grad_norm", "lr", "loss")
PHASES = ("sample", "generate", "score", "update", "sync")  # time/<phase>_s, in loop order


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


def chart_accuracy_length(view: RunView, path: Path) -> str | None:
    run = view.run
    acc, length = series(run.metrics, "pass_rate"), series(run.metrics, "length/mean")
    if not acc[0] and not length[0]:
        return "no pass_rate or length/mean in metrics.jsonl"
    fig, axes = figure()
    ax = axes[0][0]
    ax.plot(*acc, color="tab:blue", label="pass rate")
    ax.set(
        xlabel="step",
        ylabel="pass rate",
        ylim=(-0.02, 1.02),
        title="Accuracy and completion length",
    )
    twin = ax.twinx()
    twin.plot(*length, color="tab:orange", label="mean completion length")
    twin.set_ylabel("tokens")
    marked = set(inflation_steps(run.metrics))
    points = [(x, y) for x, y in zip(*length) if x in marked]
    if points:
        twin.scatter(
            *zip(*points), marker="v", s=36, color="tab:red", zorder=3, label="length inflation"
        )
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="upper left", fontsize=8)
    save(fig, path)
    return None


def chart_groups(view: RunView, path: Path) -> str | None:
    m = view.run.metrics
    share, effective = series(m, "groups/zero_variance_share"), series(m, "groups/effective")
    refills = series(m, "groups/refill_rounds")
    if not (share[0] or effective[0] or refills[0]):
        return "no groups/* metrics in metrics.jsonl"
    fig, axes = figure(9, 5.5, rows=2)
    top, bottom = axes[0][0], axes[1][0]
    top.plot(*share, color="tab:purple")
    top.set(
        ylabel="zero-variance share",
        ylim=(-0.02, 1.02),
        title="Groups with no signal (before filtering)",
    )
    if effective[0]:  # a filled step line, not one bar per step: 100k steps draw as fast as 100
        bottom.fill_between(
            *effective, step="mid", color="tab:green", alpha=0.6, lw=0, label="effective groups"
        )
    bottom.set(xlabel="step", ylabel="effective groups", title="Groups trained on, and refills")
    twin = bottom.twinx()
    twin.step(*refills, where="mid", color="tab:red", label="refill rounds")
    twin.set(
        ylabel="refill rounds", ylim=(-0.05, max(1, *refills[1]) + 0.05) if refills[1] else None
    )
    integer_ticks(bottom.yaxis, twin.yaxis)
    handles = bottom.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    fig.legend(handles=handles, loc="outside right lower", fontsize=8)
    save(fig, path)
    return None


def _component_scales(metrics: list[dict], names: list[str]) -> tuple[list[float], str]:
    """Per component, its typical size over the run: the median over steps of the spread the
    trainer logs (``reward_scale/<name>``, std across completions), else of |mean|."""
    import statistics

    if all(series(metrics, f"reward_scale/{n}")[1] for n in names):
        key, what = "reward_scale/{}", "std across completions (median over steps)"
    else:
        key, what = "reward/{}", "|mean| (median over steps; this run logged no reward_scale/*)"
    values = [
        statistics.median([abs(v) for v in series(metrics, key.format(n))[1]] or [0.0])
        for n in names
    ]
    return values, what


def chart_reward(view: RunView, path: Path) -> str | None:
    m = view.run.metrics
    steps, mean = series(m, "reward/mean")
    names = sorted(
        {
            k.removeprefix("reward/")
            for row in m
            for k in row
            if k.startswith("reward/") and k not in _FIXED_REWARD_KEYS
        }
    )
    if not steps and not names:
        return "no reward/mean or reward components in metrics.jsonl"
    fig, axes = figure(10, 4, cols=2, width_ratios=[3, 2])
    ax, scale = axes[0]
    if steps:
        ax.plot(steps, mean, color="black", lw=2, label="reward mean")
        std = dict(zip(*series(m, "reward/std")))
        band = [(x, y - std[x], y + std[x]) for x, y in zip(steps, mean) if x in std]
        if band:
            ax.fill_between(*zip(*band), color="gray", alpha=0.25, label="± std")
    for name in names:
        ax.plot(*series(m, f"reward/{name}"), lw=1, label=name)
    ax.set(xlabel="step", ylabel="reward", title="Reward and its components (mean per step)")
    ax.legend(loc="best", fontsize=8)
    if not names:
        say(scale, "one reward term, no components:\nits scale is the ± std band")
        scale.set_title("Component scales")
    else:
        values, what = _component_scales(m, names)
        scale.barh(range(len(names)), values, color="tab:blue")
        scale.set_yticks(range(len(names)), names, fontsize=8)
        scale.set(xlabel=what, title="Component scales (a term that dwarfs the rest shows here)")
        if min(values) > 0 and max(values) / min(values) > 30:
            scale.set_xscale("log")
    save(fig, path)
    return None


def chart_optimization(view: RunView, path: Path) -> str | None:
    m = view.run.metrics
    if not any(series(m, k)[0] for k in _OPT_KEYS):
        return "none of kl, clip_fraction, entropy, grad_norm, lr, loss in metrics.jsonl"
    fig, axes = figure(10, 5.5, rows=2, cols=3)
    for ax, key in zip([a for row in axes for a in row], _OPT_KEYS):
        xs, ys = series(m, key)
        reason = view.inactive(key)
        if reason:
            say(ax, reason)
        elif xs:
            ax.plot(xs, ys, color="tab:blue", lw=1.2)
            ax.set_xlabel("step", fontsize=8)
        else:
            say(ax, f"{key}: not logged by this run")
        ax.set_title(key, fontsize=10)
        ax.tick_params(labelsize=7)
    save(fig, path)
    return None


def chart_time(view: RunView, path: Path) -> str | None:
    m = view.run.metrics
    phases = [p for p in PHASES if series(m, f"time/{p}_s")[0]]
    if not phases:
        total = series(m, "time/step_s")[1]
        mean = f" (time per step: mean {sum(total) / len(total):.2f} s)" if total else ""
        return "per-phase times (time/sample_s, time/generate_s, ...) not logged by this run" + mean
    rows = [r for r in m if all(isinstance(r.get(f"time/{p}_s"), (int, float)) for p in phases)]
    steps = [r.get("step", i + 1) for i, r in enumerate(rows)]
    stack = [[float(r[f"time/{p}_s"]) for r in rows] for p in phases]
    labels = list(phases)
    if all(isinstance(r.get("time/step_s"), (int, float)) for r in rows):
        other = [max(0.0, r["time/step_s"] - sum(col)) for r, col in zip(rows, zip(*stack))]
        if max(other, default=0.0) > 0:
            stack.append(other)
            labels.append("other")
    fig, axes = figure(9, 4)
    ax = axes[0][0]
    ax.stackplot(steps, stack, labels=labels, alpha=0.85)
    ax.set(xlabel="step", ylabel="seconds", title="Where the time of a step goes")
    ax.legend(loc="upper left", fontsize=8, ncols=len(labels))
    save(fig, path)
    return None
