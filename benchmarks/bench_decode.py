"""HFRollout's decode loop (finished rows leave the batch) against Hugging Face ``generate`` with
the same seeded sampler and KV cache, in one process, on the real SmolLM2-135M-Instruct (prepared
by ``scripts/prepare_smollm2.py``) and GSM8K questions from ``../shared/data/gsm8k``. Prints both
times, their ratio and whether every token is the same, and the time of stock ``generate`` (its
default cache and sampler, every prompt repeated G times, as TRL calls it) for the same rows.

    .venv/bin/python benchmarks/bench_decode.py [--prompts 4] [--group 8] [--max-new 64] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _span(values: list[float], fmt: str = ".1f") -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if lo == hi else f"{lo:{fmt}}-{hi:{fmt}}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--max-new", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2, choices=(1, 2))
    parser.add_argument("--model", default=str(ROOT / "models" / "SmolLM2-135M-Instruct"))
    args = parser.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from passband.trainer import HFRollout
    from passband.trainer._decode import generate_reference

    torch.set_num_threads(2)
    model = AutoModelForCausalLM.from_pretrained(args.model)
    tok = AutoTokenizer.from_pretrained(args.model)
    path = ROOT.parent / "shared" / "data" / "gsm8k" / "train.jsonl"
    rows = [json.loads(line) for line in path.open()][: args.prompts]
    prompts = [
        [{"role": "user", "content": r["question"] + "\nGive the final answer after ####."}]
        for r in rows
    ]
    seeds = list(range(len(prompts)))
    backend = HFRollout(model, tok, max_new_tokens=args.max_new, temperature=1.0, batch_size=256)
    backend.rollout(prompts[:1], 2, seeds=[0])  # warm-up: first-call costs out of both clocks
    times: dict[str, list[float]] = {"decode": [], "generate": [], "stock": []}
    same = True
    for order in (("decode", "generate", "stock"), ("stock", "generate", "decode"))[: args.repeats]:
        for name in order:
            t = time.perf_counter()
            if name == "decode":
                out = backend.rollout(prompts, args.group, seeds=seeds)
                ours = out.completion_ids
            elif name == "generate":
                theirs = generate_reference(backend, prompts, args.group, seeds)
            else:
                _stock_generate(backend, prompts, args.group)
            times[name].append(time.perf_counter() - t)
        same = same and ours == theirs
    lengths = [len(x) for x in out.completion_ids]
    ratios = [a / b for a, b in zip(times["decode"], times["generate"])]
    print(
        f"{len(out)} rows, max_new_tokens {args.max_new}: completion length mean "
        f"{sum(lengths) / len(lengths):.1f}, max {max(lengths)}, truncated {sum(out.truncated)}\n"
        f"HFRollout decode {_span(times['decode'])}s, generate {_span(times['generate'])}s: "
        f"{_span(ratios, '.2f')}x over {len(ratios)} alternating repeat(s); same tokens: {same}\n"
        f"stock generate (default cache) {_span(times['stock'])}s: HFRollout decode "
        f"{_span([a / b for a, b in zip(times['decode'], times['stock'])], '.2f')}x of it"
    )
    return 0


def _stock_generate(backend, prompts: list, n: int) -> None:
    """``generate`` as TRL calls it: every prompt G times in one left-padded batch, its default
    cache, ``do_sample`` at the same temperature, EOS as ``HFRollout`` stops."""
    from passband.trainer._decode import left_pad

    ids, attn = left_pad(
        [backend.encode_prompt(p) for p in prompts for _ in range(n)], backend.pad_id
    )
    backend.model.generate(
        input_ids=ids,
        attention_mask=attn,
        max_new_tokens=backend.max_new_tokens,
        do_sample=True,
        temperature=backend.temperature,
        top_p=1.0,
        top_k=0,
        pad_token_id=backend.pad_id,
        eos_token_id=sorted(backend.eos_ids),
    )


if __name__ == "__main__":
    raise SystemExit(main())
