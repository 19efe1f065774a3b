"""Starting a colocated vLLM engine and loading weights into it in place.

The parts of ``VLLMRollout`` that reach into vLLM's own objects (platform checks, the engine's
worker and model runner) and so move between vLLM versions; the backend itself
(``rollout_vllm.py``) only calls ``generate``, ``sleep``/``wake_up`` and ``reset_prefix_cache``.
vllm is imported inside the functions, never at module level.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import torch

__all__ = ["engine_dtype", "load_weights", "start_engine"]

_CPU_KV_CACHE_BYTES = 1 << 30  # CPU builds: 1 GiB of KV cache unless told otherwise


def start_engine(kwargs: dict, enforce_eager, sleep_mode: bool, extra: dict):
    """Build ``vllm.LLM`` without disturbing the caller's random state.

    vLLM seeds the global RNGs when its engine runs in-process; the trainer seeded them first
    and its sampling order must not depend on which backend it uses.
    """
    states = (random.getstate(), torch.random.get_rng_state())
    from vllm import LLM
    from vllm.platforms import current_platform

    if sleep_mode and not current_platform.is_sleep_mode_available():
        raise ValueError(
            "VLLMRollout: sleep_mode = True needs a CUDA/ROCm build of vLLM; this "
            f"one runs on {current_platform.device_type!r}: set sleep_mode = false"
        )
    if current_platform.is_cpu() and "kv_cache_memory_bytes" not in kwargs:
        kwargs["kv_cache_memory_bytes"] = _CPU_KV_CACHE_BYTES  # else it reserves a RAM share
    if enforce_eager is None:  # CUDA graphs pay off on GPUs; on CPU compiling only costs time
        enforce_eager = current_platform.is_cpu()
    try:
        return LLM(enforce_eager=enforce_eager, **{**kwargs, **extra})
    finally:
        random.setstate(states[0])
        torch.random.set_rng_state(states[1])


def engine_dtype(model) -> str:
    """The engine's dtype: the model's own, except fp32 master weights on a GPU.

    The trainer keeps fp32 weights and trains under bf16 autocast, so on CUDA the engine samples
    in bf16 (half the memory, the usual setup); ``tis_weights`` corrects the small mismatch.
    On CPU the engine keeps fp32, which makes greedy outputs match HF generate exactly.
    """
    if isinstance(model, (str, os.PathLike)):
        return "auto"
    param = next(model.parameters())
    if param.dtype == torch.float32 and param.device.type == "cuda":
        return "bfloat16"
    return str(param.dtype).replace("torch.", "")


def load_weights(llm, weights: Iterator[tuple[str, torch.Tensor]]) -> None:
    """In-place weight update through the engine internals, newest API first.

    vLLM >= 0.12 (CPU and CUDA builds): ``worker.reload_weights(weights_iterator=...)``, which
    also handles weights the CPU build repacked at load time (``model.load_weights`` fails
    there). Older CUDA builds: ``model_runner.model.load_weights(weights)`` (TRL's path).
    """
    executor = llm.llm_engine.model_executor
    worker = getattr(executor.driver_worker, "worker", executor.driver_worker)
    runner = getattr(worker, "model_runner", None)
    if hasattr(worker, "reload_weights"):
        worker.reload_weights(weights_iterator=weights)
    elif runner is not None and hasattr(runner, "reload_weights"):
        runner.reload_weights(weights_iterator=weights)
    elif runner is not None and hasattr(runner, "model"):
        runner.model.load_weights(weights)
    else:
        import vllm

        raise RuntimeError(
            f"VLLMRollout: vLLM {vllm.__version__} exposes no in-place weight "
            "loading path that passband knows; use vLLM 0.10 - 0.32"
        )
