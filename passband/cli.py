"""The ``passband`` console command: one subcommand per module in ``passband.commands``.

Each command module exposes ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``.
Command modules import their heavy dependencies inside ``run`` so that ``passband --help`` stays fast.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import sys
import warnings

from passband import __version__
from passband.errors import PassbandError

# name -> module under passband.commands; order is the order shown in --help.
_COMMANDS = {
    "demo": "demo",
    "train": "train",
    "score": "score",
    "verify": "verify",
    "report": "report",
    "doctor": "doctor",
    "sandbox": "sandbox",
}


def _load(name: str):
    return importlib.import_module(f"passband.commands.{_COMMANDS[name]}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="passband",
        description="Verifiable rewards, pass-rate curriculum and GRPO training.",
    )
    parser.add_argument("--version", action="version", version=f"passband {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        module = _load(name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _one_line(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as the command line shows it: its message, and where in the user's file (a
    config's line) it points, but not passband's source file and line that raised it."""
    where = "" if str(filename).endswith(".py") else f"{filename}:{lineno}: "
    try:
        text = str(message).removeprefix("passband: ")  # said once, in front
        (file or sys.stderr).write(f"passband: {where}{category.__name__}: {text}\n")
    except OSError:  # stderr gone (a closed pipe): a warning is not worth a crash
        pass


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # ``train CONFIG --resume a.b=1``: argparse stops collecting the positional overrides at the
    # first option; a ``section.key=value`` after it is still an override, anything else an error.
    late = [x for x in extra if "=" in x and not x.startswith("-")]
    if extra and (len(late) < len(extra) or not isinstance(getattr(args, "overrides", None), list)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if late:
        args.overrides.extend(late)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    from passband._mptemp import use_swept_tempdir

    use_swept_tempdir()  # worker temp dirs of runs killed with -9 are removed, not left in /tmp
    try:
        with warnings.catch_warnings():
            # Python hides DeprecationWarning outside __main__; a config key the next release
            # drops is the command-line user's to fix, so theirs are shown
            warnings.filterwarnings("default", category=DeprecationWarning, module="passband")
            warnings.showwarning = _one_line  # restored on leaving: catch_warnings saves it
            return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except PassbandError as exc:  # the user can fix it: a message, no traceback
        print(f"passband {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise  # anything else is a bug: keep its traceback
        print(
            f"passband {args.command}: error: no space left on {exc.filename or 'the disk'}",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
