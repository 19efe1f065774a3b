"""``passband score``'s flags that name where results go and what runs them, checked before
the model loads and anything is sampled: a bad one fails in a second, not after the sampling."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from passband.errors import UsageError

__all__ = ["check_out", "check_plot", "check_device", "DEVICES"]

DEVICES = "auto, cpu, cuda, cuda:N or mps"
_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")


def check_out(args: argparse.Namespace) -> None:
    from passband.curriculum.tables import check_replaceable, table_format

    try:
        table_format(args.out, must_exist=False)
    except ValueError as exc:
        raise UsageError(f"--out: {exc}") from None
    if Path(args.out).resolve() == Path(args.dataset).resolve():
        raise UsageError(f"--out {args.out!r} is the input dataset; write the scores elsewhere")
    try:  # a directory is replaced whole: only a saved dataset, never one holding the input
        check_replaceable(args.out, inputs=[args.dataset])
    except ValueError as exc:
        raise UsageError(f"--out: {exc}") from None
    journal = Path(f"{os.fspath(args.out)}.journal.jsonl")
    if args.overwrite:  # start over: a leftover journal is not resumed
        journal.unlink(missing_ok=True)
    resuming = journal.exists()
    if Path(args.out).exists() and not resuming and not args.overwrite:
        raise UsageError(
            f"--out {args.out!r} exists (a finished scoring run?); pass --overwrite to replace "
            "it, or choose another path"
        )


def check_plot(plot: str, *, given: bool) -> None:
    """The histogram's path (``--plot``, or its default beside ``--out``) can be written as a file."""
    from passband._paths import path_problem

    problem = path_problem(plot, folder=False)
    if problem:
        flag = "--plot" if given else "--plot (default: OUT.pass_rate.png)"
        raise UsageError(f"{flag} {plot!r} {problem}; give the PNG file to write, e.g. hist.png")


def check_device(device: str) -> None:
    """``--device`` names a device kind this torch build has, and an index that exists."""
    if device in ("auto", "cpu"):
        return
    import torch

    if not _DEVICE.fullmatch(device):  # another kind torch knows (xpu, hpu, mps:0) is passed on
        try:
            torch.device(device)
        except (RuntimeError, ValueError):
            raise UsageError(f"--device {device!r}: expected {DEVICES}") from None
        return
    if device == "mps":
        if not torch.backends.mps.is_available():
            raise UsageError("--device mps: this machine has no MPS (Apple GPU) device; use cpu")
        return
    if not torch.cuda.is_available():
        why = "this torch build has no CUDA support" if torch.version.cuda is None else "no GPU"
        raise UsageError(
            f"--device {device}: no CUDA device here ({why}); use --device cpu (or auto, "
            "which picks a GPU when there is one)"
        )
    index, count = int(device.partition(":")[2] or 0), torch.cuda.device_count()
    if index >= count:
        raise UsageError(
            f"--device {device}: this machine has {count} CUDA device(s), cuda:0 to cuda:{count - 1}"
        )
