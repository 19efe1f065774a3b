"""passband's GRPOTrainer against TRL's GRPOTrainer on the demo task, side by side, as ratios.

Same tiny Qwen2 model and the same warm start (one SFT run, saved and loaded by every contender),
same training prompts, same binary reward (the ``demo_arith`` verifier), same settings: G,
prompts per step, max new tokens, temperature, learning rate, beta = 0, clip 0.2 / 0.28, DAPO
token-mean loss, constant schedule, one inner iteration. Every contender generates exactly the
same number of completions (``steps x prompts_per_step x G``): passband runs with
``max_refill_rounds = 0`` here, so a dropped zero-variance group is not replaced and the generation
budget per step is identical to TRL's.

Each contender runs in its own fresh Python process (one after the other, one CPU thread each), so
memory is comparable: ``peak RSS`` is the process's ``ru_maxrss`` (resource.getrusage: everything
the process ever held, imports included); ``train RSS`` is the growth of RSS (psutil, sampled every
5 ms) from just before training to its peak. Held-out accuracy is greedy, on problems disjoint from
the training set.

    .venv/bin/python benchmarks/bench_trainer_vs_trl.py            # ~4-5 min on 2 cores
    .venv/bin/python benchmarks/bench_trainer_vs_trl.py --steps 30 # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CONTENDERS = {
    "trl": "TRL 1.16 GRPOTrainer",
    "passband": "passband, uniform + zero-variance filter",
    "passband_nofilter": "passband, uniform, no filter",
    "passband_curriculum_default": "passband, curriculum (default options) + filter",
}


class _PeakRSS:
    """Highest RSS seen by a 5 ms polling thread between ``start`` and ``stop``."""

    def __init__(self):
        import psutil

        self._proc, self.peak, self._stop = psutil.Process(), 0, threading.Event()
        self.base = self._proc.memory_info().rss

    def _poll(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss)
            time.sleep(0.005)

    def __enter__(self):
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _demo_config(args):
    from passband.demo.pipeline import DemoConfig
    from passband.demo.sft import SFTConfig

    return DemoConfig(grpo_steps=args.steps, sft=SFTConfig(steps=args.sft_steps), progress=False,
                      n_heldout=args.heldout)


def _run_trl(model, tok, train, cfg, out_dir):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from passband.demo.task import arith_verifier

    verify = arith_verifier()

    def reward(completions, answer, **_):
        return [float(verify(c, answer=a).passed) for c, a in zip(completions, answer)]

    data = Dataset.from_list([{"prompt": p["prompt"], "answer": p["answer"]} for p in train])
    targs = GRPOConfig(
        output_dir=str(out_dir), per_device_train_batch_size=cfg.prompts_per_step * cfg.group_size,
        num_generations=cfg.group_size, max_completion_length=cfg.max_new_tokens,
        temperature=cfg.temperature, top_k=0, top_p=1.0, learning_rate=cfg.learning_rate,
        beta=cfg.beta, epsilon=0.2, epsilon_high=0.28, loss_type="dapo", num_iterations=1,
        lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0, max_grad_norm=1.0,
        max_steps=cfg.grpo_steps, logging_steps=10, save_strategy="no", report_to="none",
        use_cpu=True, bf16=False, seed=cfg.seed, disable_tqdm=True, dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=targs, train_dataset=data,
                          processing_class=tok)
    trainer.train()
    return cfg.grpo_steps * cfg.prompts_per_step * cfg.group_size


def _run_passband(model, tok, train, cfg, out_dir, *, curriculum, filter_zero_variance):
    import dataclasses

    from passband.demo.pipeline import grpo_config
    from passband.demo.task import arith_verifier
    from passband.trainer import GRPOTrainer

    cfg = dataclasses.replace(cfg, use_curriculum=curriculum, filter_zero_variance=filter_zero_variance)
    config = grpo_config(cfg, out_dir, max_refill_rounds=0, checkpoint_every=10_000, progress=False)
    trainer = GRPOTrainer(model, tok, train, arith_verifier(), config)
    trainer.train()
    return cfg.grpo_steps * cfg.prompts_per_step * cfg.group_size


def worker(name: str, args) -> dict:
    """One contender in this (fresh) process; returns its row of the table."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from passband.demo.evaluate import greedy_accuracy
    from passband.demo.task import make_splits

    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = _demo_config(args)
    train, heldout = make_splits(cfg.n_train, cfg.n_heldout, seed=cfg.seed, levels=cfg.levels)
    tok = AutoTokenizer.from_pretrained(args.warm)
    model = AutoModelForCausalLM.from_pretrained(args.warm)
    out_dir = Path(args.scratch) / name
    with _PeakRSS() as mem:
        start = time.perf_counter()
        if name == "trl":
            completions = _run_trl(model, tok, train, cfg, out_dir)
        else:
            completions = _run_passband(
                model, tok, train, cfg, out_dir,
                curriculum="curriculum" in name, filter_zero_variance="nofilter" not in name)
        train_s = time.perf_counter() - start
    acc = greedy_accuracy(model, tok, heldout, max_new_tokens=cfg.max_new_tokens)["accuracy"]
    return {"name": name, "steps": cfg.grpo_steps, "completions": completions,
            "train_s": train_s, "step_s": train_s / cfg.grpo_steps, "accuracy": acc,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "train_rss_mb": max(0, mem.peak - mem.base) / 2**20}


