"""passband's GRPOTrainer against TRL's GRPOTrainer, at passband's defaults, as ratios in one run.

Two tasks, each from its own SFT warm start (made once, saved, loaded by every contender):
- ``demo``: the demo's arithmetic (answers of at most 5 tokens), its ``demo_arith`` verifier;
- ``long``: the same problems, the answer written again and again up to >= 64 characters (one
  token each: completions of 64-70 tokens), scored by the built-in ``exact`` verifier.

Both trainers get the same G, prompts per step, learning rate and completion length; otherwise
passband runs at its defaults (curriculum, zero-variance filter with refills, ``beta = 0.001``:
a reference forward TRL does not make) and TRL with the settings that match passband's objective
(clip 0.2 / 0.28, DAPO token-mean loss, constant lr, ``beta = 0``, one inner iteration).
What is timed is the call a user makes: ``GRPOTrainer(...)`` and ``.train()``, start-up included
(the imports are done before the clock starts, for both). Each contender runs in a fresh process,
one after the other, the contenders interleaved over ``--repeats``; the table gives every ratio
to TRL's time of the same repeat, as a range. Held-out accuracy is greedy, on problems disjoint
from the training set. ``--before DIR`` adds passband from another checkout (e.g. the previous
``main``), run the same way; ``--set KEY=VALUE`` adds passband with that non-default setting (the
row names it).

    .venv/bin/python benchmarks/bench_trainer_vs_trl.py                      # both tasks
    .venv/bin/python benchmarks/bench_trainer_vs_trl.py --task long --steps 8 --repeats 1
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

TASKS = {"demo": 6, "long": 72}  # max_new_tokens
PHASES = ("sample", "generate", "score", "update", "sync")


def _long_answer(answer: str, width: int = 64) -> str:
    """``answer`` repeated, space-separated, until the text is at least ``width`` characters."""
    reps = -(-(width + 1) // (len(answer) + 1))
    return " ".join([answer] * reps)


def _splits(task: str, args):
    from passband.demo.task import make_splits

    train, heldout = make_splits(4000, args.heldout, seed=0, levels=(0, 1, 2))
    if task == "long":
        train = [{**p, "answer": _long_answer(str(p["answer"]))} for p in train]
        heldout = [{**p, "answer": _long_answer(str(p["answer"]))} for p in heldout]
    return train, heldout


def _passes(task: str):
    """Binary reward of one completion (what both trainers are scored with)."""
    if task == "demo":
        from passband.demo.task import arith_verifier

        return arith_verifier()
    from passband.verifiers import get

    return get("exact")


def _accuracy(model, tok, task: str, heldout: list[dict]) -> float:
    from passband.demo.evaluate import greedy_answers

    answers = greedy_answers(model, tok, [p["prompt"] for p in heldout], max_new_tokens=TASKS[task])
    verify = _passes(task)
    return sum(verify(a, answer=p["answer"]).passed for a, p in zip(answers, heldout)) / len(
        heldout
    )


def _seed(args) -> int:
    """The training seed of this repeat: 0, or the repeat's index with ``--vary-seeds``."""
    return args.repeat if args.vary_seeds else 0


def _run_trl(model, tok, train, task: str, args, out_dir: Path) -> list[float]:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    verify = _passes(task)
    stamps: list[float] = []

    def reward(completions, answer, **_):
        return [float(verify(c, answer=a).passed) for c, a in zip(completions, answer)]

    class Stamp(TrainerCallback):
        def on_step_end(self, *a, **k):
            stamps.append(time.perf_counter())

    data = Dataset.from_list([{"prompt": p["prompt"], "answer": p["answer"]} for p in train])
    targs = GRPOConfig(
        output_dir=str(out_dir),
        per_device_train_batch_size=args.prompts * args.group,
        num_generations=args.group,
        max_completion_length=TASKS[task],
        learning_rate=args.lr,
        beta=0.0,
        epsilon=0.2,
        epsilon_high=0.28,
        loss_type="dapo",
        num_iterations=1,
        lr_scheduler_type="constant",
        max_steps=args.steps,
        logging_steps=10,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=_seed(args),
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    start = time.perf_counter()
    GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=targs,
        train_dataset=data,
        processing_class=tok,
        callbacks=[Stamp()],
    ).train()
    return [start] + stamps


def _run_passband(model, tok, train, task: str, args, out_dir: Path) -> list[float]:
    from passband.trainer import GRPOConfig, GRPOTrainer

    overrides = json.loads(args.overrides or "{}")  # a --set contender's non-defaults
    config = GRPOConfig(
        **overrides,
        group_size=args.group,
        prompts_per_step=args.prompts,
        max_new_tokens=TASKS[task],
        learning_rate=args.lr,
        pretrained=False,
        max_steps=args.steps,
        output_dir=str(out_dir),
        progress=False,
        seed=_seed(args),  # 0, passband's default, unless --vary-seeds
    )
    reward = "demo_arith" if task == "demo" else "exact"
    start = time.perf_counter()
    trainer = GRPOTrainer(model, tok, train, reward, config, reference_columns={"answer": "answer"})
    built = time.perf_counter()
    trainer.train()
    end = time.perf_counter()  # the last step's share includes the final checkpoint write
    lines = [json.loads(x) for x in (out_dir / "metrics.jsonl").read_text().splitlines()]
    return [start] + [built + m["time_s"] for m in lines[:-1]] + [end]


