"""Signal share at a million prompts: the curriculum, cold and with priors, against uniform sampling.

A world of ``--prompts`` prompts (40% solved, 35% out of reach, 25% in band: the spread task's
mix), ``--steps`` draws of 64 groups of G = 8, every group observed. A group
with signal (its answers disagree) is trained on, and its prompt's pass rate rises (its logit by
0.08). Priors come from a noisy pre-score (logit noise 0.7, one group of 8), as ``passband score``
would write them. The run draws far fewer groups than there are prompts, so every first look is
blind: what the curriculum can add is bringing the in-band prompts it found back
(``spaced_reuse``). Each row is the mean over ``--seeds``, with the range.

    .venv/bin/python benchmarks/bench_curriculum_million.py [--prompts 1000000] [--seeds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from passband.curriculum import Curriculum

BATCH, G, LEARN = 64, 8, 0.08


def _world(n: int, seed: int) -> tuple[np.ndarray, np.random.Generator]:
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, size=n, p=[0.40, 0.35, 0.25])  # solved, out of reach, in band
    rate = np.select(
        [kind == 0, kind == 1], [rng.beta(30, 1, n), rng.beta(1, 60, n)], rng.uniform(0.1, 0.9, n)
    )
    return np.log(rate / (1 - rate)), rng


def run(strategy: str, n: int, steps: int, seed: int, options: dict) -> float:
    """Share of the groups generated that had signal."""
    logit, rng = _world(n, seed)
    cur = None
    if strategy != "uniform":
        priors = None
        if strategy == "priors":
            noisy = 1 / (1 + np.exp(-(logit + rng.normal(0, 0.7, n))))
            passes = rng.binomial(G, noisy)
            priors = {i: (int(passes[i]), G) for i in range(n)}
        cur = Curriculum(range(n), priors=priors, seed=seed, run_groups=steps * BATCH, **options)
    signal = 0
    for _ in range(steps):
        ids = cur.sample(BATCH) if cur else rng.choice(n, size=BATCH, replace=False).tolist()
        for i in ids:
            s = int(rng.binomial(G, 1 / (1 + np.exp(-logit[i]))))
            if cur:
                cur.observe(i, s, G)
            if 0 < s < G:
                signal += 1
                logit[i] += LEARN
    return signal / (steps * BATCH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    t0 = time.perf_counter()
    rows = [
        ("uniform", "uniform", {}),
        ("curriculum, cold", "cold", {}),
        ("curriculum, cold, spaced_reuse = 0", "cold", {"spaced_reuse": 0.0}),
        ("curriculum, priors", "priors", {}),
        ("curriculum, priors, spaced_reuse = 0", "priors", {"spaced_reuse": 0.0}),
    ]
    print(f"{args.prompts:,} prompts, {args.steps} draws of {BATCH} groups of {G}")
    print("| sampler | signal share (range over seeds) | rollouts per group with signal |")
    print("|---|---|---|")
    for name, strategy, options in rows:
        shares = [run(strategy, args.prompts, args.steps, s, options) for s in range(args.seeds)]
        mean = statistics.mean(shares)
        print(
            f"| {name} | {mean:.3f} ({min(shares):.3f}..{max(shares):.3f}) | {G / mean:.1f} |",
            flush=True,
        )
    print(f"\n{args.seeds} seeds; {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    main()
