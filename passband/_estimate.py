"""Back-of-envelope memory and time per GRPO step, with the arithmetic shown (``passband doctor``).

The model is the embedded trainer as written: fp32 master weights with bf16 autocast on GPU,
AdamW, a frozen fp32 copy of the policy as reference when ``beta > 0``, HF ``generate`` for
rollouts, one device. The numbers are bounds from first principles, not measurements:

- memory: weights + gradients + AdamW moments + reference + the larger of activations (training
  micro-batch, incl. fp32 logits over the vocabulary) and the KV cache (one generate batch);
- generation: each decode step reads every weight and the batch's KV cache once, so it is
  memory-bandwidth bound: ``t_step = bytes / bandwidth`` (or FLOPs / peak, whichever is larger);
- training: ``6 * N * tokens`` FLOPs per policy pass (forward 2N + backward 4N per token), plus
  ``2 * N * tokens`` per extra forward (reference, old log-probs, recomputation), at an assumed
  model FLOPs utilisation.
Everything that is assumed is listed in ``Estimate.assumptions``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Hardware", "HARDWARE", "DEVICES", "hardware", "ModelShape", "Workload", "Estimate"]
__all__ += ["estimate", "shape_from_config", "shape_from_params", "parse_count", "format_estimate"]
__all__ += ["positions_from_config", "context_warning"]

GB = 1e9


@dataclass(frozen=True)
class Hardware:
    name: str
    memory_gb: float  # device memory
    bandwidth_tb_s: float  # memory bandwidth
    tflops: float  # dense peak for the training dtype (bf16 on GPU, fp32 on CPU)
    mfu: float  # model FLOPs utilisation assumed for training and prefill


def _cpu() -> Hardware:
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GB
    except (ValueError, OSError, AttributeError):
        ram = 16.0
    cores = os.cpu_count() or 1
    # ~50 GFLOP/s fp32 per core with AVX2 FMA; ~20 GB/s for a desktop/server memory channel pair.
    return Hardware(f"CPU ({cores} cores, {ram:.0f} GB RAM; rough)", ram, 0.02, 0.05 * cores, 0.3)


HARDWARE = {  # vendor datasheet numbers (SXM parts, dense bf16 without sparsity)
    "h200": Hardware("NVIDIA H200", 141, 4.8, 989, 0.4),
    "h100": Hardware("NVIDIA H100 SXM", 80, 3.35, 989, 0.4),
    "a100": Hardware("NVIDIA A100 80GB SXM", 80, 2.04, 312, 0.4),
}
DEVICES = (*HARDWARE, "cpu")  # "cpu" is measured from this machine at call time


def hardware(name: str) -> Hardware:
    """Datasheet numbers for a GPU name, or this machine's RAM and cores for ``cpu``."""
    return _cpu() if name == "cpu" else HARDWARE[name]


@dataclass(frozen=True)
class ModelShape:
    params: float
    layers: int
    hidden: int
    vocab: int
    kv_dim: int  # key/value width per layer (kv heads x head dim)
    source: str  # where these numbers come from


def parse_count(text: str) -> float:
    """'7e9', '7B', '1.5b', '500M', '7000000000' -> parameter count."""
    raw = str(text).strip().lower().replace("_", "")
    scale = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}.get(raw[-1:], 1.0)
    number = float(raw[:-1] if scale != 1.0 else raw)
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"parameter count {text!r} must be a positive number such as 7e9 or 1.5B")
    return number * scale


def shape_from_params(params: float, vocab: int = 32000) -> ModelShape:
    """Guess a dense decoder's shape from its size: N = 12 L d^2 with d = 128 L (Llama-like)."""
    layers = max(2, round((params / (12 * 128**2)) ** (1 / 3)))
    hidden = max(64, round(math.sqrt(params / (12 * layers)) / 64) * 64)
    return ModelShape(
        params,
        layers,
        hidden,
        vocab,
        hidden,
        f"--params {params:.3g} (shape guessed: {layers} layers, hidden {hidden}, "
        f"vocab {vocab}, no grouped-query attention)",
    )


def _pick(cfg: dict, *names, default=None):
    for name in names:
        if cfg.get(name) is not None:
            return cfg[name]
    return default


