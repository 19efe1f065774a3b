"""Peak memory of one GRPO update with a KL reference: full fine-tuning vs LoRA.

Full fine-tuning (what ``GRPOTrainer`` does with ``beta > 0``): the policy, a frozen deep copy as
the reference, fp32 gradients and two AdamW moments for every weight. LoRA
(``passband.trainer.lora``): the policy is base + adapters, the reference is the same module with adapters disabled, and
gradients / optimizer state exist only for the adapters.

Each mode runs in its own subprocess and does two updates, so AdamW's moments exist at the peak.
On CUDA the allocator's peak is used. On CPU, peak RSS says little (glibc keeps freed blocks, and
the libraries dominate), so the bytes malloc has handed out (glibc ``mallinfo2``) are sampled
after every phase of the update and the largest sample is the peak. The update mirrors
``GRPOTrainer._update``: reference log-probs without grad, policy log-probs with grad, clipped
surrogate + k3 KL, backward, AdamW step.

    python benchmarks/bench_lora_memory.py                # 28M-param model on CPU (~1-2 min)
    python benchmarks/bench_lora_memory.py --device cuda --size 0.5b

Prints a table, a JSON line, and the 7B estimate from the same byte counts.
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import json
import subprocess
import sys
import time

SIZES = {  # Qwen2-style shapes
    "tiny": dict(hidden=512, intermediate=1408, layers=8, heads=8, kv_heads=8, vocab=4096),
    "0.5b": dict(hidden=896, intermediate=4864, layers=24, heads=14, kv_heads=2, vocab=151936),
}


def _build(size: dict, device: str):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=size["vocab"],
        hidden_size=size["hidden"],
        intermediate_size=size["intermediate"],
        num_hidden_layers=size["layers"],
        num_attention_heads=size["heads"],
        num_key_value_heads=size["kv_heads"],
        tie_word_embeddings=True,
        max_position_embeddings=1024,
    )
    with torch.device(device):
        return Qwen2ForCausalLM(cfg)


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


class _Meter:
    """Peak of allocated bytes: CUDA allocator stats, or glibc's in-use heap + mmapped blocks."""

    def __init__(self, device: str):
        import torch

        self.device, self.peak = device, 0.0
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        else:
            self._mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
            self._mallinfo2.restype = _MallInfo2
        self.base = self.now()

    def now(self) -> float:
        import torch

        if self.device == "cuda":
            return torch.cuda.memory_allocated() / 2**20
        info = self._mallinfo2()
        return (info.uordblks + info.hblkhd) / 2**20

    def sample(self) -> None:
        import torch

        if self.device == "cuda":
            self.peak = max(self.peak, torch.cuda.max_memory_allocated() / 2**20)
        else:
            self.peak = max(self.peak, self.now())


def _child(mode: str, size_name: str, device: str, batch: int, seq: int) -> dict:
    """One mode, in this process: build, two updates, report peaks (MiB)."""
    import peft  # noqa: F401  (imported before the baseline is taken)
    import torch
    import transformers  # noqa: F401

    from passband.trainer.lora import LoraSettings, adapters_disabled, apply_lora
    from passband.trainer.losses import clipped_surrogate, k3_kl, token_logprobs

    size = SIZES[size_name]
    meter = _Meter(device)
    model = _build(size, device)
    params = sum(p.numel() for p in model.parameters())
    if mode == "lora":
        model = apply_lora(model, LoraSettings(r=16, alpha=32))
        reference = None
    else:
        reference = copy.deepcopy(model).eval().requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(trainable, lr=1e-6)
    ids = torch.randint(10, size["vocab"], (batch, seq), device=device)  # [B, T]
    adv = torch.randn(batch, device=device)  # [B]
    start = time.perf_counter()
    meter.sample()
    for _ in range(2):
        with torch.no_grad():
            if reference is None:
                with adapters_disabled(model):
                    ref_logits = model(ids).logits[:, :-1]  # [B, T-1, V]
            else:
                ref_logits = reference(ids).logits[:, :-1]
            ref_logp = token_logprobs(ref_logits.float(), ids[:, 1:])  # [B, T-1]
            meter.sample()
            del ref_logits
        logp = token_logprobs(model(ids).logits[:, :-1].float(), ids[:, 1:])  # [B, T-1]
        loss_tok, _ = clipped_surrogate(logp, logp.detach(), adv, 0.2, 0.28)
        loss = (loss_tok + 0.01 * k3_kl(logp, ref_logp)).mean()
        meter.sample()  # activations alive
        loss.backward()
        meter.sample()  # gradients alive
        optim.step()
        meter.sample()  # gradients and AdamW moments alive
        optim.zero_grad(set_to_none=True)
    return {
        "mode": mode,
        "params": params,
        "trainable": sum(p.numel() for p in trainable),
        "peak_mib": meter.peak,
        "baseline_mib": meter.base,
        "seconds": time.perf_counter() - start,
    }


def _estimate_gib(params: float, trainable: float, full: bool) -> float:
    """Bytes as the trainer holds them: fp32 weights (bf16 is autocast), fp32 grads + 2 moments.

    Activations are left out: they depend on batch and length, not on the mode.
    """
    weights = 4 * params
    if full:
        return (3 * weights + 8 * params) / 2**30  # policy, reference, grads: 4 B each; AdamW: 8 B
    return (weights + 16 * trainable) / 2**30


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--size", default="tiny", choices=sorted(SIZES))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.size, args.device, args.batch, args.seq)))
        return 0
    results = {}
    for mode in ("full", "lora"):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            mode,
            "--device",
            args.device,
            "--size",
            args.size,
            "--batch",
            str(args.batch),
            "--seq",
            str(args.seq),
        ]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        results[mode] = json.loads(out.strip().splitlines()[-1])
    full = results["full"]
    used = {m: r["peak_mib"] - r["baseline_mib"] for m, r in results.items()}
    saved = used["full"] - used["lora"]
    # 7B (Qwen2.5-7B: 7.6e9 weights; LoRA r=16 on every linear layer: ~40M adapter weights).
    est_full, est_lora = _estimate_gib(7.6e9, 0, True), _estimate_gib(7.6e9, 40.4e6, False)
    print(f"{'mode':<6}{'params':>12}{'trainable':>12}{'peak MiB':>10}{'above base':>12}")
    for m, r in results.items():
        print(
            f"{m:<6}{r['params']:>12,}{r['trainable']:>12,}{r['peak_mib']:>10.0f}{used[m]:>12.0f}"
        )
    print(
        f"saved: {saved:.0f} MiB ({saved / used['full']:.0%} of the full fine-tune's memory "
        f"above the baseline); model {full['params'] / 1e6:.1f}M params, batch {args.batch} x "
        f"{args.seq} tokens, device {args.device}"
    )
    print(
        f"7B estimate (weights/grads/AdamW/reference, no activations): full {est_full:.0f} GiB, "
        f"LoRA {est_lora:.0f} GiB, saved {est_full - est_lora:.0f} GiB"
    )
    print(
        json.dumps(
            {
                "results": results,
                "saved_mib": saved,
                "estimate_7b_gib": {"full": est_full, "lora": est_lora},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