def _phases(out_dir: Path) -> dict:
    lines = [json.loads(x) for x in (out_dir / "metrics.jsonl").read_text().splitlines()]
    out = {
        p: sum(m.get(f"time/{p}_s") or 0.0 for m in lines[1:]) / max(len(lines) - 1, 1)
        for p in PHASES
        if f"time/{p}_s" in lines[0]
    }
    if "generate/calls" in lines[0]:  # not logged before this change
        out["generate_calls"] = statistics.mean(m["generate/calls"] for m in lines)
        trained = sum(m["groups/effective"] for m in lines)  # totals: a step may train nothing
        out["per_trained"] = sum(m["groups/rolled"] for m in lines) / trained if trained else None
    out["length"] = statistics.mean(m["length/mean"] for m in lines if m["length/mean"] is not None)
    return out


def worker(name: str, task: str, args) -> dict:
    """One contender on one task in this (fresh) process; returns its row."""
    import torch
    import trl  # noqa: F401
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import passband.demo.task  # noqa: F401  registers demo_arith
    import passband.trainer.grpo  # noqa: F401  imports outside the clock, for both trainers

    torch.set_num_threads(1)
    torch.manual_seed(_seed(args))
    train, heldout = _splits(task, args)
    warm = Path(args.warm_dir or args.scratch) / f"warm_{task}"
    tok, model = AutoTokenizer.from_pretrained(warm), AutoModelForCausalLM.from_pretrained(warm)
    safe = "".join(ch if ch.isalnum() else "_" for ch in name)
    out_dir = Path(args.scratch) / f"{safe}_{task}_{args.repeat}"
    run = _run_trl if name == "trl" else _run_passband
    stamps = run(model, tok, train, task, args, out_dir)
    steps = [b - a for a, b in zip(stamps, stamps[1:])]
    row = {
        "name": name,
        "task": task,
        "repeat": args.repeat,
        "train_s": stamps[-1] - stamps[0],
        "first_step_s": steps[0],
        "steady_step_s": statistics.median(steps[1:] or steps),
        "accuracy": _accuracy(model, tok, task, heldout),
    }
    if name != "trl":
        row.update(_phases(out_dir))
    return row


def _warm_start(task: str, args, scratch: Path) -> float:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from passband.demo.model import ModelSize, build_model
    from passband.demo.sft import SFTConfig, warm_start
    from passband.demo.tokenizer import build_tokenizer

    torch.set_num_threads(1)
    train, heldout = _splits(task, args)
    saved = scratch / f"warm_{task}"
    if (saved / "config.json").is_file():  # --warm-dir from an earlier run with these settings
        tok, model = (
            AutoTokenizer.from_pretrained(saved),
            AutoModelForCausalLM.from_pretrained(saved),
        )
        return _accuracy(model, tok, task, heldout)
    tok = build_tokenizer()
    # the long task's prompt + 72 completion tokens need more than the demo model's 64 positions
    size = ModelSize(max_positions=128) if task == "long" else ModelSize()
    model = build_model(tok, size, seed=0)
    warm_start(model, tok, train, SFTConfig(steps=args.sft_steps), progress=False)
    model.save_pretrained(scratch / f"warm_{task}")
    tok.save_pretrained(scratch / f"warm_{task}")
    return _accuracy(model, tok, task, heldout)


def _spread(values: list[float], fmt: str = ".2f") -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if abs(hi - lo) < 1e-9 else f"{lo:{fmt}}–{hi:{fmt}}"


