"""Adaptive group size against fixed G at an equal rollout budget, on the curriculum simulator.

Each step draws ``prompts_per_step`` prompts from the curriculum and generates exactly
``prompts_per_step * G`` answers: fixed G gives every prompt G; adaptive
(``CurriculumConfig(adaptive_group_size=True)``, floor ``min_group_size=4``) splits the same budget
by posterior (``passband.curriculum.allocation``). No refill, so the budget per step is identical.
Reported per arm, mean (min..max) over seeds: groups with signal per 1000 rollouts, the share of
rollouts that land in a group with signal (what the trainer keeps), and the curriculum's signal
share. Same simulated world per seed for both arms (``passband.curriculum.simulate._World``).

    .venv/bin/python benchmarks/bench_adaptive_group.py [--seeds 3] [--steps 150]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from passband.curriculum import Curriculum
from passband.curriculum.simulate import SimConfig, _World

SCENARIOS = {
    "standard": {},
    "hopeless": {"mix": (0.70, 0.15, 0.15)},
    "easy": {"mix": (0.15, 0.70, 0.15)},
    "spread 40/35/25": {"mix": (0.35, 0.40, 0.25)},
}


def run_arm(cfg: SimConfig, adaptive: bool, priors: bool) -> dict:
    world = _World(cfg)
    pri = None
    if priors:  # pre-scored with k=8 at step 0 by the same policy
        pri = {
            i: (sum(world.rng.random() < world.pass_rate(i, 0) for _ in range(8)), 8)
            for i in range(cfg.n_prompts)
        }
    cur = Curriculum(
        range(cfg.n_prompts),
        priors=pri,
        seed=cfg.seed,
        group_size=cfg.group_size,
        adaptive_group_size=adaptive,
    )
    budget = cfg.prompts_per_step * cfg.group_size
    groups = signal = rollouts = kept_rollouts = 0
    for step in range(cfg.steps):
        ids = cur.sample(cfg.prompts_per_step)
        for pid, g in zip(ids, cur.group_sizes(ids, budget)):
            p = world.pass_rate(pid, step)
            s = sum(world.rng.random() < p for _ in range(g))
            cur.observe(pid, s, g)
            groups, rollouts = groups + 1, rollouts + g
            if 0 < s < g:
                signal += 1
                kept_rollouts += g
                world.learned[pid] += cfg.learn_step
    return {
        "signal_per_1k": 1000 * signal / rollouts,
        "kept_share": kept_rollouts / rollouts,
        "signal_share": signal / groups,
    }


def _fmt(values: list[float]) -> str:
    return f"{statistics.mean(values):.3f} ({min(values):.3f}..{max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    t0 = time.perf_counter()
    print(
        "| scenario | start | arm | signal groups / 1k rollouts | rollouts in signal groups "
        "| signal share of groups |"
    )
    print("|---|---|---|---|---|---|")
    for name, over in SCENARIOS.items():
        for priors in (False, True):
            for adaptive in (False, True):
                rows = [
                    run_arm(
                        dataclasses.replace(SimConfig(steps=args.steps, seed=s), **over),
                        adaptive,
                        priors,
                    )
                    for s in range(args.seeds)
                ]
                arm = "adaptive G (floor 4)" if adaptive else "fixed G = 8"
                print(
                    f"| {name} | {'priors' if priors else 'cold'} | {arm} | "
                    f"{_fmt([r['signal_per_1k'] for r in rows])} | "
                    f"{_fmt([r['kept_share'] for r in rows])} | "
                    f"{_fmt([r['signal_share'] for r in rows])} |",
                    flush=True,
                )
    print(
        f"\n{args.seeds} seeds, {args.steps} steps x 64 prompts, budget 512 rollouts/step; "
        f"{time.perf_counter() - t0:.0f}s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
