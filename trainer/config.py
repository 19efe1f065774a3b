"""``GRPOConfig``: every knob of the GRPO loop in one frozen, validated object.

Hard errors (a value that cannot work) raise ``ConfigError`` (a ``ValueError``) at construction
and name the field, the bad value and the allowed range: one row of ``_RULES`` per rule, after
the exact types (``_fieldtypes``). Values that work but that practitioners avoid produce a
``UserWarning`` that says what will go wrong; the same table (``RECOMMENDED``, kept in
``_recommended``) feeds ``passband doctor``. No torch import here: the config is read by the CLI
before torch loads.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from passband.curriculum.posterior import check_band
from passband.errors import ConfigError, UnknownSettingError, unknown_names
from passband.sandbox._worker_limits import (
    TIMEOUT_ALLOWED,
    WORKERS_ALLOWED,
    timeout_ok,
    workers_ok,
)
from passband.trainer._fieldtypes import check_types
from passband.trainer._recommended import RECOMMENDED, check_recommended
from passband.trainer.registry import ADVANTAGE_REGISTRY, AGGREGATION_REGISTRY

__all__ = ["GRPOConfig", "RECOMMENDED", "check_recommended"]

LR_SCHEDULES = ("constant", "cosine", "linear")
ROLLOUT_BACKENDS = ("hf", "vllm")
DISTRIBUTED = ("auto", "ddp", "fsdp")


@dataclass(frozen=True)
class GRPOConfig:
    """Settings of one GRPO run. Field names are what users type in TOML ``[trainer]``."""

    def __new__(cls, *args, **kwargs):
        """A misspelt keyword is a ``ConfigError`` (also a ``TypeError``) with the closest name,
        like an unknown TOML key, not the dataclass's bare ``TypeError``."""
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = set(kwargs) - set(valid)
        if unknown:
            raise UnknownSettingError(
                f"GRPOConfig: {unknown_names('trainer setting', unknown, valid)}"
            )
        return super().__new__(cls)

    # --- sampling -------------------------------------------------------------------------
    group_size: int = 8
    """G: completions sampled per prompt."""
    prompts_per_step: int = 64
    """Groups (prompts) trained on per step, over all ranks."""
    max_new_tokens: int = 256
    """Completion length cap; longer ones are "truncated"."""
    temperature: float = 1.0
    """Sampling temperature (training log-probs use it too)."""
    top_p: float = 1.0
    """Nucleus sampling; 1.0 = off."""
    top_k: int = 0
    """Top-k sampling; 0 = off."""
    stop: tuple[str, ...] = ()
    """Extra stop strings besides EOS (kept in the completion)."""
    rollout_batch_size: int | None = None
    """Sequences per decode call; also the unit handed to one rank (see trainer/_distributed.py).
    ``None`` (default): in one process the step's whole roll-out budget (``prompts_per_step`` x G
    plus the refill margin), at most 256 rows, so a round is one call; with N ranks
    ``prompts_per_step`` x G split evenly over them (``_refill.rollout_rows``). ``HFRollout``
    halves it on a CUDA out-of-memory error and says so."""
    # --- objective -----------------------------------------------------------------------
    learning_rate: float = 1e-6
    """AdamW peak learning rate."""
    beta: float = 0.001
    """k3 KL weight (typical 0.001 - 0.01); 0 skips the reference model entirely (no copy, no
    forward), as DAPO / Dr. GRPO do."""
    clip_low: float = 0.2
    """eps_low: the ratio floor is 1 - clip_low."""
    clip_high: float = 0.28
    """eps_high: the ratio ceiling is 1 + clip_high (clip-higher)."""
    loss_aggregation: str = "token_mean"
    """token_mean | seq_mean_token_mean | constant_norm, or a name registered with
    ``passband.trainer.register_aggregation``."""
    advantage: str = "group"
    """group (mean/std) | no_std (Dr. GRPO) | batch_std, or a name registered with
    ``passband.trainer.register_advantage``."""
    mu: int = 1
    """Inner iterations per batch; >1 recomputes old log-probs."""
    mask_truncated: bool = False
    """Exclude completions that hit max_new_tokens from the loss."""
    filter_zero_variance: bool = True
    """Drop groups whose rewards are all equal."""
    weigh_short_batches: bool = False
    """True: a step that trains fewer sequences than prompts_per_step x group_size (groups
    dropped for zero variance and not refilled) is weighed by its share: the loss's normaliser
    counts the planned batch, so fewer informative groups make a smaller step, as TRL's token mean
    does with the zero-advantage groups it keeps. False (default): every step is normalised by
    what it trained. Measured (BENCHMARKS.md): true gained 0.9 points on the 200-step spread task
    but lost 6.2 on the real model's 8-step run, below TRL, so it is off."""
    max_refill_rounds: int = 2
    """Extra rollout rounds to replace dropped groups."""
    max_oversample: float = 1.25
    """A step's roll-out budget: at most this many times ``prompts_per_step`` prompts over all its
    rounds (the first round oversamples by the share of zero-variance groups the sampler predicts,
    up to it; ``trainer/_refill.py``). Measured on 2 CPU cores (BENCHMARKS.md), 1.25 against 1.5:
    fewer completions to reach TRL's accuracy on the spread task (0.50x against 0.63x of TRL's)
    and faster steps on the long task. On a GPU, where a wider decode costs little, more may pay."""
    # --- optimisation --------------------------------------------------------------------
    warmup_steps: int = 0
    """Linear warm-up steps."""
    lr_schedule: str = "constant"
    """After warm-up: constant | cosine | linear (both to 0 at max_steps; linear is TRL's / HF
    Trainer's default)."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    max_grad_norm: float = 1.0
    """Gradient clipping; 0 = off."""
    grad_accum: int = 1
    """Micro-batches per optimizer step (memory, not math)."""
    bf16: bool = True
    """bf16 autocast where supported (CUDA with bf16); off on CPU."""
    gradient_checkpointing: bool = False
    """Trade compute for activation memory."""
    pretrained: bool = True
    """The model is pretrained (enables the learning-rate warning)."""
    disable_dropout: bool = True
    """Switch the model's dropout off (in place) before training: with it on, the update scores
    completions with another distribution than the one that sampled them."""
    # --- curriculum and scoring ----------------------------------------------------------
    use_curriculum: bool = True
    """Sample with the pass-rate curriculum; false = uniform sampling."""
    band: tuple[float, float] = (0.2, 0.8)
    """Deprecated: set ``curriculum.band`` (``[curriculum] band``); kept equal to it."""
    curriculum: Any = None
    """A ``CurriculumConfig``, or a dict of its fields (TOML ``[curriculum]``); None = defaults.
    It holds the band."""
    verifier_timeout: float = 10.0
    """Seconds per completion before a verdict is "timeout"."""
    verifier_workers: int | None = None
    """Verifier processes; None = library default."""
    # --- run -----------------------------------------------------------------------------
    max_steps: int = 100
    """Optimizer steps (outer GRPO steps)."""
    seed: int = 0
    """Seeds Python, numpy, torch and the sampler."""
    output_dir: str = "runs/grpo"
    """Where metrics, checkpoints and config.json go."""
    checkpoint_every: int = 50
    """Steps between checkpoints (the last step is always saved)."""
    keep_checkpoints: int = 2
    """Newest checkpoints kept on disk."""
    resume: bool = False
    """Continue from the newest checkpoint in output_dir."""
    overwrite: bool = False
    """Replace a previous run in output_dir (else refused)."""
    skip_bad_rows: bool = False
    """Drop unusable dataset rows (counted) instead of refusing the dataset."""
    prompt_overflow: str = "error"
    """A prompt longer than the model's positions allow after max_new_tokens: error | truncate
    (keep its last tokens)."""
    tensorboard: bool = False
    """Also log scalars to output_dir/tensorboard."""
    progress: bool = True
    """Show a tqdm progress bar."""
    # --- rollout engine ------------------------------------------------------------------
    rollout_backend: str = "hf"
    """hf (generate on the policy) | vllm (colocated engine)."""
    vllm_gpu_memory_utilization: float = 0.3
    """GPU share vLLM may take; the rest trains."""
    vllm_sleep_mode: bool = False
    """Free vLLM's GPU memory during updates (CUDA builds)."""
    tis_cap: float = 2.0
    """Truncated importance-sampling cap for vLLM; 0 = off."""
    # --- several processes (torchrun / accelerate launch) ---------------------------------
    distributed: str = "auto"
    """ddp (replicate) | fsdp (shard params, grads, AdamW state) | auto (fsdp under
    ``accelerate launch --use_fsdp``, else ddp)."""
    # --- LoRA (peft) ---------------------------------------------------------------------
    lora_r: int = 0
    """Adapter rank; 0 = full fine-tuning."""
    lora_alpha: float = 32.0
    """Adapter scale = lora_alpha / lora_r."""
    lora_target_modules: tuple[str, ...] = ("all-linear",)
    """peft module names the adapters attach to."""

    def __post_init__(self) -> None:
        check_types(self, "GRPOConfig")  # exact types first: "false" is not a boolean
        for name in ("stop", "lora_target_modules"):  # a bare string is one item, not letters
            v = getattr(self, name)
            object.__setattr__(self, name, (v,) if isinstance(v, str) else tuple(v))
        object.__setattr__(self, "band", check_band(self.band, owner="GRPOConfig"))
        _validate(self)
        _resolve_curriculum(self)
        check_recommended(self)  # the warning points at the user's line

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> GRPOConfig:
        """Build from a plain dict (TOML table); unknown keys raise with the list of valid ones."""
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(valid))
        if unknown:
            raise ConfigError(unknown_names("trainer setting", unknown, valid))
        return cls(**values)

    @classmethod
    def coerce(cls, config: GRPOConfig | Mapping[str, Any] | None) -> GRPOConfig:
        """A ``GRPOConfig`` from itself, a mapping of its fields (``{"max_steps": 10}``) or None."""
        if config is None or isinstance(config, cls):
            return config if config is not None else cls()
        if isinstance(config, Mapping):
            return cls.from_dict(dict(config))
        raise TypeError(
            f"config must be a GRPOConfig or a mapping of its fields, e.g. "
            f"{{'max_steps': 10}}; got {type(config).__name__}"
        )

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["stop"], d["band"] = list(self.stop), list(self.band)
        d["lora_target_modules"] = list(self.lora_target_modules)
        d["curriculum"] = {
            k: list(v) if isinstance(v, tuple) else v
            for k, v in dataclasses.asdict(self.curriculum).items()
        }
        return d

    def replace(self, **changes: Any) -> GRPOConfig:
        return dataclasses.replace(self, **changes)

    def lr_factor(self, step: int) -> float:
        """Learning-rate multiplier after ``step`` scheduler steps: linear warm-up, then
        constant, or cosine / linear to 0 at ``max_steps`` (a ``LambdaLR`` function)."""
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        progress = min((step - self.warmup_steps) / max(1, self.max_steps - self.warmup_steps), 1.0)
        if self.lr_schedule == "cosine":
            return 0.5 * (1.0 + math.cos(math.pi * progress))
        if self.lr_schedule == "linear":
            return 1.0 - progress
        return 1.0


