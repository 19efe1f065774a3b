"""``passband score DATASET --model PATH --verifier NAME --out OUT``: pre-score a dataset.

Samples k answers per prompt with the trainer's rollout backend, verifies them, and writes the
dataset again with ``passes, trials, pass_rate, band_class`` and the settings used, plus a pass-rate
histogram. Resumable: rerun the same command after a crash. The work itself is
``passband.curriculum.prescore``; this module only loads the model and maps flags to it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

HELP = "Pre-score a dataset: pass rate per prompt under a model, band class, histogram (resumable)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _input_arguments(parser)
    _sampling_arguments(parser)
    _output_arguments(parser)


def _input_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("what to score: the data, the model and the reward")
    group.add_argument(
        "dataset",
        metavar="DATASET",
        help=".jsonl, .parquet, .csv, or a directory saved with datasets' save_to_disk",
    )
    group.add_argument(
        "--config",
        default=None,
        metavar="RUN.toml",
        help="take the model, prompt column/template and reward (verifier, "
        "references, penalties) from a training config; flags override it",
    )
    group.add_argument(
        "--model", default=None, help="local model directory (nothing is downloaded)"
    )
    group.add_argument(
        "--tokenizer", default=None, help="tokenizer directory (default: the model's)"
    )
    group.add_argument(
        "--verifier",
        default=None,
        help="registered verifier name (e.g. math, exact), or module:attribute naming "
        "a Reward or a picklable callable",
    )
    group.add_argument(
        "--ref",
        action="append",
        default=[],
        metavar="KEY=COLUMN",
        help="pass dataset COLUMN to the verifier as KEY (repeatable), e.g. "
        "--ref answer=solution; default: every column except the prompt",
    )
    group.add_argument(
        "--prompt-column",
        default=None,
        help="column with the prompt text or chat messages (default: prompt)",
    )
    group.add_argument(
        "--prompt-template",
        default=None,
        help='build prompts from columns, e.g. "{question} Think step by step."',
    )


def _sampling_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("how answers are sampled")
    group.add_argument("--k", type=int, default=8, help="answers per prompt (default 8)")
    group.add_argument(
        "--first",
        type=int,
        default=None,
        help="adaptive: stop after this many answers if all agree (default 4, at most --k)",
    )
    group.add_argument(
        "--no-adaptive", dest="adaptive", action="store_false", help="always sample k answers"
    )
    group.add_argument(
        "--band",
        type=float,
        nargs=2,
        default=None,
        metavar=("LOW", "HIGH"),
        help="the pass-rate band (default: the config's [curriculum] band, else 0.2 0.8)",
    )
    group.add_argument(
        "--temperature", type=float, default=None, help="default: the config's, else 1.0"
    )
    group.add_argument("--top-p", type=float, default=None, help="default: the config's, else 1.0")
    group.add_argument(
        "--top-k", type=int, default=None, help="default: the config's top_k, else 0 (off)"
    )
    group.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="max new tokens per answer (default: the config's max_new_tokens, else 512)",
    )
    group.add_argument(
        "--stop",
        action="append",
        default=None,
        help="stop string (repeatable; default: the config's stop, else none)",
    )
    group.add_argument("--batch-size", type=int, default=16, help="prompts per generate call")
    group.add_argument("--seed", type=int, default=0)
    group.add_argument("--split", default=None, help="split of a saved DatasetDict")
    group.add_argument(
        "--rescore",
        action="store_true",
        help="score rows that already have pass_rate / *_solve_rate columns",
    )
    group.add_argument(
        "--prior-column", default=None, help="take existing difficulty only from this column"
    )


def _output_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("where results go, and running")
    group.add_argument(
        "--out",
        required=True,
        help="output path; its suffix picks the format (a path without suffix = saved HF dataset)",
    )
    group.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --out file and start over, discarding a leftover journal "
        "(refused otherwise, unless resuming its journal)",
    )
    group.add_argument("--plot", default=None, help="histogram PNG (default: OUT.pass_rate.png)")
    group.add_argument("--timeout", type=float, default=10.0, help="seconds per verification")
    group.add_argument(
        "--success-threshold",
        type=float,
        default=None,
        help="a plain-number reward passes at >= this (default: the config's "
        "[curriculum] success_threshold, else 0.5); verdicts pass on passed",
    )
    group.add_argument("--workers", type=int, default=None, help="verifier processes")
    group.add_argument("--device", default="auto", help="auto (default), cpu, cuda, cuda:N or mps")
    group.add_argument("--no-progress", dest="progress", action="store_false")


def run(args: argparse.Namespace) -> int:
    from passband._score_checks import check_device, check_out, check_plot
    from passband.curriculum import PrescoreConfig, PrescoreError, prescore, read_rows
    from passband.errors import UsageError

    check_device(args.device)  # these three before the model loads and anything is generated
    plot = args.plot or f"{os.fspath(Path(args.out))}.pass_rate.png"
    check_plot(plot, given=args.plot is not None)
    check_out(args)  # last: with --overwrite it discards a leftover journal
    verifier, references = _apply_config(args)
    try:
        options = _prescore_options(args, references)
        config = PrescoreConfig(**options)
        rows = read_rows(args.dataset, split=args.split)
    except (PrescoreError, FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    try:
        config.check_columns(rows)
    except PrescoreError as exc:  # its rows are named by position: say in what
        raise UsageError(f"{args.dataset} (rows counted from 0): {exc}") from None
    verifier = _resolve_verifier(verifier) if isinstance(verifier, str) else verifier
    generate = _load_generator(args)
    try:
        result = prescore(
            rows,
            generate,
            verifier,
            out_path=args.out,
            plot_path=plot,
            progress=args.progress,
            **options,
        )
    except PrescoreError as exc:
        raise UsageError(str(exc)) from None
    print(result.summary())
    return 0


def _apply_config(args: argparse.Namespace):
    """Fill what the flags leave open from ``--config``; return (verifier, references)."""
    from passband.errors import UsageError

    refs = {}
    for item in args.ref:
        key, sep, column = item.partition("=")
        if not sep or not key or not column:
            raise UsageError(f"--ref {item!r}: expected KEY=COLUMN, e.g. --ref answer=solution")
        refs[key] = column
    verifier = args.verifier
    from passband.curriculum import PrescoreConfig

    # without a --config: pre-scoring's own band, and the flags' documented defaults
    sampling = {"band": PrescoreConfig.band, "temperature": 1.0, "top_p": 1.0, "max_tokens": 512}
    sampling.update(top_k=0, stop=[])
    if args.config:
        from passband.config import load_config

        run = load_config(args.config)
        args.model = args.model or run.model.path
        if args.success_threshold is None:  # the same rule as the training run
            args.success_threshold = run.trainer.curriculum.success_threshold
        sampling.update(  # scored as the run will sample, so its priors count in full
            band=run.trainer.curriculum.band,
            temperature=run.trainer.temperature,
            top_p=run.trainer.top_p,
            top_k=run.trainer.top_k,
            stop=list(run.trainer.stop),
            max_tokens=run.trainer.max_new_tokens,
        )
        args.tokenizer = args.tokenizer or run.model.tokenizer
        if args.prompt_column is None and args.prompt_template is None:
            args.prompt_template = run.data.prompt_template
            args.prompt_column = run.data.prompt_column
            args.messages_column = run.data.messages_column  # its SFT answer is not shown
        if verifier is None:
            verifier, config_refs = run.reward.build()
            refs = refs or dict(config_refs or {})
    for name, value in sampling.items():  # a flag given on the command line wins
        if getattr(args, name) is None:
            setattr(args, name, value)
    if not args.model or not verifier:
        raise UsageError(
            "give --model and --verifier, or a --config whose [model] and [reward] "
            "sections name them"
        )
    return verifier, refs or None


def _band_ok(band) -> bool:
    from passband.curriculum.posterior import check_band

    try:
        check_band(band, owner="score")
    except ValueError:
        return False
    return True


def _prescore_options(args: argparse.Namespace, refs) -> dict:
    from passband.errors import UsageError

    wrong = [
        said
        for bad, said in (
            (
                not args.temperature > 0,
                f"--temperature {args.temperature} must be > 0 (at 0 the k answers are one "
                "answer k times, and the pass rate is 0 or 1)",
            ),
            (not 0 < args.top_p <= 1, f"--top-p {args.top_p} must be in (0, 1]"),
            (args.top_k < 0, f"--top-k {args.top_k} must be >= 0 (0: off)"),
            ("" in args.stop, "--stop '' must be a non-empty string"),
            (args.max_tokens < 1, f"--max-tokens {args.max_tokens} must be >= 1"),
            (args.k < 1, f"--k {args.k} must be >= 1"),
            (
                not _band_ok(args.band),
                f"--band {' '.join(map(str, args.band))} must be two numbers "
                "0 <= low < high <= 1, e.g. --band 0.2 0.8",
            ),
            (
                args.adaptive and args.first is not None and not 1 <= args.first <= args.k,
                f"--first {args.first} must be in 1..--k ({args.k}), or pass --no-adaptive",
            ),
        )
        if bad
    ]
    if wrong:
        raise UsageError("; ".join(wrong))
    return dict(
        k=args.k,
        first=min(4 if args.first is None else args.first, args.k),
        adaptive=args.adaptive,
        band=tuple(args.band),
        batch_size=args.batch_size,
        seed=args.seed,
        prompt_column=args.prompt_column or "prompt",
        messages_column=getattr(args, "messages_column", None),
        prompt_template=args.prompt_template,
        references=refs,
        rescore=args.rescore,
        prior_column=args.prior_column,
        timeout=args.timeout,
        workers=args.workers,
        success_threshold=0.5 if args.success_threshold is None else args.success_threshold,
        settings={  # a local model by its absolute path: training compares the real paths
            "model": _local(args.model),
            "temperature": args.temperature,
            "top_p": args.top_p,
            "top_k": args.top_k,
            "stop": list(args.stop),
            "max_tokens": args.max_tokens,
            **({"tokenizer": _local(args.tokenizer)} if args.tokenizer else {}),
        },
    )


def _local(path: str) -> str:
    """A local directory by its absolute path (training compares real paths), else as given."""
    return os.path.abspath(path) if os.path.exists(path) else path


def _resolve_verifier(spec: str):
    """A registered name stays a name (verify_batch looks it up); module:attr is imported."""
    from passband._verifier_spec import resolve_verifier

    return resolve_verifier(spec)


class _SeededGenerate:
    """``generate(prompts, n, seed)`` over a rollout backend: seeding torch per batch is what makes
    a resumed run regenerate exactly the answers an uninterrupted one would have."""

    def __init__(self, backend) -> None:
        self.backend = backend

    def __call__(self, prompts, n, seed=0):
        import torch

        torch.manual_seed(seed)
        return self.backend.generate(list(prompts), n)


def _load_generator(args: argparse.Namespace) -> _SeededGenerate:
    from passband.errors import UsageError

    try:
        import torch

        from passband.trainer import load_model_and_tokenizer
        from passband.trainer.rollout import HFRollout
    except ImportError as exc:
        raise UsageError(f"passband score needs the trainer's rollout backend: {exc}") from None
    try:
        model, tokenizer = load_model_and_tokenizer(args.model, args.tokenizer)
    except (FileNotFoundError, OSError, ValueError) as exc:
        raise UsageError(f"cannot load --model {args.model!r}: {exc}") from None
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        model = model.to(dtype=torch.bfloat16)
    model = model.to(device)
    _check_positions(model, args.max_tokens)
    backend = HFRollout(
        model,
        tokenizer,
        max_new_tokens=args.max_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=args.top_k,
        stop=tuple(args.stop),
        batch_size=max(1, args.batch_size * args.k),
    )
    return _SeededGenerate(backend)


def _check_positions(model, max_tokens: int) -> None:
    """``--max-tokens`` must leave the model room for a prompt, as training requires."""
    from passband.errors import UsageError
    from passband.trainer._data import model_positions

    positions = model_positions(model)
    if positions is not None and max_tokens >= positions:
        raise UsageError(
            f"--max-tokens {max_tokens} leaves no room for a prompt: the model has {positions} "
            f"positions (prompt + answer); set it below {positions}"
        )
