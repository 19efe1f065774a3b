"""The errors a user can cause, in one small hierarchy; everything else is a bug.

::

    PassbandError                    anything the user can fix; the CLI prints it and exits 2
    ├── UsageError                   a wrong flag, path or combination of options
    │   ├── ConfigError (ValueError)     a TOML key, type or value; names the field
    │   │   ├── UnknownSettingError (TypeError)  a keyword a config class has no field for
    │   │   ├── UnknownNameError (KeyError)      a verifier / penalty / advantage name not registered
    │   │   └── WrongTypeError (TypeError)       an argument of the wrong kind (a reward of 3)
    │   └── DataError (ValueError)       a table or row: names file:line or the row and column
    ├── RunDirError (FileExistsError)    output_dir is in use by another run, or holds one
    ├── CheckpointError                  no checkpoint can be loaded; names the file
    └── DiskFullError (OSError)          "no space left on <path>"

``passband.cli`` turns a ``PassbandError`` into ``passband CMD: error: <message>`` and exit code 2;
any other exception is a bug and keeps its traceback. The built-in bases (``ValueError``, ...) let
code written against the standard exceptions keep catching what it caught before.

This module imports nothing, so every floor (sandbox, verifiers, curriculum, trainer) may raise
these errors, and list what went wrong with ``first_few``, without importing the rest of the
core: it is the one exception to the floors.
"""

__all__ = [
    "PassbandError",
    "UsageError",
    "ConfigError",
    "UnknownSettingError",
    "UnknownNameError",
    "WrongTypeError",
    "DataError",
    "RunDirError",
    "CheckpointError",
    "DiskFullError",
]  # the error classes; ``first_few``, ``did_you_mean`` and ``unknown_names`` help their messages


class PassbandError(Exception):
    """Base of every error a user can cause and fix."""


class UsageError(PassbandError):
    """A mistake on the command line or in the arguments of a call: the message says what to change."""


class ConfigError(UsageError, ValueError):
    """A configuration key, type or value is wrong; the message names the field and the value."""


class UnknownSettingError(ConfigError, TypeError):
    """A keyword a config class has no field for (also a ``TypeError``, as Python raises for one)."""


class UnknownNameError(ConfigError, KeyError):
    """A name that is not registered (a verifier, penalty, advantage or loss); the message lists
    the known ones. Also a ``KeyError``, as the lookup raised before."""

    def __str__(self) -> str:  # a KeyError prints its message quoted, escapes and all
        return str(self.args[0]) if self.args else ""


class WrongTypeError(ConfigError, TypeError):
    """An argument of the wrong kind, such as a reward that is neither a verifier name nor a
    callable (also a ``TypeError``, as Python raises for one)."""


class DataError(UsageError, ValueError):
    """A dataset cannot be used as given: the message names ``file:line`` or the row and column."""


class RunDirError(PassbandError, FileExistsError):
    """The run directory is in use by another run, or holds a run not asked to be resumed."""


class CheckpointError(PassbandError):
    """No usable checkpoint: the message names the checkpoint and the damaged file."""


class DiskFullError(PassbandError, OSError):
    """A write ran out of space; the message says "no space left on <path>"."""


def did_you_mean(name: object, known) -> str:
    """`` Did you mean 'x'?`` for the closest of ``known`` names, or ``""``."""
    import difflib

    close = difflib.get_close_matches(str(name), list(known), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def unknown_names(kind: str, unknown, known) -> str:
    """``unknown <kind>(s) [...].``, the closest known name of each, and every known name (in
    ``known``'s order): ``... Did you mean 'band'? Valid: band, success_threshold, ...``."""
    hints = "".join(did_you_mean(u, known) for u in sorted(unknown))
    return f"unknown {kind}(s) {sorted(unknown)}.{hints} Valid: {', '.join(map(str, known))}"


def first_few(problems: list[str], shown: int = 5) -> str:
    """``problems`` for a message: the first ``shown`` joined by "; ", the rest counted."""
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more
