"""The demo end to end: data, tiny model, short warm start, GRPO with zero-variance filtering.

``run_demo(DemoConfig(...))`` is what ``passband demo`` calls. It is a plain function so the tests
and the benchmark run exactly the same pipeline. The held-out set is generated from its own seed
stream and is disjoint from the training prompts by text; accuracy is greedy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from passband.demo.compare import read_cost, train_to_budget
from passband.demo.evaluate import greedy_accuracy
from passband.demo.model import ModelSize, build_model
from passband.demo.sft import SFTConfig, warm_start
from passband.demo.task import LEVELS, SPREAD_LEVELS, arith_verifier, make_splits
from passband.demo.tokenizer import build_tokenizer

__all__ = ["DemoConfig", "DemoResult", "grpo_config", "prepare", "run_demo"]


@dataclass(frozen=True)
class DemoConfig:
    """Everything a demo run depends on. ``quick()`` is the reduced run the slow test uses."""

    output_dir: str = "runs/demo"
    """The run directory: metrics, checkpoints, plots and the summary."""
    seed: int = 0
    """Seeds the data split, both models' initialisation and training."""
    levels: tuple[int, ...] = SPREAD_LEVELS
    """Indices into task.LEVELS, cycled: the mix of a real dataset for the model being trained.
    8 copy4d (solved after the warm start) : 7 of 2d+2d+2d (out of reach) : 5 of 2d+1d (in band),
    so uniform sampling wastes most of its generation on unanimous groups."""
    n_train: int = 2000
    """Training prompts (SFT and GRPO draw from the same pool)."""
    n_heldout: int = 500
    """Held-out prompts, disjoint from training."""
    sft: SFTConfig = field(default_factory=SFTConfig)
    """The warm start; deliberately short (see passband.demo.sft)."""
    model: ModelSize = field(default_factory=ModelSize)
    """Shape of the tiny model trained from scratch."""
    grpo_steps: int = 100
    """GRPO optimizer steps after the warm start."""
    group_size: int = 8
    """G: completions sampled per prompt."""
    prompts_per_step: int = 16
    """Groups trained on per step."""
    max_new_tokens: int = 6
    """Answers are at most 4 characters plus eos."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts."""
    learning_rate: float = 1e-4
    """GRPO learning rate. From-scratch model: far above 1e-5 is fine; 5e-4 degrades it."""
    beta: float = 0.0
    """k3 KL weight; 0: no reference model (a from-scratch model has nothing to stay near)."""
    use_curriculum: bool = True
    """Curriculum-aware GRPO (the defaults); false: uniform sampling."""
    compare: bool = True
    """Then train the same warm start with uniform sampling + refill to the same number of
    generated answers (compare.py)."""
    filter_zero_variance: bool = True
    """Drop groups whose rewards are all equal."""
    checkpoint_every: int = 50
    """GRPO steps between checkpoints."""
    curriculum: dict = field(default_factory=dict)
    """Extra curriculum options (CurriculumConfig fields), e.g. {"cooldown_factor": 0.0}; none by
    default."""
    progress: bool = True
    """Show progress bars."""

    def __post_init__(self) -> None:
        if not self.levels or any(not 0 <= lv < len(LEVELS) for lv in self.levels):
            raise ValueError(
                f"DemoConfig.levels must be indices in [0, {len(LEVELS) - 1}], got {self.levels}"
            )
        for name in ("n_train", "n_heldout", "grpo_steps", "prompts_per_step", "max_new_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"DemoConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.group_size < 2:
            raise ValueError(f"DemoConfig.group_size must be >= 2, got {self.group_size}")

    @classmethod
    def quick(cls, **changes) -> DemoConfig:
        """A reduced run (half the GRPO steps, no uniform twin) that still shows a real gain."""
        base = dict(n_heldout=300, grpo_steps=50, compare=False)
        base.update(changes)
        return cls(**base)


@dataclass
class DemoResult:
    before: dict[str, float]  # greedy held-out accuracy after the warm start
    after: dict[str, float]  # ... and after GRPO
    timings: dict[str, float]  # seconds per phase
    run_dir: Path
    last_metrics: dict = field(default_factory=dict)
    cost: dict = field(default_factory=dict)  # compare.RunCost of the run, as a dict
    uniform: dict = field(default_factory=dict)  # the uniform + refill twin: accuracy and cost

    @property
    def gain(self) -> float:
        return self.after["accuracy"] - self.before["accuracy"]


def grpo_config(cfg: DemoConfig, output_dir: str | Path, **changes):
    """The ``GRPOConfig`` the demo trains with (the benchmark reuses it for the passband side)."""
    from passband.trainer import GRPOConfig

    values = dict(
        group_size=cfg.group_size,
        prompts_per_step=cfg.prompts_per_step,
        max_new_tokens=cfg.max_new_tokens,
        temperature=cfg.temperature,
        learning_rate=cfg.learning_rate,
        beta=cfg.beta,
        max_steps=cfg.grpo_steps,
        seed=cfg.seed,
        output_dir=str(output_dir),
        checkpoint_every=cfg.checkpoint_every,
        keep_checkpoints=1,
        pretrained=False,
        use_curriculum=cfg.use_curriculum,
        filter_zero_variance=cfg.filter_zero_variance,
        progress=cfg.progress,
        verifier_workers=1,
    )
    values.update(changes)
    return GRPOConfig(**values)


def prepare(cfg: DemoConfig, log: Callable[[str], None] = print):
    """Tokenizer, splits and the warm-started model: everything before RL (shared with the benchmark)."""
    tokenizer = build_tokenizer()
    train, heldout = make_splits(cfg.n_train, cfg.n_heldout, seed=cfg.seed, levels=cfg.levels)
    model = build_model(tokenizer, cfg.model, seed=cfg.seed)
    n_params = sum(p.numel() for p in model.parameters())
    log(
        f"tiny Qwen2 model: {n_params / 1e3:.0f}k parameters, {len(tokenizer)}-token character vocabulary"
    )
    shares = {
        LEVELS[i].name: cfg.levels.count(i) / len(cfg.levels) for i in dict.fromkeys(cfg.levels)
    }
    log(
        f"task: {len(train)} training / {len(heldout)} held-out problems, levels "
        + ", ".join(f"{name} {share:.0%}" for name, share in shares.items())
    )
    warm_start(model, tokenizer, train, cfg.sft, progress=cfg.progress)
    return tokenizer, train, heldout, model


def run_demo(cfg: DemoConfig = DemoConfig(), log: Callable[[str], None] = print) -> DemoResult:
    """Warm start, measure, train with GRPO, measure again; writes everything under ``output_dir``."""
    from passband.trainer import GRPOTrainer

    run_dir = Path(cfg.output_dir)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    tokenizer, train, heldout, model = prepare(cfg, log)
    timings["warm_start_s"] = time.perf_counter() - t0
    before = greedy_accuracy(model, tokenizer, heldout, max_new_tokens=cfg.max_new_tokens)
    log(f"held-out greedy accuracy after the warm start: {before['accuracy']:.1%}")
    run_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(run_dir / "warm_start")
    tokenizer.save_pretrained(run_dir / "warm_start")

    t1 = time.perf_counter()
    config = grpo_config(cfg, run_dir, curriculum=cfg.curriculum or None)
    last = GRPOTrainer(model, tokenizer, train, arith_verifier(), config).train()
    timings["grpo_s"] = time.perf_counter() - t1
    after = greedy_accuracy(model, tokenizer, heldout, max_new_tokens=cfg.max_new_tokens)
    log(f"held-out greedy accuracy after GRPO:       {after['accuracy']:.1%}")
    cost = read_cost(run_dir, cfg.group_size)
    result = DemoResult(before, after, timings, run_dir, last, cost.as_dict())
    if cfg.compare and cfg.use_curriculum:
        t2 = time.perf_counter()
        result.uniform = _uniform_twin(cfg, run_dir, train, heldout, cost.generated, log)
        timings["uniform_s"] = time.perf_counter() - t2
    timings["total_s"] = time.perf_counter() - t0
    _write_summary(cfg, result)
    return result


def _uniform_twin(cfg: DemoConfig, run_dir: Path, train, heldout, answers: int, log) -> dict:
    """The same warm start, uniform sampling + refill, trained to the same generation budget."""
    from transformers import AutoModelForCausalLM

    from passband.trainer import GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(run_dir / "warm_start")
    tokenizer = build_tokenizer()
    config = grpo_config(
        cfg,
        run_dir / "uniform_refill",
        use_curriculum=False,
        checkpoint_every=10**9,
        max_steps=10**6,
    )
    log(f"uniform sampling + refill from the same warm start, to the same {answers} answers")
    cost = train_to_budget(GRPOTrainer(model, tokenizer, train, arith_verifier(), config), answers)
    acc = greedy_accuracy(model, tokenizer, heldout, max_new_tokens=cfg.max_new_tokens)
    log(f"held-out greedy accuracy, uniform + refill: {acc['accuracy']:.1%}")
    return {"after": acc, "cost": cost.as_dict()}


def _write_summary(cfg: DemoConfig, result: DemoResult) -> None:
    summary = {
        "config": asdict(cfg),
        "before": result.before,
        "after": result.after,
        "gain": result.gain,
        "timings": result.timings,
        "cost": result.cost,
        "uniform_refill": result.uniform,
    }
    (result.run_dir / "demo_summary.json").write_text(json.dumps(summary, indent=2, default=str))
