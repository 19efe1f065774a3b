"""GPU check: generation speed, GRPO step time and peak memory, passband next to TRL.

Builds a ~0.5B-parameter Qwen2-style model from a config (Qwen2.5-0.5B's shape, random weights;
nothing is downloaded) and a tokenizer in memory, then reports in one process:

- tokens/s of Hugging Face ``generate`` (bf16 autocast, KV cache, every row runs to full length);
- passband ``GRPOTrainer``: seconds per GRPO step and peak GPU memory (bf16, gradient
  checkpointing, G=8 x 8 prompts, 256 new tokens, no KL so no reference copy);
- the same for TRL's ``GRPOTrainer`` with the same sizes, if ``trl`` imports.

Random weights mean random completions that rarely stop early: steps measure full-length work.

    python benchmarks/gpu_check.py                       # CUDA, full size (2.6-2.8 min on an H200 at --steps 5)
    python benchmarks/gpu_check.py --device cpu --tiny   # smoke test on CPU (< 2 min)

Prints a table and writes JSON (``--out``, default ``gpu_check.json`` in the working directory).
Runs from a source checkout without ``pip install``: it maps ``passband.<pkg>`` to the folders.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

# this folder is on sys.path (the script runs from it)
from _gpu_env import ensure_passband
from _gpu_workload import FULL, PATTERN, TINY, build_model, build_tokenizer, make_prompts


# ---------------------------------------------------------------------- measurements
def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()


def _reset_peak(device) -> None:
    import torch

    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _peak_gib(device) -> float | None:
    import torch

    return torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None


def bench_generate(size, tokenizer, device, bf16: bool) -> dict:
    """Decode throughput at the rollout batch (G x prompts rows), full length."""
    import contextlib

    import torch

    model = build_model(size, tokenizer, device).eval()
    rows = size["group"] * size["prompts"]
    enc = tokenizer(
        make_prompts(rows, size["prompt_chars"]),
        return_tensors="pt",
        padding=True,
        padding_side="left",
    ).to(device)
    amp = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if bf16 and device.type == "cuda"
        else contextlib.nullcontext()
    )
    kwargs = dict(
        max_new_tokens=size["new_tokens"],
        min_new_tokens=size["new_tokens"],
        do_sample=True,
        temperature=1.0,
        top_k=0,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.no_grad(), amp:
        model.generate(**enc, **{**kwargs, "max_new_tokens": 4, "min_new_tokens": 4})  # warm-up
        _reset_peak(device)
        _sync(device)
        start = time.perf_counter()
        out = model.generate(**enc, **kwargs)
        _sync(device)
        seconds = time.perf_counter() - start
    new_tokens = (out.shape[1] - enc["input_ids"].shape[1]) * rows
    result = {
        "rows": rows,
        "new_tokens_per_row": size["new_tokens"],
        "seconds": seconds,
        "tokens_per_s": new_tokens / seconds,
        "peak_gib": _peak_gib(device),
    }
    del model, out
    return result


def _dataset(size: dict) -> list[dict]:
    return [{"prompt": p} for p in make_prompts(4 * size["prompts"], size["prompt_chars"])]


def bench_passband(size, tokenizer, device, bf16: bool, workdir: str) -> dict:
    from passband.trainer import GRPOConfig, GRPOTrainer
    from passband.verifiers import regex_format

    model = build_model(size, tokenizer, device)
    rows = size["group"] * size["prompts"]
    config = GRPOConfig(
        group_size=size["group"],
        prompts_per_step=size["prompts"],
        max_new_tokens=size["new_tokens"],
        rollout_batch_size=rows,
        learning_rate=1e-6,
        beta=0.0,
        max_steps=size["steps"],
        bf16=bf16,
        gradient_checkpointing=True,
        filter_zero_variance=False,
        use_curriculum=False,
        checkpoint_every=10_000,
        keep_checkpoints=1,
        output_dir=os.path.join(workdir, "passband"),
        progress=False,
        seed=0,
    )
    _reset_peak(device)
    start = time.perf_counter()
    trainer = GRPOTrainer(model, tokenizer, _dataset(size), regex_format(PATTERN), config)
    built = time.perf_counter()
    trainer.train()
    _sync(device)
    done = time.perf_counter()
    metrics = Path(config.output_dir, "metrics.jsonl").read_text().splitlines()
    lines = [json.loads(x) for x in metrics]
    steps = [line["time/step_s"] for line in lines]
    phases = sorted(
        {k for line in lines for k in line if k.startswith("time/") and k != "time/step_s"}
    )
    result = {
        "step_s": steps,
        "step_s_median_after_first": statistics.median(steps[1:] or steps),
        "tokens_per_s": statistics.median(x["throughput/tokens_per_s"] for x in lines),
        "peak_gib": _peak_gib(device),
        # where a step's time goes (medians after the first step), and the time around the steps:
        # the constructor, and train() less its steps (the last step's checkpoint, always saved)
        "phase_s_median_after_first": {
            k: statistics.median(x.get(k, 0.0) for x in (lines[1:] or lines)) for k in phases
        },
        "constructor_s": built - start,
        "train_s": done - built,
        "train_s_outside_steps": done - built - sum(steps),
    }
    del trainer, model
    return result


def _step_clock(callback_base, device, times: list[float]):
    """A TRL callback appending each step's seconds to ``times``: step i = end of step i - end
    of step i-1 (generation happens between the hooks)."""

    class _Clock(callback_base):
        def on_train_begin(self, args, state, control, **kw):
            _sync(device)
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            _sync(device)
            now = time.perf_counter()
            times.append(now - self.t)
            self.t = now

    return _Clock()


def _trl_args(config_cls, size, device, bf16: bool, workdir: str):
    """TRL's config with the sizes ``bench_passband`` uses."""
    rows = size["group"] * size["prompts"]
    return config_cls(
        output_dir=os.path.join(workdir, "trl"),
        num_generations=size["group"],
        per_device_train_batch_size=rows,
        max_completion_length=size["new_tokens"],
        learning_rate=1e-6,
        beta=0.0,
        max_steps=size["steps"],
        bf16=bf16,
        gradient_checkpointing=True,
        temperature=1.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        seed=0,
        use_cpu=device.type == "cpu",
    )


