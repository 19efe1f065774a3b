"""How much of the spread task is reachable: per seed, the warm start's held-out greedy accuracy
and the share of held-out problems it solves at least once in ``--k`` samples (temperature 1).

``bench_spread.py`` compares held-out greedy accuracy after RL. A policy that only sharpens what
the warm start can already sample ends near the "solved at least once" share; what sits above it
(problems never sampled right) RL at this scale does not reach. This script measures that line
for the same seeds, warm starts (``passband.demo.pipeline.prepare``) and held-out problems.

    .venv/bin/python benchmarks/spread_ceiling.py --seeds 3 --k 32
"""

from __future__ import annotations

import argparse
import time


def _rates(model, tok, heldout, cfg, k: int) -> list[float]:
    """Each held-out problem's pass rate over ``k`` samples at the demo's temperature."""
    from passband.demo.task import arith_verifier
    from passband.trainer import HFRollout

    backend = HFRollout(
        model, tok, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, batch_size=256
    )
    verify, rates = arith_verifier(), []
    for start in range(0, len(heldout), 16):
        chunk = heldout[start : start + 16]
        out = backend.rollout(
            [p["prompt"] for p in chunk], k, seeds=list(range(start, start + len(chunk)))
        )
        texts = [tok.decode(c, skip_special_tokens=True) for c in out.completion_ids]
        for j, problem in enumerate(chunk):
            hits = [verify(t, answer=problem["answer"]).passed for t in texts[j * k : (j + 1) * k]]
            rates.append(sum(hits) / k)
    return rates


def main() -> int:
    import torch

    from passband.demo.evaluate import greedy_accuracy
    from passband.demo.pipeline import DemoConfig, prepare
    from passband.demo.task import LEVELS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--heldout", type=int, default=300, help="as bench_spread.py --heldout")
    parser.add_argument("--k", type=int, default=32, help="samples per held-out problem")
    args = parser.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    print(
        "| seed | warm-start greedy | solved at least once in k | never solved | per level: ever solved |"
    )
    print("|---|---|---|---|---|")
    for seed in range(args.seeds):
        cfg = DemoConfig(seed=seed, n_heldout=args.heldout, progress=False)
        tok, _, heldout, model = prepare(cfg, log=lambda s: None)
        greedy = greedy_accuracy(model, tok, heldout, max_new_tokens=cfg.max_new_tokens)["accuracy"]
        rates = _rates(model, tok, heldout, cfg, args.k)
        ever = sum(r > 0 for r in rates) / len(rates)
        levels = {}
        for problem, r in zip(heldout, rates):
            hit, total = levels.get(problem["level"], (0, 0))
            levels[problem["level"]] = (hit + (r > 0), total + 1)
        per = ", ".join(f"{LEVELS[lv].name} {h}/{n}" for lv, (h, n) in sorted(levels.items()))
        print(f"| {seed} | {greedy:.1%} | {ever:.1%} | {1 - ever:.1%} | {per} |", flush=True)
    print(f"\nk = {args.k}; {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