# ``__new__`` takes ``*args, **kwargs``; help(), IDEs and autodoc show the fields' signature
_INIT = inspect.signature(GRPOConfig.__init__)
GRPOConfig.__signature__ = _INIT.replace(parameters=list(_INIT.parameters.values())[1:])


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _at_least(low: int) -> Callable[[Any, Any], bool]:
    return lambda v, c: _is_int(v) and v >= low


def _num(test: Callable[[float], bool]) -> Callable[[Any, Any], bool]:
    return lambda v, c: _is_num(v) and test(v)


def _in(options: Any) -> Callable[[Any, Any], bool]:
    return lambda v, c: v in options


def _registered(registry: Any, register: str) -> Callable[[], str]:
    """The allowed names, read when the error is raised: registering adds to them."""
    return lambda: (
        f"one of {', '.join(registry.names())} (or a name registered with "
        f"passband.trainer.{register})"
    )


def _strings(v: Any, c: Any) -> bool:
    return all(isinstance(s, str) and s for s in v)


# (field, test(value, config), allowed values): checked in this order after the exact types, and
# the first that fails raises ConfigError naming the field, its value and what is allowed.
# ``allowed`` is a function where the range grows (the registries).
_RULES: tuple[tuple[str, Callable[[Any, Any], bool], str | Callable[[], str]], ...] = (
    *(
        (name, _at_least(1), "an integer >= 1")
        for name in (
            "prompts_per_step",
            "max_new_tokens",
            "mu",
            "max_steps",
            "checkpoint_every",
            "keep_checkpoints",
            "grad_accum",
        )
    ),
    (
        "rollout_batch_size",
        lambda v, c: v is None or _at_least(1)(v, c),
        "an integer >= 1, or None (automatic)",
    ),
    *(
        (name, _at_least(0), "an integer >= 0")
        for name in ("top_k", "max_refill_rounds", "warmup_steps", "seed")
    ),
    # sampling
    ("group_size", _at_least(2), "an integer >= 2 (a group of one has no variance)"),
    (
        "temperature",
        _num(lambda v: v > 0),
        "> 0 (greedy decoding gives identical samples, so every group would be dropped)",
    ),
    ("top_p", _num(lambda v: 0 < v <= 1), "0 < top_p <= 1"),
    ("max_oversample", _num(lambda v: 1 <= v <= 8), "1 <= value <= 8 (typical 1.25 - 2)"),
    # objective and optimisation
    ("learning_rate", _num(lambda v: 0 < v < 1), "0 < learning_rate < 1"),
    ("beta", _num(lambda v: v >= 0), ">= 0 (0 disables the KL term)"),
    ("clip_low", _num(lambda v: 0 < v < 10), "0 < value < 10 (typical 0.2 - 0.28)"),
    ("clip_high", _num(lambda v: 0 < v < 10), "0 < value < 10 (typical 0.2 - 0.28)"),
    ("clip_low", _num(lambda v: v < 1), "< 1 (the ratio floor is 1 - clip_low)"),
    (
        "loss_aggregation",
        _in(AGGREGATION_REGISTRY),
        _registered(AGGREGATION_REGISTRY, "register_aggregation"),
    ),
    ("advantage", _in(ADVANTAGE_REGISTRY), _registered(ADVANTAGE_REGISTRY, "register_advantage")),
    ("lr_schedule", _in(LR_SCHEDULES), f"one of {', '.join(LR_SCHEDULES)}"),
    ("weight_decay", _num(lambda v: v >= 0), ">= 0"),
    ("max_grad_norm", _num(lambda v: v >= 0), ">= 0 (0 disables clipping)"),
    # scoring: verify_batch's own rule for the values it is handed
    ("verifier_timeout", lambda v, c: timeout_ok(v), TIMEOUT_ALLOWED),
    ("verifier_workers", lambda v, c: workers_ok(v), f"None or {WORKERS_ALLOWED}"),
    # run
    ("stop", _strings, "a list of non-empty strings"),
    ("output_dir", lambda v, c: isinstance(v, str) and v.strip() != "", "a non-empty path"),
    ("prompt_overflow", _in(("error", "truncate")), "error or truncate"),
    # rollout engine, processes, LoRA
    ("rollout_backend", _in(ROLLOUT_BACKENDS), f"one of {', '.join(ROLLOUT_BACKENDS)}"),
    ("vllm_gpu_memory_utilization", _num(lambda v: 0 < v <= 1), "0 < value <= 1"),
    ("tis_cap", _num(lambda v: v >= 0), ">= 0 (0 disables the correction; typical 2 - 5)"),
    ("distributed", _in(DISTRIBUTED), f"one of {', '.join(DISTRIBUTED)}"),
    (
        "distributed",
        lambda v, c: not (v == "fsdp" and c.lora_r > 0),
        "ddp or auto when lora_r > 0 (LoRA with FSDP is not supported: the adapters and "
        "their optimizer state are small, so DDP holds them easily)",
    ),
    ("lora_r", _at_least(0), "an integer >= 0 (0 = full fine-tuning; typical 8 - 64)"),
    ("lora_alpha", _num(lambda v: v > 0), "> 0 (typical 2 x lora_r)"),
    (
        "lora_target_modules",
        lambda v, c: len(v) > 0 and _strings(v, c),
        'module names such as ["q_proj", "v_proj"], or ["all-linear"]',
    ),
)


