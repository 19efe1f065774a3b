"""HFRollout's decode loop (finished rows leave the batch) against Hugging Face ``generate`` with
the same seeded sampler and KV cache, in one process, on the real SmolLM2-135M-Instruct (prepared
by ``scripts/prepare_smollm2.py``) and GSM8K questions from ``../shared/data/gsm8k``. Prints both
times, their ratio and whether every token is the same.

    .venv/bin/python benchmarks/bench_decode.py [--prompts 4] [--group 8] [--max-new 64] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generate(backend, prompts, n, seeds):
    """What HFRollout did before its own loop: ``generate``, greedy over the seeded scores."""
    import torch

    from passband.trainer._kvcache import preallocated_cache
    from passband.trainer._seeded import _SeededSampling, row_seed

    rows = [backend.encode_prompt(p) for p in prompts for _ in range(n)]
    row_seeds = [row_seed(s, j) for s in seeds for j in range(n)]
    width, new = max(map(len, rows)), backend.max_new_tokens
    ids = torch.full((len(rows), width), backend.pad_id, dtype=torch.long)
    attn = torch.zeros_like(ids)
    for i, r in enumerate(rows):
        ids[i, width - len(r) :], attn[i, width - len(r) :] = torch.tensor(r), 1
    sampler = _SeededSampling(row_seeds, width, backend.temperature, 0, 1.0)
    with torch.no_grad():
        out = backend.model.generate(
            input_ids=ids,
            attention_mask=attn,
            max_new_tokens=new,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            pad_token_id=backend.pad_id,
            eos_token_id=sorted(backend.eos_ids),
            logits_processor=[sampler],
            past_key_values=preallocated_cache(backend.model, width + new),
        )
    return [backend._cut(x)[0] for x in out[:, width:].tolist()]


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
    times: dict[str, list[float]] = {"decode": [], "generate": []}
    same = True
    for order in (("decode", "generate"), ("generate", "decode"))[: args.repeats]:
        for name in order:
            t = time.perf_counter()
            if name == "decode":
                out = backend.rollout(prompts, args.group, seeds=seeds)
                ours = out.completion_ids
            else:
                theirs = _generate(backend, prompts, args.group, seeds)
            times[name].append(time.perf_counter() - t)
        same = same and ours == theirs
    lengths = [len(x) for x in out.completion_ids]
    ratios = [a / b for a, b in zip(times["decode"], times["generate"])]
    print(
        f"{len(out)} rows, max_new_tokens {args.max_new}: completion length mean "
        f"{sum(lengths) / len(lengths):.1f}, max {max(lengths)}, truncated {sum(out.truncated)}\n"
        f"HFRollout decode {_span(times['decode'])}s, generate {_span(times['generate'])}s: "
        f"{_span(ratios, '.2f')}x over {len(ratios)} alternating repeat(s); same tokens: {same}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