def _warm_start(args, scratch: Path) -> float:
    import torch

    from passband.demo.evaluate import greedy_accuracy
    from passband.demo.pipeline import prepare

    torch.set_num_threads(1)
    cfg = _demo_config(args)
    tok, _, heldout, model = prepare(cfg, log=lambda s: print(s, flush=True))
    model.save_pretrained(scratch / "warm")
    tok.save_pretrained(scratch / "warm")
    return greedy_accuracy(model, tok, heldout, max_new_tokens=cfg.max_new_tokens)["accuracy"]


def _table(rows: list[dict], warm_acc: float) -> str:
    ref = next(r for r in rows if r["name"] == "trl")
    lines = ["| contender | completions | s/step | x TRL time | peak RSS MB | x TRL | train RSS MB "
             "| held-out acc |",
             "|---|---|---|---|---|---|---|---|",
             f"| warm start (before RL) | 0 | - | - | - | - | - | {warm_acc:.1%} |"]
    for r in rows:
        lines.append(
            f"| {CONTENDERS[r['name']]} | {r['completions']} | {r['step_s']:.3f} | "
            f"{r['step_s'] / ref['step_s']:.2f} | {r['peak_rss_mb']:.0f} | "
            f"{r['peak_rss_mb'] / ref['peak_rss_mb']:.2f} | {r['train_rss_mb']:.0f} | {r['accuracy']:.1%} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=60, help="optimizer steps per contender")
    parser.add_argument("--sft-steps", type=int, default=400)
    parser.add_argument("--heldout", type=int, default=500)
    parser.add_argument("--only", nargs="*", default=list(CONTENDERS), choices=list(CONTENDERS))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--warm", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args)), flush=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_trl_") as tmp:
        scratch = Path(tmp)
        t0 = time.perf_counter()
        warm_acc = _warm_start(args, scratch)
        print(f"warm start: held-out greedy accuracy {warm_acc:.1%} ({time.perf_counter() - t0:.0f}s)")
        rows = []
        for name in args.only:
            cmd = [sys.executable, __file__, "--worker", name, "--warm", str(scratch / "warm"),
                   "--scratch", str(scratch), "--steps", str(args.steps),
                   "--sft-steps", str(args.sft_steps), "--heldout", str(args.heldout)]
            env = dict(os.environ, PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false")
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            found = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
            if proc.returncode or not found:
                print(f"{name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
                continue
            rows.append(json.loads(found[-1][len("RESULT "):]))
            r = rows[-1]
            print(f"{name}: {r['step_s']:.3f} s/step, acc {r['accuracy']:.1%}, "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
        if any(r["name"] == "trl" for r in rows):
            print()
            print(_table(rows, warm_acc))
        print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
