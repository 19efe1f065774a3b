"""passband's GRPOTrainer against TRL's GRPOTrainer on a real pretrained model, as ratios.

The model is SmolLM2-135M-Instruct (49k vocabulary, chat template, pad = EOS = ``<|im_end|>``),
prepared once by ``scripts/prepare_model.py``. The task: ``What is a + b?`` with a, b in 1..20,
asked as a chat message; the reward is the ``math`` verifier (exact, last number) for both
trainers (TRL gets it through ``as_trl_reward``). Settings shared by both, from issue 15:
G = 8, 4 prompts per step, 24 new tokens, T = 1, lr 1e-5, beta = 0, ``--steps`` steps; each trainer
keeps its own defaults otherwise (TRL: linear decay, clip 0.2/0.2, DAPO loss; passband: its
GRPOConfig defaults, curriculum, zero-variance filter and refill). bf16 is off for both (CPU).

Each (contender, seed) runs in its own fresh Python process with one torch thread; the contenders
of one seed run at the same time, so they share the machine's load alike (on a shared machine,
oversubscribed OpenMP threads spin and slow everything). Wall time is the whole training call
(trainer construction included), as a ratio to TRL's in the same seed. TRL runs with
``gradient_checkpointing = False`` (its default is True; passband's is False): it trades speed
for memory and leaves the math unchanged.
Held-out accuracy is greedy, 24 new tokens, on 128 problems disjoint from the training ones.

    .venv/bin/python benchmarks/bench_real_model.py                      # 3 seeds x (TRL, passband)
    .venv/bin/python benchmarks/bench_real_model.py --seeds 0 --steps 2  # smoke run
    .venv/bin/python benchmarks/bench_real_model.py --only trl "passband:lr_schedule=cosine"
A contender ``passband:key=value,...`` is passband with those GRPOConfig fields changed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "models" / "SmolLM2-135M-Instruct"
SETTINGS = dict(
    group_size=8,
    prompts_per_step=4,
    max_new_tokens=24,
    temperature=1.0,
    learning_rate=1e-5,
    beta=0.0,
)


def make_rows(n: int, seed: int, exclude: set[tuple[int, int]] = frozenset()) -> list[dict]:
    rng, rows, seen = random.Random(seed), [], set(exclude)
    while len(rows) < n:
        a, b = rng.randint(1, 20), rng.randint(1, 20)
        if (a, b) in seen:
            continue
        seen.add((a, b))
        rows.append(
            {
                "prompt": [
                    {"role": "user", "content": f"What is {a} + {b}? Reply with only the number."}
                ],
                "answer": str(a + b),
                "pair": (a, b),
            }
        )
    return rows


def splits() -> tuple[list[dict], list[dict]]:
    heldout = make_rows(128, seed=1234)
    train = make_rows(200, seed=99, exclude={r["pair"] for r in heldout})
    return train, heldout


def greedy_accuracy(model, tok, rows: list[dict]) -> float:
    from passband.trainer.rollout import HFRollout
    from passband.verifiers import get

    backend = HFRollout(
        model, tok, max_new_tokens=SETTINGS["max_new_tokens"], temperature=0, batch_size=64
    )
    texts = backend.rollout([r["prompt"] for r in rows], 1).texts
    verify = get("math")
    return sum(verify(t, answer=r["answer"]).passed for t, r in zip(texts, rows)) / len(rows)


def _run_trl(model, tok, train, steps, seed, out_dir):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from passband.verifiers import as_trl_reward

    s = SETTINGS
    args = GRPOConfig(
        output_dir=str(out_dir),
        per_device_train_batch_size=s["prompts_per_step"] * s["group_size"],
        num_generations=s["group_size"],
        max_completion_length=s["max_new_tokens"],
        temperature=s["temperature"],
        learning_rate=s["learning_rate"],
        beta=s["beta"],
        max_steps=steps,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,  # as passband's default: speed only, same math
        seed=seed,
        disable_tqdm=True,
        logging_steps=1,
        dataloader_num_workers=0,
    )
    data = Dataset.from_list([{"prompt": r["prompt"], "answer": r["answer"]} for r in train])
    reward = as_trl_reward("math", fields={"answer": "answer"})
    GRPOTrainer(
        model=model, reward_funcs=reward, args=args, train_dataset=data, processing_class=tok
    ).train()


def _run_passband(model, tok, train, steps, seed, out_dir, overrides: dict):
    from passband.trainer import GRPOConfig, GRPOTrainer

    config = GRPOConfig(
        **SETTINGS,
        max_steps=steps,
        seed=seed,
        output_dir=str(out_dir),
        checkpoint_every=10_000,
        progress=False,
        **overrides,
    )
    rows = [{"prompt": r["prompt"], "answer": r["answer"]} for r in train]
    with GRPOTrainer(
        model, tok, rows, "math", config, reference_columns={"answer": "answer"}
    ) as trainer:
        trainer.train()


def parse_contender(name: str) -> tuple[str, dict]:
    kind, _, spec = name.partition(":")
    overrides = {}
    for item in filter(None, spec.split(",")):
        key, _, value = item.partition("=")
        overrides[key] = json.loads(value) if value[:1] in "0123456789-[{tf" else value
    return kind, overrides


def worker(name: str, seed: int, steps: int, scratch: str) -> dict:
    import torch

    from passband.trainer.models import load_model_and_tokenizer

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    train, heldout = splits()
    if name == "base":  # the model before RL, evaluated beside the first seed's contenders
        model, tok = load_model_and_tokenizer(str(MODEL))
        return {
            "name": name,
            "seed": seed,
            "train_s": 0.0,
            "accuracy": greedy_accuracy(model.eval(), tok, heldout),
        }
    model, tok = load_model_and_tokenizer(str(MODEL))
    out_dir = Path(scratch) / f"{name.replace(':', '_').replace(',', '_')}_{seed}"
    kind, overrides = parse_contender(name)
    start = time.perf_counter()
    if kind == "trl":
        _run_trl(model, tok, train, steps, seed, out_dir)
    else:
        _run_passband(model, tok, train, steps, seed, out_dir, overrides)
    train_s = time.perf_counter() - start
    model.eval()
    return {
        "name": name,
        "seed": seed,
        "train_s": train_s,
        "accuracy": greedy_accuracy(model, tok, heldout),
    }


def _spawn_all(names: list[str], seed: int, args, scratch: str) -> list[dict]:
    """Every contender of one seed at once, each in its own process; their result rows."""
    env = dict(
        os.environ, PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1"
    )
    procs = {
        name: subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                name,
                "--seeds",
                str(seed),
                "--steps",
                str(args.steps),
                "--scratch",
                scratch,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in names
    }
    rows = []
    for name, proc in procs.items():
        out, err = proc.communicate()
        found = [line for line in out.splitlines() if line.startswith("RESULT ")]
        if proc.returncode or not found:
            print(f"{name} seed {seed} failed (exit {proc.returncode}):\n{err[-3000:]}")
            continue
        rows.append(json.loads(found[-1][len("RESULT ") :]))
    return rows


def _table(rows: list[dict], base: float, names: list[str]) -> str:
    trl = {r["seed"]: r for r in rows if r["name"] == "trl"}
    lines = [
        f"base model (before RL): {base:.1%} greedy held-out accuracy",
        "",
        "| contender | seeds | held-out acc per seed | mean | mean - TRL | wall time x TRL (range) |",
        "|---|---|---|---|---|---|",
    ]
    for name in names:
        mine = sorted((r for r in rows if r["name"] == name), key=lambda r: r["seed"])
        if not mine:
            continue
        accs = [r["accuracy"] for r in mine]
        pairs = [(r, trl[r["seed"]]) for r in mine if r["seed"] in trl]
        gap = statistics.mean(a["accuracy"] - t["accuracy"] for a, t in pairs) if pairs else 0.0
        ratios = [a["train_s"] / t["train_s"] for a, t in pairs] or [1.0]
        lines.append(
            f"| {name} | {len(mine)} | {' / '.join(f'{a:.1%}' for a in accs)} | "
            f"{statistics.mean(accs):.1%} | {gap * 100:+.1f} pt | "
            f"{statistics.mean(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--only", nargs="+", default=["trl", "passband"])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(
            "RESULT " + json.dumps(worker(args.worker, args.seeds[0], args.steps, args.scratch)),
            flush=True,
        )
        return 0
    if not (MODEL / "config.json").is_file():
        print(f"no model at {MODEL}: run `python scripts/prepare_model.py` first")
        return 2
    t0 = time.perf_counter()
    rows, base = [], float("nan")
    with tempfile.TemporaryDirectory(prefix="bench_real_") as scratch:
        for k, seed in enumerate(args.seeds):  # seed-major: an interrupted run has paired rows
            for row in _spawn_all(args.only + (["base"] if k == 0 else []), seed, args, scratch):
                if row["name"] == "base":
                    base = row["accuracy"]
                    continue
                rows.append(row)
                print(
                    f"{row['name']} seed {seed}: acc {row['accuracy']:.1%}, "
                    f"train {row['train_s']:.0f}s",
                    flush=True,
                )
    print()
    print(_table(rows, base, args.only))
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
