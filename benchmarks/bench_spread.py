"""The spread task: passband at its defaults vs TRL's GRPOTrainer vs uniform sampling + refill.

The demo's data (``passband.demo``: 40% of prompts solved after the warm start, 35% out of reach,
25% in band), one warm start per seed shared by every contender (saved, then loaded in a fresh
process each), the same tiny model, reward, G, prompts per step, learning rate, clip, beta = 0,
DAPO token-mean loss. Contenders:

- ``trl``: TRL ``GRPOTrainer`` (no dynamic sampling: trains on what it generated);
- ``passband``: ``GRPOTrainer`` at its defaults (pass-rate curriculum, zero-variance groups
  dropped and refilled, ``max_refill_rounds = 2``);
- ``uniform_refill``: passband with ``use_curriculum = false`` (DAPO-style dynamic sampling);
- ``prescored`` (``--prescored``): ``passband score``'s pre-scoring of the training set with the
  warm-start model (``curriculum.prescore``: k = 8, stop after 4 agreeing answers), then passband at
  its defaults on the scored rows, whose ``passes`` / ``trials`` become the curriculum's priors.
  Pre-scoring is not training: its completions and wall time are reported on their own, and
  completions to reach TRL's final are given with and without them.

TRL runs ``--steps`` steps; the two others then train for the same *training* wall time as TRL
took, start-up (the trainer's constructor) included for both. Every contender measures greedy
held-out accuracy every ``--eval-every`` steps (the eval time is not counted). Reported over
seeds (mean, min..max): TRL's final accuracy; for the others, completions generated and training
wall time until they first reach it (ratio to TRL's), and their accuracy at TRL's wall time; then
passband's lead over TRL and over uniform + refill at equal wall time along the run (at 0.1, 0.25,
0.5, 0.75 and 1 times TRL's wall time), so a lead that the end of the run hides still shows.

    .venv/bin/python benchmarks/bench_spread.py [--seeds 3] [--steps 60] [--eval-every 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONTENDERS = ("trl", "passband", "uniform_refill")
PRESCORED = "prescored"


def _cfg(args, seed: int):
    from passband.demo.pipeline import DemoConfig

    return DemoConfig(seed=seed, grpo_steps=args.steps, n_heldout=args.heldout, progress=False)


def _evaluator(model, tok, heldout, cfg):
    from passband.demo.evaluate import greedy_accuracy

    def evaluate() -> float:
        was = model.training
        acc = greedy_accuracy(model, tok, heldout, max_new_tokens=cfg.max_new_tokens)["accuracy"]
        model.train(was)
        return acc

    return evaluate


def _run_passband(model, tok, train, cfg, out_dir, evaluate, args, curriculum: bool) -> list:
    from passband.demo.pipeline import grpo_config
    from passband.demo.task import arith_verifier
    from passband.trainer import GRPOTrainer

    config = grpo_config(
        cfg,
        out_dir,
        use_curriculum=curriculum,
        checkpoint_every=10**9,
        max_steps=10**6,
        progress=False,
    )
    curve = [(0, 0, 0.0, evaluate())]  # the warm start, before the clock starts
    t = time.perf_counter()
    trainer = GRPOTrainer(model, tok, train, arith_verifier(), config)
    trainer._begin()  # the fresh, seeded start of train(); we step by hand to evaluate
    generated, train_s = 0, time.perf_counter() - t  # start-up counts, as it does for TRL
    while train_s < args.wall_budget:
        t = time.perf_counter()
        m = trainer.train_step()
        train_s += time.perf_counter() - t
        generated += m["groups/rolled"] * cfg.group_size
        if trainer.step % args.eval_every == 0 or train_s >= args.wall_budget:
            curve.append((trainer.step, generated, train_s, evaluate()))
    trainer.writer.close()
    return curve


def _trl_config(cfg, out_dir, per_step: int):
    """TRL's settings equal to passband's for this task (clip 0.2 / 0.28, DAPO loss, no decay)."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out_dir),
        per_device_train_batch_size=per_step,
        num_generations=cfg.group_size,
        max_completion_length=cfg.max_new_tokens,
        temperature=cfg.temperature,
        top_k=0,
        top_p=1.0,
        learning_rate=cfg.learning_rate,
        beta=cfg.beta,
        epsilon=0.2,
        epsilon_high=0.28,
        loss_type="dapo",
        num_iterations=1,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        max_steps=cfg.grpo_steps,
        logging_steps=10,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=cfg.seed,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )


