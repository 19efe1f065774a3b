"""``passband demo``: train the embedded arithmetic task on CPU and show the held-out gain.

Nothing is downloaded: the task is generated, the tokenizer is character-level and the model is a
tiny Qwen2 built from a config. Warm start (short SFT), held-out greedy accuracy,
GRPO with the pass-rate curriculum and zero-variance filtering (``--no-curriculum``: uniform prompt
sampling), held-out greedy accuracy again; then (``--compare``, the default) the same warm start
trained with uniform sampling + refill to the same generation, what the curriculum saved, and the
plots.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

HELP = "Run the embedded CPU demo: warm start, GRPO, held-out accuracy before and after."

# Files a previous demo run leaves; only a directory holding one of these is replaced silently.
_DEMO_MARKERS = ("demo_summary.json", "warm_start")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output-dir", default="runs/demo", help="run directory (default: runs/demo)"
    )
    parser.add_argument(
        "--steps", type=int, default=None, help="GRPO steps (default: 100, quick: 50)"
    )
    parser.add_argument(
        "--sft-steps", type=int, default=None, help="warm-start steps (default: 400)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for data, model and training")
    parser.add_argument(
        "--quick", action="store_true", help="reduced run (50 steps, no twin) for smoke tests"
    )
    parser.add_argument(
        "--curriculum",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="sample prompts with the pass-rate curriculum (default) or, with "
        "--no-curriculum, uniformly (zero-variance filtering is on either way)",
    )
    parser.add_argument(
        "--compare",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also train uniform sampling + refill to the same generation and "
        "print what the curriculum saved (default: on; off with --quick)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _config(args: argparse.Namespace):
    from passband.demo.pipeline import DemoConfig
    from passband.demo.sft import SFTConfig
    from passband.errors import UsageError

    changes: dict = {
        "output_dir": args.output_dir,
        "seed": args.seed,
        "progress": not args.no_progress,
    }
    if args.curriculum is not None:
        changes["use_curriculum"] = args.curriculum
    if args.compare is not None:
        changes["compare"] = args.compare
    if args.steps is not None:
        if args.steps < 1:
            raise UsageError(f"--steps must be >= 1, got {args.steps}")
        changes["grpo_steps"] = args.steps
    base = DemoConfig.quick() if args.quick else DemoConfig()
    if args.sft_steps is not None:
        if args.sft_steps < 0:
            raise UsageError(f"--sft-steps must be >= 0, got {args.sft_steps}")
        changes["sft"] = SFTConfig(steps=args.sft_steps, seed=args.seed)
    else:
        changes["sft"] = SFTConfig(steps=base.sft.steps, seed=args.seed)
    from dataclasses import replace

    return replace(base, **changes)


def _prepare_dir(path: Path) -> None:
    """An empty or previous-demo directory is fine; anything else is the user's and is left alone."""
    from passband.errors import UsageError

    if not path.exists() or not any(path.iterdir()):
        return
    if any((path / marker).exists() for marker in _DEMO_MARKERS):
        print(f"replacing the previous demo run in {path}")
        shutil.rmtree(path)
        return
    raise UsageError(f"{path} exists and is not a demo run directory; pass another --output-dir")


def run(args: argparse.Namespace) -> int:
    import torch

    from passband.demo.pipeline import run_demo
    from passband.plots.demo import plot_demo

    cfg = _config(args)
    _prepare_dir(Path(cfg.output_dir))
    # The model is tiny: intra-op threads cost more in synchronisation than they save, and one
    # thread leaves the other core to the verifier worker.
    torch.set_num_threads(1)
    result = run_demo(cfg)
    saving = {"cost": result.cost, "uniform_refill": result.uniform} if result.uniform else None
    pictures = [plot_demo(result.run_dir, result.before, result.after, saving)]
    pictures += _report(result.run_dir)
    _print_summary(result, pictures)
    return 0


def _report(run_dir: Path) -> list[Path]:
    """The full ``passband report`` charts, when that module is present and can draw them."""
    try:
        from passband._report import write_report
    except ImportError:
        return []
    try:
        report = write_report(run_dir)
    except Exception as exc:  # the report is a bonus; the demo's own PNG is already written
        print(f"note: passband report could not render this run ({exc})")
        return []
    return [report.html]


def _print_saving(result) -> None:
    """What the curriculum saved against uniform sampling + refill at the same generation."""
    cur, uni = result.cost, result.uniform["cost"]
    print(
        f"\n=== what the curriculum saved (same warm start; {cur['generated']} answers generated "
        f"by the curriculum run, {uni['generated']} by the twin) ==="
    )
    print(f"{'sampling':<22}{'steps':>7}{'groups generated / trained':>29}{'held-out':>11}")
    print(
        f"{'pass-rate curriculum':<22}{cur['steps']:>7}{cur['per_trained']:>29.2f}"
        f"{result.after['accuracy']:>11.1%}"
    )
    print(
        f"{'uniform + refill':<22}{uni['steps']:>7}{uni['per_trained']:>29.2f}"
        f"{result.uniform['after']['accuracy']:>11.1%}"
    )
    gain = (result.after["accuracy"] - result.uniform["after"]["accuracy"]) * 100
    print(
        f"curriculum vs uniform + refill at equal generation: {gain:+.1f}pt held-out; "
        f"{1 - cur['per_trained'] / uni['per_trained']:.0%} less generation per trained group"
    )


def _print_summary(result, pictures: list[Path]) -> None:
    before, after, t = result.before, result.after, result.timings
    rows = ["accuracy"] + sorted(k for k in before if k.startswith("level/"))
    print("\n=== passband demo: held-out greedy accuracy ===")
    print(f"{'problems':<16}{'warm start':>12}{'after GRPO':>12}{'gain':>10}")
    for key in rows:
        name = "all" if key == "accuracy" else key.split("/", 1)[1]
        gain = after[key] - before[key]
        print(f"{name:<16}{before[key]:>12.1%}{after[key]:>12.1%}{gain * 100:>+9.1f}pt")
    if result.uniform:
        _print_saving(result)
    extra = f", uniform twin {t['uniform_s']:.0f}s" if "uniform_s" in t else ""
    print(
        f"time: warm start {t['warm_start_s']:.0f}s, GRPO {t['grpo_s']:.0f}s{extra}, "
        f"total {t['total_s']:.0f}s"
    )
    print(
        f"run directory: {result.run_dir} (metrics.jsonl, groups.jsonl, checkpoints/, warm_start/)"
    )
    for path in pictures:
        print(f"plot: {path}")