def _validate(c: GRPOConfig) -> None:
    for name, ok, allowed in _RULES:
        value = getattr(c, name)
        if not ok(value, c):
            allowed = allowed() if callable(allowed) else allowed
            raise ConfigError(f"GRPOConfig.{name} = {value!r} is out of range: {allowed}")


def _resolve_curriculum(c: GRPOConfig) -> None:
    """One curriculum config (band included): see ``passband.trainer.sampling``."""
    from passband.trainer.sampling import resolve_curriculum

    try:
        cur = resolve_curriculum(c)
    except ValueError as exc:
        raise ConfigError(f"GRPOConfig.curriculum: {exc}") from None
    object.__setattr__(c, "curriculum", cur)
    object.__setattr__(c, "band", cur.band)


_DEPRECATED = {"LOSS_AGGREGATIONS": AGGREGATION_REGISTRY, "ADVANTAGES": ADVANTAGE_REGISTRY}


def __getattr__(name: str) -> Any:
    """``LOSS_AGGREGATIONS`` / ``ADVANTAGES``: deprecated copies of the registries' names."""
    if name not in _DEPRECATED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"passband.trainer.config.{name} is deprecated and goes in the next release; "
        "use passband.trainer.registry (ADVANTAGE_REGISTRY / AGGREGATION_REGISTRY).names()",
        DeprecationWarning,
        stacklevel=2,
    )
    return tuple(_DEPRECATED[name].names())