def bench_trl(size, tokenizer, device, bf16: bool, workdir: str) -> dict:
    if importlib.util.find_spec("trl") is None:
        return {"skipped": "trl is not installed"}
    import re

    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    pattern = re.compile(PATTERN, re.DOTALL)

    def reward(completions, **_):
        return [1.0 if pattern.fullmatch(c) else 0.0 for c in completions]

    times: list[float] = []
    args = _trl_args(TRLConfig, size, device, bf16, workdir)
    model = build_model(size, tokenizer, device)
    _reset_peak(device)
    start = time.perf_counter()
    trainer = TRLTrainer(
        model=model,
        reward_funcs=reward,
        args=args,
        train_dataset=Dataset.from_list(_dataset(size)),
        processing_class=tokenizer,
        callbacks=[_step_clock(TrainerCallback, device, times)],
    )
    built = time.perf_counter()
    trainer.train()
    _sync(device)
    done = time.perf_counter()
    result = {
        "step_s": times,
        "step_s_median_after_first": statistics.median(times[1:] or times),
        "constructor_s": built - start,
        "train_s": done - built,
        "train_s_outside_steps": done - built - sum(times),
        "peak_gib": _peak_gib(device),
        "version": __import__("trl").__version__,
    }
    del trainer, model
    return result


# ---------------------------------------------------------------------- report
def _table(report: dict) -> str:
    def fmt(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) else "-"

    g, p, t = report["hf_generate"], report["passband"], report["trl"]
    lines = [
        f"model: {report['params_m']:.1f}M params, device {report['device']}, "
        f"G={report['size']['group']} x {report['size']['prompts']} prompts, "
        f"{report['size']['new_tokens']} new tokens",
        f"{'what':<28}{'s/step':>10}{'peak GiB':>10}{'tokens/s':>12}",
        f"{'HF generate':<28}{'':>10}{fmt(g.get('peak_gib'), '.2f'):>10}"
        f"{fmt(g.get('tokens_per_s'), ',.0f'):>12}",
    ]
    for name, r in (("passband GRPOTrainer", p), ("TRL GRPOTrainer", t)):
        if "skipped" in r or "error" in r:
            lines.append(f"{name:<28}{r.get('skipped') or r.get('error')}")
        else:
            lines.append(
                f"{name:<28}{fmt(r['step_s_median_after_first'], '.2f'):>10}"
                f"{fmt(r.get('peak_gib'), '.2f'):>10}"
                f"{fmt(r.get('tokens_per_s'), ',.0f'):>12}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    ap.add_argument("--tiny", action="store_true", help="reduced sizes for a CPU smoke test")
    ap.add_argument("--steps", type=int, default=None, help="GRPO steps per trainer (>= 2)")
    ap.add_argument("--skip-trl", action="store_true")
    ap.add_argument("--out", default="gpu_check.json")
    args = ap.parse_args(argv)
    missing = ensure_passband()
    import torch

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    size = dict(TINY if args.tiny else FULL)
    if args.steps:
        size["steps"] = max(2, args.steps)
    bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    tokenizer = build_tokenizer(size["vocab"])
    params = sum(p.numel() for p in build_model(size, tokenizer, "meta").parameters())
    name = torch.cuda.get_device_name() if device.type == "cuda" else platform.processor()
    report = {
        "device": name or "cpu",
        "torch": torch.__version__,
        "transformers": __import__("transformers").__version__,
        "bf16": bf16,
        "gradient_checkpointing": True,
        "size": size,
        "params_m": params / 1e6,
    }
    with tempfile.TemporaryDirectory(prefix="gpu_check-") as workdir:
        for key, fn in (
            ("hf_generate", lambda: bench_generate(size, tokenizer, device, bf16)),
            (
                "passband",
                lambda: (
                    {"error": missing}
                    if missing
                    else bench_passband(size, tokenizer, device, bf16, workdir)
                ),
            ),
            (
                "trl",
                lambda: (
                    {"skipped": "--skip-trl"}
                    if args.skip_trl
                    else bench_trl(size, tokenizer, device, bf16, workdir)
                ),
            ),
        ):
            start = time.perf_counter()
            try:
                report[key] = fn()
            except Exception as exc:  # report and go on: one failing part must not hide the rest
                report[key] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            report[key]["wall_s"] = time.perf_counter() - start
            print(f"[gpu_check] {key}: {json.dumps(report[key])}", flush=True)
            Path(args.out).write_text(json.dumps(report, indent=2))  # kept if a later part hangs
            _reset_peak(device)
    print(_table(report))
    print(f"[gpu_check] JSON written to {args.out}")
    return 1 if any("error" in report[k] for k in ("hf_generate", "passband")) else 0


if __name__ == "__main__":
    sys.exit(main())
