"""``passband doctor CONFIG``: recommended-range checks plus a memory/time estimate per step."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

import tomllib

_SAMPLE = 1000  # rows whose prompts are tokenized to measure their length
_ASSUMED = 256  # prompt tokens assumed when the data or the tokenizer cannot be read

HELP = (
    "Check a training config: what passband train refuses at start-up (FAIL, exit 1), the "
    "recommended ranges, and an estimate of memory and time per step."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from passband._estimate import DEVICES

    parser.add_argument(
        "config", metavar="CONFIG", help="TOML run config ([model], [data], [trainer])"
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="section.key=value",
        help="overrides, as for passband train (e.g. trainer.group_size=16)",
    )
    parser.add_argument(
        "--gpu",
        choices=DEVICES,
        default="h200",
        help="hardware to estimate for (default h200; cpu = this machine)",
    )
    parser.add_argument(
        "--params",
        default=None,
        metavar="N",
        help="parameter count (7e9, 1.5B) when [model] path has no config.json",
    )
    parser.add_argument(
        "--prompt-tokens",
        type=int,
        default=None,
        metavar="T",
        help="prompt length in tokens (default: measured on the [data] rows with the model's "
        f"tokenizer, up to {_SAMPLE} of them; {_ASSUMED} when they cannot be read)",
    )
    parser.add_argument(
        "--gpus",
        type=int,
        default=1,
        metavar="N",
        help="processes / GPUs the run will use (default 1); with "
        'trainer.distributed = "fsdp" the model state is split over them',
    )


def read_trainer_settings(path: str, overrides: list[str]) -> tuple[dict, set[str], Any]:
    """(every GRPOConfig field with defaults filled, the fields set explicitly, the loaded config).

    Goes through ``passband.config.load_config`` so doctor validates exactly what ``passband
    train`` would; the trainer's own construction warnings are silenced because the findings
    below repeat them with an explanation.
    """
    from passband.config import load_config, parse_overrides

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        config = load_config(path, overrides)
    raw = tomllib.loads(Path(path).read_text()).get("trainer", {})
    explicit = set(raw) | {
        k.split(".", 1)[1] for k, _ in parse_overrides(overrides) if k.startswith("trainer.")
    }
    return config.trainer.to_dict(), explicit, config


def _shape(args: argparse.Namespace, model_path: str | None):
    from passband._estimate import parse_count, shape_from_config, shape_from_params
    from passband.errors import UsageError

    if args.params is not None:
        try:
            return shape_from_params(parse_count(args.params)), None
        except ValueError as exc:
            raise UsageError(f"--params: {exc}") from None
    candidate = Path(model_path or "")
    if model_path and (candidate / "config.json").is_file():
        try:
            return shape_from_config(candidate), None
        except (KeyError, ValueError, TypeError) as exc:
            return (
                None,
                f"{candidate}/config.json lacks a field the estimate needs ({exc}); pass --params",
            )
    return None, (
        f"[model] path {model_path!r} has no config.json here; pass --params 7e9 "
        "(or 1.5B, 500M) to estimate memory and time"
    )


def measure_prompts(cfg, rows: list | None = None) -> tuple[int, int, str] | str:
    """(mean, longest) prompt tokens of up to ``_SAMPLE`` evenly spaced [data] rows of the loaded
    config ``cfg`` (``rows``: those rows, already loaded), encoded as the trainer encodes them,
    and where they came from; why not when the data or the tokenizer can't load. The tokenizer
    is read from its local folder only, as the trainer reads it: a missing folder never becomes
    a download attempt."""
    from passband.config import load_rows
    from passband.errors import PassbandError

    source = cfg.model.tokenizer or cfg.model.path
    if not source or not Path(source).is_dir():
        return f"the tokenizer folder {source!r} does not exist here"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = load_rows(cfg.data) if rows is None else rows
    except (PassbandError, OSError, ValueError, KeyError, TypeError) as exc:
        return f"the [data] rows could not be read ({exc})"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from transformers import AutoTokenizer

            from passband.trainer._data import encode_prompt, prompt_of

            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
            picked = rows[:: max(1, len(rows) // _SAMPLE)][:_SAMPLE]
            lengths = [len(encode_prompt(tokenizer, prompt_of(row))) for row in picked]
    except (PassbandError, OSError, ValueError, KeyError, TypeError) as exc:
        return f"the tokenizer in {source!r} could not be used ({type(exc).__name__})"
    if not lengths:
        return "the [data] file has no rows"
    where = f"measured on {len(lengths)} of {len(rows)} [data] rows"
    return round(sum(lengths) / len(lengths)), max(lengths), where


def _print_context(model_path: str | None, max_new_tokens: int, prompt_tokens: int | None) -> None:
    from passband._estimate import context_warning, positions_from_config

    positions = positions_from_config(model_path) if model_path else None
    if prompt_tokens is None:  # an assumed length would warn about prompts nobody measured
        if positions is not None and max_new_tokens >= positions:
            print(
                f"\nWARN  context: max_new_tokens = {max_new_tokens} is not below the model's "
                f"{positions} positions (prompt + completion share them): training refuses this"
            )
        else:
            print("\nNOTE  context: not checked: prompt length unknown (pass --prompt-tokens T)")
        return
    problem = context_warning(positions, max_new_tokens, prompt_tokens)
    if problem:
        print(f"\nWARN  context: {problem}")
    elif positions is not None:
        print(
            f"\nok    context: {prompt_tokens}-token prompts + max_new_tokens = {max_new_tokens} "
            f"fit the model's {positions} positions"
        )


def run(args: argparse.Namespace) -> int:
    """0, or 1 when ``passband train`` would refuse the config at start-up (its FAIL lines)."""
    from passband._doctor import check_settings, format_findings
    from passband._preflight import preflight
    from passband.errors import UsageError

    if args.prompt_tokens is not None and args.prompt_tokens < 1:
        raise UsageError(f"--prompt-tokens {args.prompt_tokens}: must be >= 1")
    if args.gpus < 1:
        raise UsageError(f"--gpus {args.gpus}: must be >= 1")
    values, explicit, config = read_trainer_settings(args.config, args.overrides)
    checked = preflight(config)  # what passband train refuses before it loads the model
    model_path = config.model.path
    shape, why_not = _shape(args, model_path)  # its parameter count sets the learning-rate range
    findings = check_settings(values, explicit, shape.params if shape else None)
    flagged = sum(f.severity != "ok" for f in findings)
    print(f"passband doctor: {args.config}\n")
    _print_problems(checked.problems)
    print(
        f"settings ({flagged} outside the typical range; WARN = likely to hurt the run: "
        "the trainer warns too, or the learning rate is high for the model's size)"
    )
    print(format_findings(findings))
    mean_tokens, longest, where = _prompt_tokens(args, config, checked.rows)
    if where.startswith("assumed"):  # nothing measured: no context verdict on a guess
        print(f"\nprompts: not measured ({where[len('assumed: ') :]}); {_ASSUMED} tokens assumed")
        _print_context(model_path, values["max_new_tokens"], None)
    else:
        print(f"\nprompts: {mean_tokens} tokens on average, {longest} at most ({where})")
        _print_context(model_path, values["max_new_tokens"], longest)
    _print_phases(values.get("output_dir"), values)
    print()
    if shape is None:
        print(f"estimate skipped: {why_not}")
    else:
        _print_estimate(args, values, shape, mean_tokens)
    if checked.problems:
        print(f"\npassband train would stop at start-up: {len(checked.problems)} FAIL above")
    return 1 if checked.problems else 0


def _print_estimate(args: argparse.Namespace, values: dict, shape, prompt_tokens: int) -> None:
    from types import SimpleNamespace

    from passband._estimate import Workload, estimate, format_estimate, hardware
    from passband.trainer._refill import rollout_rows

    names = (
        "prompts_per_step",
        "group_size",
        "max_new_tokens",
        "grad_accum",
        "mu",
        "beta",
        "gradient_checkpointing",
    )
    workload = Workload(
        **{k: values[k] for k in names},
        rollout_batch_size=rollout_rows(SimpleNamespace(**values), args.gpus),
        max_oversample=values["max_oversample"],
        prompt_tokens=prompt_tokens,
        gpus=args.gpus,
        sharded=values["distributed"] == "fsdp" and args.gpus > 1,
    )
    hw = hardware(args.gpu)
    print(format_estimate(estimate(shape, workload, hw), shape, hw, workload))


def _print_problems(problems: list) -> None:
    """One FAIL line per problem ``passband train`` stops on, the field and its value named."""
    if not problems:
        print(
            "ok    start-up checks: the data, the reward and the model folder are as train needs\n"
        )
        return
    print(f"start-up checks: {len(problems)} problem(s) that passband train refuses at once")
    for p in problems:
        print(f"  FAIL  {p.field} = {p.value!r}\n          {p.error}")
    print()


def _prompt_tokens(args: argparse.Namespace, config, rows) -> tuple[int, int, str]:
    if args.prompt_tokens is not None:
        return args.prompt_tokens, args.prompt_tokens, "--prompt-tokens"
    measured = (
        measure_prompts(config, rows)
        if rows is not None
        else "the [data] rows could not be read (see FAIL above)"
    )
    if isinstance(measured, str):
        return _ASSUMED, _ASSUMED, f"assumed: {measured}; pass --prompt-tokens"
    return measured


def _print_phases(output_dir, values: dict) -> None:
    """When the config's run directory already has metrics, name the phase that dominates."""
    import json
    from pathlib import Path

    from passband._doctor import dominant_phase

    path = Path(str(output_dir or "")) / "metrics.jsonl"
    if not output_dir or not path.is_file():
        return
    lines = []
    for line in path.read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by a kill
            continue
    text = dominant_phase(lines, values)
    if text:
        print(f"\nrun {path.parent}: {text}")