def shape_from_config(path: str | Path) -> ModelShape:
    """Exact dense-decoder parameter count from a Hugging Face ``config.json``."""
    path = Path(path)
    file = path / "config.json" if path.is_dir() else path
    cfg = json.loads(file.read_text())
    cfg = cfg.get("text_config", cfg)
    h = int(_pick(cfg, "hidden_size", "n_embd", "d_model"))
    layers = int(_pick(cfg, "num_hidden_layers", "n_layer", "num_layers"))
    heads = int(_pick(cfg, "num_attention_heads", "n_head"))
    kv_heads = int(_pick(cfg, "num_key_value_heads", default=heads))
    head_dim = int(_pick(cfg, "head_dim", default=h // heads))
    ff = int(_pick(cfg, "intermediate_size", "n_inner", "ffn_dim", default=4 * h))
    vocab = int(_pick(cfg, "vocab_size", default=32000))
    gated = str(_pick(cfg, "hidden_act", "hidden_activation", default="")).lower() in (
        "silu",
        "swish",
        "gelu_pytorch_tanh",
    )
    attention = h * heads * head_dim * 2 + 2 * h * kv_heads * head_dim  # q, o + k, v
    mlp = (3 if gated else 2) * h * ff
    embeddings = vocab * h * (1 if cfg.get("tie_word_embeddings", True) else 2)
    params = layers * (attention + mlp + 2 * h) + embeddings + h
    if cfg.get("model_type") == "qwen2" or cfg.get("attention_bias"):  # q, k, v biases
        params += layers * (heads + 2 * kv_heads) * head_dim
    if "n_positions" in cfg:  # GPT-2 family: learned positions, biases everywhere, LayerNorm bias
        params += cfg["n_positions"] * h + layers * (3 * h + h + ff + h + 2 * h) + h
    return ModelShape(
        float(params),
        layers,
        h,
        vocab,
        kv_heads * head_dim,
        f"{file} ({layers} layers, hidden {h}, vocab {vocab}, kv width "
        f"{kv_heads * head_dim}{', gated MLP' if gated else ''})",
    )


def positions_from_config(path: str | Path) -> int | None:
    """Positions (prompt + completion tokens) a model attends over, from its ``config.json``; the
    same fields, in the same order, as the trainer's check (``passband.trainer._data``)."""
    path = Path(path)
    file = path / "config.json" if path.is_dir() else path
    try:
        cfg = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    cfg = cfg.get("text_config", cfg)
    value = _pick(
        cfg, "max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"
    )
    return value if isinstance(value, int) and value > 0 else None


def context_warning(positions: int | None, max_new_tokens: int, prompt_tokens: int) -> str | None:
    """Why prompt + completion cannot fit the model's positions, or None when they can."""
    if positions is None:
        return None
    if max_new_tokens >= positions:
        return (
            f"max_new_tokens = {max_new_tokens} is not below the model's {positions} positions "
            "(prompt + completion share them): training refuses this; set max_new_tokens to "
            f"at most {positions - 1 - prompt_tokens} for {prompt_tokens}-token prompts"
        )
    if prompt_tokens + max_new_tokens > positions:
        return (
            f"prompts of {prompt_tokens} tokens + max_new_tokens = {max_new_tokens} exceed the "
            f"model's {positions} positions: longer prompts are refused (or cut with "
            'prompt_overflow = "truncate"); prompts may have at most '
            f"{positions - max_new_tokens} tokens"
        )
    return None


@dataclass(frozen=True)
class Workload:
    """The parts of a GRPO config that drive cost."""

    prompts_per_step: int = 8
    """Groups per optimizer step, as ``GRPOConfig.prompts_per_step``."""
    group_size: int = 8
    """Completions per prompt, as ``GRPOConfig.group_size``."""
    max_new_tokens: int = 256
    """Completion length, as ``GRPOConfig.max_new_tokens`` (every completion assumed this long)."""
    prompt_tokens: int = 256
    """Prompt length in tokens."""
    rollout_batch_size: int = 64
    """Sequences per generate call: ``GRPOConfig.rollout_batch_size`` as the trainer resolves it
    (``passband.trainer._refill.rollout_rows``; ``passband doctor`` passes that)."""
    max_oversample: float = 1.0
    """Roll-out budget, as ``GRPOConfig.max_oversample``: a hard step rolls out this many times."""
    grad_accum: int = 1
    """Micro-batches per optimizer step, as ``GRPOConfig.grad_accum``."""
    mu: int = 1
    """Inner iterations per batch, as ``GRPOConfig.mu``."""
    beta: float = 0.0
    """KL weight, as ``GRPOConfig.beta``; > 0 adds the reference model."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass, as ``GRPOConfig.gradient_checkpointing``."""
    gpus: int = 1
    """Processes (one per GPU); the batch is split across them."""
    sharded: bool = False
    """FSDP: weights, gradients, AdamW state (and reference) split too."""

    @property
    def seqs_per_gpu(self) -> int:  # trained
        return math.ceil(self.prompts_per_step * self.group_size / self.gpus)

    @property
    def rolled_per_gpu(self) -> int:  # rolled out, the whole budget (a hard step)
        rolled = math.floor(self.prompts_per_step * self.max_oversample) * self.group_size
        return max(self.seqs_per_gpu, math.ceil(rolled / self.gpus))


@dataclass
class Estimate:
    memory: list[tuple[str, float, str]] = field(default_factory=list)  # (item, bytes, how)
    time: list[tuple[str, float, str]] = field(default_factory=list)  # (item, seconds, how)
    peak_bytes: float = 0.0
    step_seconds: float = 0.0
    assumptions: list[str] = field(default_factory=list)


def _memory(shape: ModelShape, w: Workload, est: Estimate) -> None:
    n = shape.params
    k = w.gpus if w.sharded else 1  # FSDP keeps 1/k of every persistent tensor on each GPU
    per = f" / {k} GPUs (FSDP)" if k > 1 else ""
    est.memory += [
        (
            "policy weights",
            4 * n / k,
            f"4 B x {n:.3g} params{per} (fp32 weights; bf16 autocast on GPU)",
        ),
        ("gradients", 4 * n / k, f"4 B x {n:.3g}{per}"),
        ("AdamW moments", 8 * n / k, f"2 x 4 B x {n:.3g}{per} (exp_avg, exp_avg_sq)"),
    ]
    if w.beta > 0:
        est.memory.append(
            ("reference model", 4 * n / k, f"beta={w.beta:g} > 0: frozen fp32 copy{per}")
        )
    seq = w.prompt_tokens + w.max_new_tokens
    micro = math.ceil(w.seqs_per_gpu / w.grad_accum)
    per_token = (2 if w.gradient_checkpointing else 34) * shape.hidden * shape.layers
    logits = 8 * shape.vocab  # fp32 logits + log-softmax
    act = micro * seq * (per_token + logits)
    est.memory.append(
        (
            "activations (training)",
            act,
            f"{micro} seqs x {seq} tokens x ({'2' if w.gradient_checkpointing else '34'} B "
            f"x {shape.hidden} hidden x {shape.layers} layers + 8 B x {shape.vocab} vocab)",
        )
    )
    batch = min(w.rollout_batch_size, w.rolled_per_gpu)
    kv = batch * seq * shape.layers * 2 * shape.kv_dim * 4
    if k > 1:  # the rollout runs on gathered weights (bf16 under mixed precision)
        kv += 2 * n
    est.memory.append(
        (
            "KV cache (generation)",
            kv,
            f"{batch} seqs x {seq} tokens x {shape.layers} "
            f"layers x 2 (K,V) x {shape.kv_dim} x 4 B"
            + (f" + 2 B x {n:.3g} weights gathered for the rollout" if k > 1 else ""),
        )
    )
    static = sum(b for item, b, _ in est.memory if not item.startswith(("activations", "KV")))
    est.peak_bytes = static + max(act, kv)


def _time(shape: ModelShape, w: Workload, hw: Hardware, est: Estimate) -> None:
    n, seqs = shape.params, w.seqs_per_gpu  # each GPU rolls out and trains its share
    batch = min(w.rollout_batch_size, w.rolled_per_gpu)
    rounds = math.ceil(w.rolled_per_gpu / batch)
    kv_read = batch * (w.prompt_tokens + w.max_new_tokens / 2) * shape.layers * 2 * shape.kv_dim * 4
    bytes_step = 4 * n + kv_read
    t_decode = max(bytes_step / (hw.bandwidth_tb_s * 1e12), 2 * n * batch / (hw.tflops * 1e12))
    t_prefill = 2 * n * batch * w.prompt_tokens / (hw.tflops * 1e12 * hw.mfu)
    gen = rounds * (w.max_new_tokens * t_decode + t_prefill)
    est.time.append(
        (
            "generation",
            gen,
            f"{rounds} generate call(s) x ({w.max_new_tokens} decode "
            f"steps x {_seconds(t_decode)} + prefill {_seconds(t_prefill)}); a decode "
            f"step reads {bytes_step / GB:.2f} GB at {hw.bandwidth_tb_s:g} TB/s",
        )
    )
    tokens = seqs * (w.prompt_tokens + w.max_new_tokens)
    passes = 6 * w.mu + 2 * (w.beta > 0) + 2 * (w.mu > 1) + 2 * w.mu * w.gradient_checkpointing
    flops = passes * n * tokens
    train = flops / (hw.tflops * 1e12 * hw.mfu)
    est.time.append(
        (
            "training",
            train,
            f"{passes} x N x tokens = {passes} x {n:.3g} x {tokens} = "
            f"{flops:.3g} FLOPs at {hw.tflops:g} TFLOP/s x {hw.mfu:.0%} MFU",
        )
    )
    est.step_seconds = gen + train


def estimate(shape: ModelShape, workload: Workload, hw: Hardware) -> Estimate:
    """Memory (bytes) and time (seconds) per GRPO step, each line with how it was computed."""
    est = Estimate()
    _memory(shape, workload, est)
    _time(shape, workload, hw, est)
    est.assumptions = [
        f"prompts of {workload.prompt_tokens} tokens; every completion runs to max_new_tokens "
        f"({workload.max_new_tokens}), so time is an upper bound for the tokens and a lower bound "
        "for the hardware (roofline, no framework overhead: HF generate adds per-step latency)",
        "activations: ~34 B per token per hidden unit per layer (Korthikanti et al. 2022, "
        "flash/SDPA attention), ~2 B with gradient checkpointing",
        (
            f"{workload.gpus} GPUs, {'FSDP' if workload.sharded else 'DDP'}: each rolls out and "
            "trains 1/N of the batch; communication time is not included"
            if workload.gpus > 1
            else "one device, no sharding"
        )
        + "; verifier time and refill rounds are not included",
    ]
    return est


def _advice(est: Estimate, hw: Hardware, w: Workload, params: float) -> str:
    budget = hw.memory_gb * GB * 0.9  # allocator fragmentation and CUDA context
    if est.peak_bytes <= budget:
        share = est.peak_bytes / (hw.memory_gb * GB)
        return f"fits: {est.peak_bytes / GB:.1f} GB of {hw.memory_gb:.0f} GB ({share:.0%})"
    items = {item: b for item, b, _ in est.memory}
    static = sum(b for item, b in items.items() if not item.startswith(("activations", "KV")))
    head = f"DOES NOT FIT: {est.peak_bytes / GB:.1f} GB needed, {hw.memory_gb:.0f} GB available"
    if static > budget:
        ref = ", beta = 0 (no reference copy)" if "reference model" in items else ""
        total = static * (w.gpus if w.sharded else 1)
        need = math.ceil(total / (budget * 0.6))  # leave ~40% for activations and the rollout
        gathered = 2 * params  # the bf16 weights every GPU holds while it generates
        rollout = (
            ""
            if gathered < budget * 0.8
            else f"; but the rollout gathers the bf16 weights ({gathered / GB:.0f} GB) on every "
            "GPU, more than one holds: this size needs tensor-parallel generation, which "
            "passband does not do"
        )
        return (
            f"{head}; weights, gradients and optimizer states alone need {static / GB:.1f} GB: "
            f'use LoRA (peft){ref}, or shard them with FSDP (distributed = "fsdp") over '
            f">= {need} GPUs (--gpus {need}){rollout}"
        )
    seqs = w.seqs_per_gpu
    per_seq = items["activations (training)"] / math.ceil(seqs / w.grad_accum)
    fits = int((budget - static) // per_seq)
    ckpt = "" if w.gradient_checkpointing else " or gradient_checkpointing = true"  # not if on
    if items["activations (training)"] >= items["KV cache (generation)"] and fits >= 1:
        return (
            f"{head}; activations dominate: set grad_accum >= {math.ceil(seqs / fits)} "
            f"({fits} sequences per micro-batch fit){ckpt}"
        )
    return f"{head}; reduce rollout_batch_size or max_new_tokens{ckpt.replace(' or', ', or')}"


def format_estimate(est: Estimate, shape: ModelShape, hw: Hardware, workload: Workload) -> str:
    """The estimate as text, every number followed by how it was computed."""
    from passband.trainer._recommended import count_text

    lines = [
        f"model:    {count_text(shape.params)} parameters, from {shape.source}",
        f"hardware: {hw.name}: {hw.memory_gb:.0f} GB, {hw.bandwidth_tb_s:g} TB/s, "
        f"{hw.tflops:g} TFLOP/s peak, {hw.mfu:.0%} MFU assumed",
        "",
        "memory",
    ]
    width = max(len(item) for item, _, _ in est.memory + est.time)
    lines += [f"  {item:<{width}}  {b / GB:8.2f} GB   {how}" for item, b, how in est.memory]
    lines.append(
        f"  {'peak':<{width}}  {est.peak_bytes / GB:8.2f} GB   static items + the larger of "
        "activations and KV cache (they are not alive at the same time)"
    )
    lines += [f"  -> {_advice(est, hw, workload, shape.params)}", "", "time per step"]
    lines += [f"  {item:<{width}}  {_seconds(s):>11}   {how}" for item, s, how in est.time]
    lines.append(f"  {'total':<{width}}  {_seconds(est.step_seconds):>11}")
    lines += ["", "assumptions"] + [f"  - {a}" for a in est.assumptions]
    return "\n".join(lines)


def _seconds(s: float) -> str:
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.1f} s" if s < 600 else f"{s / 60:.1f} min"