def _run_trl(model, tok, train, cfg, out_dir, evaluate, args) -> list:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOTrainer

    from passband.demo.task import arith_verifier

    verify = arith_verifier()

    def reward(completions, answer, **_):
        return [float(verify(c, answer=a).passed) for c, a in zip(completions, answer)]

    per_step = cfg.prompts_per_step * cfg.group_size
    curve = [(0, 0, 0.0, evaluate())]

    class Curve(TrainerCallback):
        def __init__(self):
            self.start, self.paused = time.perf_counter(), 0.0

        def on_step_end(self, _args, state, control, **kw):
            if state.global_step % args.eval_every == 0 or state.global_step == cfg.grpo_steps:
                t = time.perf_counter()
                acc = evaluate()
                wall = t - self.start - self.paused
                self.paused += time.perf_counter() - t
                curve.append((state.global_step, state.global_step * per_step, wall, acc))

    data = Dataset.from_list([{"prompt": p["prompt"], "answer": p["answer"]} for p in train])
    targs = _trl_config(cfg, out_dir, per_step)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=targs,
        train_dataset=data,
        processing_class=tok,
        callbacks=[Curve()],
    )
    trainer.train()
    return curve


def worker(name: str, args) -> list:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from passband.demo.task import make_splits

    torch.set_num_threads(1)
    cfg = _cfg(args, args.seed)
    train, heldout = make_splits(cfg.n_train, cfg.n_heldout, seed=cfg.seed, levels=cfg.levels)
    tok = AutoTokenizer.from_pretrained(args.warm)
    model = AutoModelForCausalLM.from_pretrained(args.warm)
    evaluate = _evaluator(model, tok, heldout, cfg)
    out = Path(args.scratch) / name
    if name == "trl":
        return _run_trl(model, tok, train, cfg, out, evaluate, args)
    if name == PRESCORED:
        train, cost = _prescore(model, tok, train, cfg, out)
        return {"curve": _run_passband(model, tok, train, cfg, out, evaluate, args, True), **cost}
    return _run_passband(model, tok, train, cfg, out, evaluate, args, name != "uniform_refill")


def _prescore(model, tok, train, cfg, out: Path) -> tuple[list[dict], dict]:
    """``passband score`` on the training rows with the warm-start model: rows with ``passes`` /
    ``trials``, and what it cost (completions, wall seconds)."""
    from passband.curriculum.prescore import prescore
    from passband.demo.task import arith_verifier
    from passband.trainer import HFRollout

    backend = HFRollout(
        model, tok, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, batch_size=256
    )
    t = time.perf_counter()
    result = prescore(
        train,
        backend.generate,
        arith_verifier(),
        out_path=out.with_suffix(".scored.jsonl"),
        progress=False,
        references={"answer": "answer"},
        batch_size=32,
    )
    wall = time.perf_counter() - t
    return result.rows, {"prescore_completions": result.samples, "prescore_s": wall}


def _warm(args, seed: int, path: Path) -> None:
    import torch

    from passband.demo.pipeline import prepare

    torch.set_num_threads(1)
    tok, _, _, model = prepare(_cfg(args, seed), log=lambda s: None)
    model.save_pretrained(path)
    tok.save_pretrained(path)


