"""Run-directory logging: ``metrics.jsonl``, ``groups.jsonl``, ``curriculum.json``, TensorBoard, tqdm.

The key names are a contract with ``passband report`` and the alerts (see the interfaces doc):
one JSON object per optimizer step in ``metrics.jsonl``, one per rolled-out group in
``groups.jsonl``. On resume both files are cut back to the checkpoint's step, so a resumed run's
files read exactly as if it had never stopped.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "MetricsWriter",
    "ProgressBar",
    "PhaseTimer",
    "PHASES",
    "STEP_KEYS",
    "reward_metrics",
    "component_metrics",
    "group_metrics",
    "length_metrics",
    "group_lines",
    "grad_weights",
]

# Where a step's time goes, in the order a step runs them: ``time/<phase>_s`` in every line.
PHASES = ("sample", "generate", "score", "update", "sync")

# Keys every metrics line has (plus reward/<component>, reward_scale/<component> and curriculum/<key>).
STEP_KEYS = (
    "step",
    "time_s",
    "policy_version",
    "reward/mean",
    "reward/std",
    "pass_rate",
    "groups/rolled",
    "groups/zero_variance_share",
    "groups/refill_rounds",
    "groups/effective",
    "groups/dropped",
    "completions/masked",
    "verifier/error_rate",
    "verifier/timeout_rate",
    "length/mean",
    "length/max",
    "length/truncated_share",
    "kl",
    "clip_fraction",
    "entropy",
    "grad_norm",
    "lr",
    "loss",
    "time/step_s",
    *(f"time/{p}_s" for p in PHASES),
    "generate/calls",
    "generate/completions_per_trained",
    "groups/surplus",
    "throughput/tokens_per_s",
    "alerts",
)


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null instead of producing an unreadable file."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class MetricsWriter:
    """Writes the run directory's logs; ``enabled=False`` (ranks other than 0) writes nothing."""

    def __init__(self, output_dir: str | Path, *, tensorboard: bool = False, enabled: bool = True):
        self.dir = Path(output_dir)
        self.enabled = enabled
        if enabled:
            self.dir.mkdir(parents=True, exist_ok=True)
        self.metrics_path = self.dir / "metrics.jsonl"
        self.groups_path = self.dir / "groups.jsonl"
        self._tb = _tensorboard(self.dir) if tensorboard and enabled else None

    def truncate_after(self, step: int) -> None:
        """Drop lines of steps after ``step`` (written after the checkpoint we resume from)."""
        if not self.enabled:
            return
        for path in (self.metrics_path, self.groups_path):
            if not path.exists():
                continue
            keep = [line for line in path.read_text().splitlines() if _step_of(line) <= step]
            _atomic_write(path, "".join(line + "\n" for line in keep))

    def start_fresh(self) -> None:
        if not self.enabled:
            return
        for path in (self.metrics_path, self.groups_path):
            if path.exists():
                path.unlink()

    def log_step(self, metrics: Mapping[str, Any], groups: list[Mapping[str, Any]]) -> None:
        if not self.enabled:
            return
        with self.groups_path.open("a") as f:
            for g in groups:
                f.write(json.dumps({k: _clean(v) for k, v in g.items()}) + "\n")
        with self.metrics_path.open("a") as f:
            f.write(json.dumps({k: _clean(v) for k, v in metrics.items()}) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if self._tb is not None:
            for k, v in metrics.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                    self._tb.add_scalar(k, v, metrics["step"])

    def write_curriculum(self, band, estimates: Mapping[Any, float]) -> None:
        if not self.enabled:
            return
        data = {"band": list(band), "estimates": {str(k): v for k, v in estimates.items()}}
        _atomic_write(self.dir / "curriculum.json", json.dumps(data))

    def write_config(self, config: Mapping[str, Any]) -> None:
        if not self.enabled:
            return
        _atomic_write(self.dir / "config.json", json.dumps(config, indent=2, default=str))

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()


def _step_of(line: str) -> float:
    """Step of one JSONL line; a line cut short by a kill counts as after every checkpoint."""
    try:
        return json.loads(line)["step"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return math.inf


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _tensorboard(directory: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        warnings.warn(
            "tensorboard = true but the tensorboard package is not installed "
            "(pip install 'passband[tensorboard]'); logging to metrics.jsonl only"
        )
        return None
    return SummaryWriter(str(directory / "tensorboard"))


class ProgressBar:
    """tqdm bar over optimizer steps showing reward, pass rate, effective groups, KL, step time."""

    def __init__(self, total: int, initial: int, enabled: bool):
        self._bar = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(
                total=total,
                initial=initial,
                desc="grpo",
                unit="step",
                dynamic_ncols=True,
                file=sys.stderr,
            )

    def update(self, m: Mapping[str, Any]) -> None:
        if self._bar is None:
            return
        fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
        self._bar.set_postfix_str(
            f"reward {fmt(m['reward/mean'], '.3f')} pass {fmt(m['pass_rate'], '.2f')} "
            f"groups {m['groups/effective']}/{m['groups/rolled']} kl {fmt(m['kl'], '.4f')} "
            f"len {fmt(m['length/mean'], '.0f')} {fmt(m['time/step_s'], '.3g')}s/step"
        )
        self._bar.update(1)

    def write(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# ---------------------------------------------------------------------- per-step figures
class PhaseTimer:
    """Seconds per phase of one step; a phase timed inside another is not counted twice (the
    weight sync runs inside the update, and ``time/update_s`` excludes it)."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self._stack: list[list] = []  # [phase, started]

    @contextlib.contextmanager
    def __call__(self, phase: str):
        now = time.perf_counter()
        if self._stack:  # pause the enclosing phase
            outer = self._stack[-1]
            self.seconds[outer[0]] += now - outer[1]
        self._stack.append([phase, now])
        try:
            yield
        finally:
            name, started = self._stack.pop()
            now = time.perf_counter()
            self.seconds[name] += now - started
            if self._stack:
                self._stack[-1][1] = now

    def metrics(self) -> dict[str, float]:
        return {f"time/{p}_s": self.seconds[p] for p in PHASES}


# ---------------------------------------------------------------------- per-step figures
# Groups are the loop's ``Group`` records (trainer/_batch.py); they are read here, never written.
def grad_weights(groups: list, adv, tokens: list[int]) -> list[float]:
    """Each trained group's sum of |advantage| x loss tokens (``grad_share`` in groups.jsonl)."""
    weights = [abs(a) * n for a, n in zip(adv.tolist(), tokens)]
    out, start = [], 0
    for g in groups:
        out.append(float(sum(weights[start : start + len(g.verdicts)])))
        start += len(g.verdicts)
    return out


def reward_metrics(groups: list) -> dict[str, Any]:
    verdicts = [v for g in groups for v in g.verdicts]
    ok = [v for v in verdicts if v.checkable]
    scores = np.array([v.score for v in ok], dtype=np.float64)
    out: dict[str, Any] = {
        "reward/mean": float(scores.mean()) if ok else None,
        "reward/std": float(scores.std()) if ok else None,
    }
    out.update(component_metrics(ok))
    n = max(len(verdicts), 1)
    out.update(
        {
            "pass_rate": sum(v.passed for v in ok) / len(ok) if ok else None,
            "completions/masked": len(verdicts) - len(ok),
            "verifier/error_rate": sum(v.status == "error" for v in verdicts) / n,
            "verifier/timeout_rate": sum(v.status == "timeout" for v in verdicts) / n,
        }
    )
    return out


def component_metrics(verdicts: list) -> dict[str, float]:
    """Each named term of a composed reward: its mean (``reward/<name>``) and its scale, the std
    across completions (``reward_scale/<name>``). The scale is what the advantage sees: a term
    whose spread dwarfs the others decides the ranking inside every group."""
    out: dict[str, float] = {}
    for name in sorted({k for v in verdicts for k in v.components}):
        vals = np.array(
            [v.components[name] for v in verdicts if name in v.components], dtype=np.float64
        )
        out[f"reward/{name}"] = float(vals.mean())
        out[f"reward_scale/{name}"] = float(vals.std())
    return out


def group_metrics(groups: list, kept: list, rounds: int) -> dict[str, Any]:
    usable = [g for g in groups if not g.zero_variance]
    return {
        "groups/rolled": len(groups),
        "groups/zero_variance_share": (len(groups) - len(usable)) / max(len(groups), 1),
        "groups/refill_rounds": rounds,
        "groups/effective": len(kept),
        "groups/dropped": len(groups) - len(kept),
        "groups/surplus": max(0, len(usable) - len(kept)) if kept else 0,
        "generate/completions_per_trained": (  # None (null) on a step that trained nothing
            sum(len(g.verdicts) for g in groups) / trained
            if (trained := sum(len(g.verdicts) for g in kept))
            else None
        ),
    }


def length_metrics(groups: list) -> dict[str, Any]:
    lengths = [len(x) for g in groups for x in g.completions]
    truncated = [t for g in groups for t in g.truncated]
    return {
        "length/mean": float(np.mean(lengths)) if lengths else None,
        "length/max": max(lengths) if lengths else None,
        "length/truncated_share": float(np.mean(truncated)) if truncated else None,
    }


def group_lines(
    step: int, groups: list, kept: list, weights: list[float], positions=None
) -> list[dict[str, Any]]:
    """One line per rolled-out group; ``kept`` are the trained ones, ``weights`` theirs in order.
    ``positions``: each training row's position in the user's dataset; where ``skip_bad_rows``
    shifted them, a line also names its ``row`` there (``prompt_id`` counts the kept rows)."""
    share = {id(g): w for g, w in zip(kept, weights)}
    total = sum(weights) or 1.0
    shifted = bool(positions) and positions[-1] != len(positions) - 1
    return [
        {
            "step": step,
            "prompt_id": g.prompt_id,
            **({"row": positions[g.prompt_id]} if shifted else {}),
            "rewards": [v.score if v.checkable else None for v in g.verdicts],
            "passes": g.passes,
            "kept": id(g) in share,
            "grad_share": share.get(id(g), 0.0) / total,
        }
        for g in groups
    ]
