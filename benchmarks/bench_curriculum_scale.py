"""Curriculum cost at 10k, 100k and 1M prompts: build, draw, observe, state size; ratios to 10k.

Every size gets priors for all prompts (40% hopeless, 20% in band, 40% solved, as ``passband
score`` would write them) and then the trainer's pattern: ``sample(64)``, a refill
``sample(16, exclude=...)``, and one ``observe`` per group. Rounds of the three sizes are
interleaved in one process, so machine load hits them alike; medians per round, range over rounds.

    .venv/bin/python benchmarks/bench_curriculum_scale.py [--rounds 3] [--steps 40]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from passband.curriculum import Curriculum

SIZES = (10_000, 100_000, 1_000_000)


def _priors(n: int) -> dict:
    rng = random.Random(n)
    return {i: (rng.choice((0, 0, 3, 8, 8)), 8) for i in range(n)}


def _steps(cur: Curriculum, rng: random.Random, steps: int) -> tuple[float, float, float]:
    draw, refill, obs = [], [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        ids = cur.sample(64)
        t1 = time.perf_counter()
        more = cur.sample(16, exclude=ids)
        t2 = time.perf_counter()
        for pid in ids + more:
            cur.observe(pid, rng.randint(0, 8), 8)
        t3 = time.perf_counter()
        draw.append(t1 - t0), refill.append(t2 - t1), obs.append((t3 - t2) / 80)
    return statistics.median(draw), statistics.median(refill), statistics.median(obs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    rng = random.Random(0)
    t0 = time.perf_counter()
    curs, build, build_cold, state = {}, {}, {}, {}
    for n in SIZES:
        priors = _priors(n)
        t = time.perf_counter()
        curs[n] = Curriculum(range(n), priors=priors, seed=0)
        build[n] = time.perf_counter() - t
        t = time.perf_counter()
        Curriculum(range(n), seed=0)
        build_cold[n] = time.perf_counter() - t
        _steps(curs[n], rng, 10)  # warm-up: first retests, pools settle
    costs = {n: [] for n in SIZES}
    for _ in range(args.rounds):
        for n in SIZES:
            costs[n].append(_steps(curs[n], rng, args.steps))
    for n in SIZES:
        t = time.perf_counter()
        text = json.dumps(curs[n].state_dict())
        state[n] = (len(text), time.perf_counter() - t)
    base = costs[SIZES[0]]
    print(
        "| prompts | build (priors / cold) s | sample(64) ms | x10k | refill sample(16) ms | "
        "x10k | observe us | x10k | state (JSON) MB | state_dict+dumps s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in SIZES:
        cols = []
        for k, unit in ((0, 1e3), (1, 1e3), (2, 1e6)):
            vals = [c[k] * unit for c in costs[n]]
            ratio = [c[k] / b[k] for c, b in zip(costs[n], base)]
            cols.append(f"{statistics.median(vals):.2f} | {min(ratio):.2f}-{max(ratio):.2f}")
        print(
            f"| {n:,} | {build[n]:.2f} / {build_cold[n]:.2f} | {' | '.join(cols)} | "
            f"{state[n][0] / 1e6:.2f} | {state[n][1]:.2f} |"
        )
    print(f"\n{args.rounds} rounds x {args.steps} steps per size; {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