def _spawn(name: str, args, seed: int, scratch: Path, wall: float) -> list:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        name,
        "--warm",
        str(scratch / "warm"),
        "--scratch",
        str(scratch),
        "--seed",
        str(seed),
        "--steps",
        str(args.steps),
        "--heldout",
        str(args.heldout),
        "--eval-every",
        str(args.eval_every),
        "--wall-budget",
        str(wall),
    ]
    env = dict(os.environ, PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    found = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not found:
        raise RuntimeError(f"{name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(found[-1][len("RESULT ") :])


def _reach(curve: list, target: float):
    """(completions, wall) at the first evaluation at or above ``target``; None if never."""
    for _, generated, wall, acc in curve:
        if acc >= target - 1e-9:
            return generated, wall
    return None


def _at_wall(curve: list, wall: float) -> float:
    return [acc for _, _, w, acc in curve if w <= wall * 1.02][-1]


def _summary(runs: list[dict]) -> None:
    def fmt(values, pct=False):
        if not values:
            return "never"
        m = statistics.mean(values)
        s = (
            f"{m:.1%} ({min(values):.1%}..{max(values):.1%})"
            if pct
            else f"{m:.2f} ({min(values):.2f}..{max(values):.2f})"
        )
        return s

    print(
        "\n| contender | final held-out | reached TRL's final acc | completions to reach / TRL |"
        " wall to reach / TRL | held-out at TRL's wall time | vs TRL |"
    )
    print("|---|---|---|---|---|---|---|")
    names = CONTENDERS + ((PRESCORED,) if PRESCORED in runs[0] else ())
    for name in names:
        finals, comp, wall, equal, delta, reached = [], [], [], [], [], 0
        for r in runs:
            trl = r["trl"]
            target, trl_wall, trl_comp = trl[-1][3], trl[-1][2], trl[-1][1]
            finals.append(r[name][-1][3])
            hit = _reach(r[name], target)
            if hit:
                reached += 1
                comp.append(hit[0] / trl_comp)
                wall.append(hit[1] / trl_wall)
            equal.append(_at_wall(r[name], trl_wall))
            delta.append((equal[-1] - target) * 100)
        print(
            f"| {name} | {fmt(finals, True)} | {reached}/{len(runs)} | {fmt(comp)} | {fmt(wall)} |"
            f" {fmt(equal, True)} | {statistics.mean(delta):+.1f}pt "
            f"({min(delta):+.1f}..{max(delta):+.1f}) |"
        )
    _along(runs)
    if PRESCORED in runs[0]:
        _prescore_summary(runs)


FRACTIONS = (0.1, 0.25, 0.5, 0.75, 1.0)


def _along(runs: list[dict]) -> None:
    """Held-out accuracy at equal training wall time along the run, not only at its end: at each
    fraction of TRL's wall time, passband minus TRL and minus uniform + refill (points; mean over
    seeds, min..max), each read at its last evaluation within that time."""
    print("\n| at × TRL's wall time | passband − TRL | passband − uniform + refill |")
    print("|---|---|---|")
    for frac in FRACTIONS:
        cells = []
        for other in ("trl", "uniform_refill"):
            d = [
                100 * (_at_wall(r["passband"], w) - _at_wall(r[other], w))
                for r in runs
                for w in [r["trl"][-1][2] * frac]
            ]
            cells.append(f"{statistics.mean(d):+.1f} ({min(d):+.1f}..{max(d):+.1f})")
        print(f"| {frac:g} | {cells[0]} | {cells[1]} |")


def _prescore_summary(runs: list[dict]) -> None:
    """Pre-scoring's own cost, and completions to reach TRL's final with it counted."""
    for r in runs:
        trl, cost = r["trl"], r["prescore"]
        hit = _reach(r[PRESCORED], trl[-1][3])
        counted = (
            f"{(hit[0] + cost['prescore_completions']) / trl[-1][1]:.2f}x TRL's completions"
            if hit
            else "never reached"
        )
        print(
            f"pre-scoring: {cost['prescore_completions']} completions "
            f"({cost['prescore_completions'] / trl[-1][1]:.2f}x TRL's whole run), "
            f"{cost['prescore_s']:.1f}s; reaching TRL's final with it counted: {counted}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=60, help="TRL's optimizer steps")
    parser.add_argument("--heldout", type=int, default=300)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument(
        "--prescored", action="store_true", help="also: pre-score the data, then train on priors"
    )
    for hidden in ("--worker", "--warm", "--scratch"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--wall-budget", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args)), flush=True)
        return 0
    t0, runs = time.perf_counter(), []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        with tempfile.TemporaryDirectory(prefix="bench_spread_") as tmp:
            scratch = Path(tmp)
            _warm(args, seed, scratch / "warm")
            run = {"trl": _spawn("trl", args, seed, scratch, 0.0)}
            wall = run["trl"][-1][2]
            for name in CONTENDERS[1:] + ((PRESCORED,) if args.prescored else ()):
                run[name] = _spawn(name, args, seed, scratch, wall)
            if args.prescored:  # its curve, and the pre-scoring cost on its own
                cost = run[PRESCORED]
                run[PRESCORED], run["prescore"] = cost.pop("curve"), cost
            runs.append(run)
            print(f"seed {seed}: " + json.dumps(run), flush=True)  # whole curves: step,
            # completions, training wall s, held-out accuracy
    print(json.dumps(runs))
    _summary(runs)
    print(f"\n{args.seeds} seeds; {time.perf_counter() - t0:.0f}s (shared machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