def _table(rows: list[dict], warm: dict[str, float]) -> str:
    lines = [
        "| task | contender | runs | wall s (start-up incl.) | × TRL wall | s/step steady | "
        "× TRL s/step | first step / steady | held-out acc | gen calls/step | "
        "completions per trained |",
        "|" + "---|" * 11,
    ]
    for task in TASKS:
        trl = {r["repeat"]: r for r in rows if r["task"] == task and r["name"] == "trl"}
        names = sorted({r["name"] for r in rows if r["task"] == task}, key=lambda n: n != "trl")
        if not trl:
            continue
        lines.append(
            f"| {task} | warm start (before RL) | - | - | - | - | - | - | {warm[task]:.1%} | - | - |"
        )
        for name in names:
            mine = [
                r for r in rows if r["task"] == task and r["name"] == name and r["repeat"] in trl
            ]
            if not mine:
                continue
            wall = [r["train_s"] / trl[r["repeat"]]["train_s"] for r in mine]
            step = [r["steady_step_s"] / trl[r["repeat"]]["steady_step_s"] for r in mine]
            first = [r["first_step_s"] / r["steady_step_s"] for r in mine]
            calls = (
                _spread([r["generate_calls"] for r in mine], ".2f")
                if "generate_calls" in mine[0]
                else "1"
            )
            per = (
                _spread([r["per_trained"] for r in mine], ".2f")
                if "per_trained" in mine[0]
                else "1"
            )
            lines.append(
                f"| {task} | {name} | {len(mine)} | {_spread([r['train_s'] for r in mine], '.1f')} | "
                f"{_spread(wall)} | {_spread([r['steady_step_s'] for r in mine], '.3f')} | "
                f"{_spread(step)} | {_spread(first, '.1f')} | "
                f"{_spread([r['accuracy'] for r in mine], '.1%')} | {calls} | {per} |"
            )
    return "\n".join(lines)


def _phase_table(rows: list[dict]) -> str:
    lines = [
        "| task | contender | " + " | ".join(f"{p} s" for p in PHASES) + " | mean length |",
        "|" + "---|" * (len(PHASES) + 3),
    ]
    for r in rows:
        if "generate" in r:
            lines.append(
                f"| {r['task']} | {r['name']} (repeat {r['repeat']}) | "
                + " | ".join(f"{r.get(p, 0.0):.3f}" for p in PHASES)
                + f" | {r['length']:.1f} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=[*TASKS, "both"], default="both")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps per contender")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--sft-steps", type=int, default=400)
    parser.add_argument("--heldout", type=int, default=300)
    parser.add_argument("--before", default=None, help="another passband checkout to run too")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="also run passband with this GRPOConfig setting (JSON value; repeatable: one contender)",
    )
    parser.add_argument("--overrides", help=argparse.SUPPRESS)
    parser.add_argument(
        "--warm-dir",
        default=None,
        help="keep the SFT warm starts here and reuse them on later runs (same --sft-steps)",
    )
    parser.add_argument(
        "--vary-seeds",
        action="store_true",
        help="seed repeat r with r (torch, TRL's and passband's seed): held-out accuracy then "
        "ranges over seeds, where by default every repeat trains the same way",
    )
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(*args.worker, args)), flush=True)
        return 0
    tasks = list(TASKS) if args.task == "both" else [args.task]
    contenders = {"trl": (None, None), "passband": (os.getcwd(), None)}
    if args.before:
        contenders["passband_before"] = (os.path.abspath(args.before), None)
    if args.set:
        pairs = dict(kv.split("=", 1) for kv in args.set)
        overrides = {k: json.loads(v) for k, v in pairs.items()}
        contenders["passband " + ",".join(args.set)] = (os.getcwd(), json.dumps(overrides))
    with tempfile.TemporaryDirectory(prefix="bench_trl_") as tmp:
        scratch, t0 = Path(tmp), time.perf_counter()
        if args.warm_dir:
            Path(args.warm_dir).mkdir(parents=True, exist_ok=True)
        warm = {t: _warm_start(t, args, Path(args.warm_dir or scratch)) for t in tasks}
        print(f"warm starts: {warm} ({time.perf_counter() - t0:.0f}s)", flush=True)
        rows = []
        for repeat in range(args.repeats):
            for task in tasks:
                for name, (code, overrides) in contenders.items():
                    rows += _spawn(name, task, repeat, code, overrides, args, scratch)
        print("\n" + _table(rows, warm) + "\n\n" + _phase_table(rows))
        print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    return 0


def _spawn(
    name: str, task: str, repeat: int, code: str | None, overrides, args, scratch: Path
) -> list[dict]:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        name,
        task,
        "--scratch",
        str(scratch),
        "--repeat",
        str(repeat),
    ] + [
        f"--{k.replace('_', '-')}={getattr(args, k)}"
        for k in ("steps", "group", "prompts", "lr", "heldout")
    ]
    cmd += ["--warm-dir", args.warm_dir] if args.warm_dir else []
    cmd += ["--vary-seeds"] if args.vary_seeds else []
    cmd += ["--overrides", overrides] if overrides else []
    env = dict(os.environ, PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false")
    if code:
        env["PYTHONPATH"] = code
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    found = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not found:
        print(f"{name}/{task} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}", flush=True)
        return []
    row = json.loads(found[-1][len("RESULT ") :])
    print(
        f"{task} {name} #{repeat}: {row['train_s']:.1f}s, steady {row['steady_step_s']:.3f} s/step, "
        f"first {row['first_step_s']:.2f}s, acc {row['accuracy']:.1%}",
        flush=True,
    )
    return [row]


if __name__ == "__main__":
    sys.exit(main())
