"""The demo's own picture: held-out accuracy before/after per level, and training curves.

``passband report`` draws the full set of run charts; this one PNG is the demo's headline.
"""

from __future__ import annotations

from pathlib import Path

from passband._rundir import read_jsonl, series
from passband.curriculum.plot import figure, save

__all__ = ["plot_demo"]


def _smooth(values: list[float], window: int = 10) -> list[float]:
    """Trailing moving average: per-step pass rates of 16 groups are noisy."""
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def plot_demo(
    run_dir: str | Path,
    before: dict[str, float],
    after: dict[str, float],
    saving: dict | None = None,
) -> Path:
    """Write ``run_dir/demo.png``: before/after bars (left), pass rate and length by step
    (middle), and with ``saving`` (the demo summary's ``cost`` and ``uniform_refill``) what the
    curriculum saved against uniform sampling + refill at equal generation (right)."""
    run_dir = Path(run_dir)
    fig, axes = figure(16 if saving else 11, 4, cols=3 if saving else 2)
    left, right, *rest = axes[0]
    if saving:
        _plot_saving(rest[0], after, saving)
    keys = ["accuracy"] + sorted(k for k in before if k.startswith("level/"))
    xs = range(len(keys))
    left.bar([x - 0.2 for x in xs], [before[k] for k in keys], width=0.4, label="after warm start")
    left.bar(
        [x + 0.2 for x in xs], [after.get(k, 0.0) for k in keys], width=0.4, label="after GRPO"
    )
    left.set_xticks(list(xs), ["all"] + [k.split("/", 1)[1] for k in keys[1:]])
    left.set(ylim=(0, 1), ylabel="held-out greedy accuracy", title="Held-out accuracy")
    left.legend(loc="upper left")
    metrics = run_dir / "metrics.jsonl"
    if metrics.exists():
        rows = read_jsonl(metrics)[0]
        steps, rates = series(rows, "pass_rate")
        right.plot(steps, rates, color="tab:blue", alpha=0.25)
        right.plot(steps, _smooth(rates), color="tab:blue", label="pass rate")
        right.set(
            xlabel="GRPO step", ylabel="pass rate (sampled, T=1)", ylim=(0, 1), title="Training"
        )
        twin = right.twinx()
        steps, lengths = series(rows, "length/mean")
        twin.plot(steps, _smooth(lengths), color="tab:orange", label="mean length")
        twin.set(ylabel="completion tokens (10-step mean)", ylim=(0, 1.5 * max(lengths, default=1)))
        right.legend(loc="upper left")
        twin.legend(loc="lower right")
    return Path(save(fig, run_dir / "demo.png"))


def _plot_saving(ax, after: dict, saving: dict) -> None:
    """Groups generated per group trained (bars) and held-out accuracy (labels), both arms."""
    cur, uni = saving["cost"], saving["uniform_refill"]
    names = ["curriculum", "uniform + refill"]
    ratios = [cur["per_trained"], uni["cost"]["per_trained"]]
    accs = [after["accuracy"], uni["after"]["accuracy"]]
    bars = ax.bar(names, ratios, color=["tab:green", "tab:gray"])
    for bar, acc in zip(bars, accs):
        ax.annotate(
            f"held-out {acc:.1%}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
        )
    ax.set(
        ylabel="groups generated per group trained",
        ylim=(0, 1.25 * max(ratios)),
        title=f"Same generation: {cur['generated']} answers",
    )
