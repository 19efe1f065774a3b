"""``passband train CONFIG [section.key=value ...] [--resume]``: GRPO on a TOML config.

Several processes (the result matches one process with the same config and seed):
``torchrun --nproc_per_node N -m passband.cli train CONFIG`` or
``accelerate launch --multi_gpu --num_processes N -m passband.cli train CONFIG`` (gloo on CPU,
NCCL on GPUs; one process per GPU). That is DDP (every rank holds the whole model); for models
whose weights, gradients and AdamW state do not fit on one GPU add ``trainer.distributed="fsdp"``
or launch with ``accelerate launch --use_fsdp ...`` (FSDP2: all of it sharded across ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HELP = "Train a model with GRPO from a TOML config (overrides: section.key=value)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="TOML file with [model], [data], [reward], [trainer]")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="section.key=value",
        help="override a config value, e.g. trainer.learning_rate=1e-6",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue from the newest checkpoint in trainer.output_dir",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the previous run in trainer.output_dir (metrics, "
        "checkpoints); without it, or --resume, such a directory is refused",
    )
    parser.add_argument("--output-dir", default=None, help="shortcut for trainer.output_dir=...")


def _interrupted(args: argparse.Namespace, output_dir: str, step: int) -> str:
    """What Ctrl-C left: the step reached, the newest checkpoint, and the command that resumes."""
    from passband.trainer._checkpoint import latest_checkpoint

    newest = latest_checkpoint(output_dir)
    if newest is None:
        return (
            f"passband train: interrupted at step {step}, before the first checkpoint: nothing to "
            f"resume; rerun with --overwrite to start again"
        )
    import shlex

    where = ["--output-dir", args.output_dir] if args.output_dir else []
    again = shlex.join(["passband", "train", str(args.config), "--resume", *where, *args.overrides])
    saved = int(newest.name.removeprefix("step_"))
    return (
        f"passband train: interrupted at step {step}; the newest checkpoint is step {saved} "
        f"({max(step - saved, 0)} steps will be redone); resume with: {again}"
    )


def run(args: argparse.Namespace) -> int:
    import errno

    from passband.config import load_config
    from passband.errors import DiskFullError, UsageError

    if args.resume and args.overwrite:
        raise UsageError(
            "--resume continues the run in output_dir and --overwrite replaces it; pass one of them"
        )
    overrides = list(args.overrides)
    if args.resume:
        overrides.append("trainer.resume=true")
    if args.overwrite:
        overrides.append("trainer.overwrite=true")
    if args.output_dir:
        given = [o for o in overrides if o.split("=", 1)[0].strip() == "trainer.output_dir"]
        if given:  # the flag won and the override was dropped in silence
            raise UsageError(
                f"--output-dir {args.output_dir} and the override {given[-1]} both set the run "
                "directory; give one of them"
            )
        overrides.append(f"trainer.output_dir={json.dumps(args.output_dir)}")
    cfg = load_config(args.config, overrides)
    if os.environ.get("RANK", "0") == "0":  # the rank that claims output_dir: refuse before loading
        from passband.trainer._outdir import check_output_dir

        t = cfg.trainer
        check_output_dir(t.output_dir, resume=t.resume, overwrite=t.overwrite)
    from passband._preflight import preflight

    checked = preflight(cfg)  # the data, reward and model paths, before the model loads
    checked.raise_first()
    trainer = _build_trainer(cfg, checked)
    try:
        last = trainer.train()
    except KeyboardInterrupt:
        if trainer.dist.is_main:  # once, not from every rank of a torchrun
            print(_interrupted(args, cfg.trainer.output_dir, trainer.step), file=sys.stderr)
        raise
    except OSError as exc:  # a log write on a full disk names no file: name the run directory
        if exc.errno != errno.ENOSPC:
            raise
        raise DiskFullError(
            f"no space left on {exc.filename or cfg.trainer.output_dir}; free some "
            "space and rerun with --resume"
        ) from None
    finally:
        trainer.close()  # a vLLM engine it started
    from passband.trainer._distributed import finish_distributed

    finish_distributed(trainer)  # under torchrun / accelerate launch: leave the group cleanly
    if trainer.dist.is_main:
        print(
            f"done: {last.get('step', trainer.step)} steps; run directory {cfg.trainer.output_dir}"
        )
    return 0


def _build_trainer(cfg, checked):
    """``GRPOTrainer`` for the run, from the rows and reward ``preflight`` checked. Mistakes the
    user can make surface as passband.errors (the CLI prints them); anything else escaping from
    here is a bug and keeps its traceback."""
    from passband.errors import DataError
    from passband.trainer import GRPOTrainer

    try:
        return GRPOTrainer(
            cfg.model.path,
            cfg.model.tokenizer,
            checked.rows,
            checked.reward,
            cfg.trainer,
            reference_columns=checked.reference_columns,
        )
    except DataError as exc:  # "row N" counts the data's rows from 0: name the file it counts in
        raise DataError(f"[data] {cfg.data.path} (rows counted from 0): {exc}") from None
