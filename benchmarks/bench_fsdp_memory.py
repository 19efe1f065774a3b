"""What each rank holds under DDP and under FSDP: policy weights, KL reference, AdamW state.

Runs ``GRPOTrainer`` for two steps on a 27.8M-parameter Qwen2-style model (the shape
``bench_lora_memory.py`` uses), once per strategy, each as 2 gloo processes on CPU (``torchrun``),
then counts the bytes of every tensor each rank keeps between steps. For a DTensor shard it counts
the local shard only. Gradients are freed after each step (``zero_grad(set_to_none=True)``), so
they are not counted; at their peak during backward they follow the weights (sharded under FSDP).
Also reported: seconds per step on this machine (gloo on CPU, so communication costs more than it
does over NVLink).

    python benchmarks/bench_fsdp_memory.py            # ~1-2 min on 2 cores

Prints a table and a JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZE = dict(hidden=512, intermediate=1408, layers=8, heads=8, kv_heads=8, vocab=4096)
MiB = 2**20


def _local_bytes(tensors) -> int:
    total = 0
    for t in tensors:
        t = t.to_local() if hasattr(t, "to_local") else t
        total += t.numel() * t.element_size()
    return total


def _tiny_model_and_tokenizer():
    """A word-level tokenizer and a random Qwen2 of ``SIZE``, built in memory."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    vocab = {f"t{i}": i for i in range(SIZE["vocab"])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="t2"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="t0", eos_token="t1", unk_token="t2"
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=SIZE["vocab"],
            hidden_size=SIZE["hidden"],
            intermediate_size=SIZE["intermediate"],
            num_hidden_layers=SIZE["layers"],
            num_attention_heads=SIZE["heads"],
            num_key_value_heads=SIZE["kv_heads"],
            tie_word_embeddings=True,
            max_position_embeddings=256,
            pad_token_id=0,
            eos_token_id=1,
            bos_token_id=None,
        )
    )
    return model, tokenizer


def _reward(completion: str, **_) -> float:  # any variance will do: the bench measures memory
    return float(len(completion) % 3 == 0)


def _held_bytes(trainer) -> dict:
    """Bytes this rank holds of the policy, the KL reference and AdamW's state."""
    import torch

    optim = [
        v
        for state in trainer.optimizer.state.values()
        for v in state.values()
        if torch.is_tensor(v) and v.dim() > 0
    ]
    return {
        "policy": _local_bytes(trainer.model.parameters()),
        "reference": _local_bytes(trainer.reference.parameters()) if trainer.reference else 0,
        "adamw": _local_bytes(optim),
    }


def _rank_main(strategy: str, out: str) -> None:
    import torch

    from passband.trainer import GRPOConfig, GRPOTrainer

    torch.set_num_threads(1)
    model, tokenizer = _tiny_model_and_tokenizer()
    rows = [{"prompt": " ".join(f"t{3 + (7 * i + j) % 500}" for j in range(16))} for i in range(8)]
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=4,
        rollout_batch_size=8,
        max_new_tokens=16,
        beta=0.001,
        learning_rate=1e-6,
        max_steps=2,
        checkpoint_every=100,
        use_curriculum=False,
        filter_zero_variance=False,
        distributed=strategy,
        output_dir=str(Path(out).parent / "run"),  # inside the launcher's temporary folder
        progress=False,
    )
    trainer = GRPOTrainer(model, tokenizer, rows, _reward, config)
    trainer._begin()
    times = []
    for _ in range(config.max_steps):
        start = time.perf_counter()
        trainer.train_step()
        times.append(time.perf_counter() - start)
    rows_out = trainer.dist.gather([{"rank": trainer.dist.rank, **_held_bytes(trainer)}])
    if trainer.dist.is_main:
        params = sum(p.numel() for p in model.parameters())
        Path(out).write_text(
            json.dumps(
                {"strategy": strategy, "params": params, "ranks": rows_out, "step_s": times[-1]}
            )
        )
    trainer.close()
    torch.distributed.destroy_process_group()


def _launch(strategy: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
        repo = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, env.get("PYTHONPATH")]))
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            __file__,
            "--rank-main",
            strategy,
            "--out",
            str(out),
        ]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise SystemExit(f"{strategy} run failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rank-main", choices=["ddp", "fsdp"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank_main:
        return _rank_main(args.rank_main, args.out)
    results = {s: _launch(s) for s in ("ddp", "fsdp")}
    print(f"{results['ddp']['params'] / 1e6:.1f}M parameters, 2 ranks (gloo, CPU), per rank, MiB:")
    print(
        f"{'strategy':<9}{'rank':>5}{'policy':>9}{'reference':>11}{'AdamW':>8}{'total':>8}"
        f"{'s/step':>8}"
    )
    totals = {}
    for name, r in results.items():
        for row in r["ranks"]:
            total = row["policy"] + row["reference"] + row["adamw"]
            totals.setdefault(name, []).append(total)
            print(
                f"{name:<9}{row['rank']:>5}{row['policy'] / MiB:>9.1f}{row['reference'] / MiB:>11.1f}"
                f"{row['adamw'] / MiB:>8.1f}{total / MiB:>8.1f}{r['step_s']:>8.2f}"
            )
    ratio = max(totals["fsdp"]) / max(totals["ddp"])
    print(f"FSDP / DDP bytes held per rank (largest rank): {ratio:.3f}")
    print(json.dumps({"results": results, "fsdp_over_ddp": ratio}))


if __name__ == "__main__":
    main()
