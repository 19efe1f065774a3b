"""Run configuration files: TOML plus ``section.key=value`` overrides, into typed objects.

A file has four sections::

    [model]    path (local directory), tokenizer (optional, defaults to the model path)
    [data]     path (a table: passband.curriculum.read_rows, the one reader, documents each
               format), split, prompt_column, messages_column, prompt_template, limit
    [reward]   verifier (registered name or module:attribute), references (verifier keyword ->
               dataset column),
               penalties ([reward.penalties.<name>] tables of keyword arguments)
    [trainer]  every ``passband.trainer.GRPOConfig`` field
    [curriculum]  every ``passband.curriculum.CurriculumConfig`` field (band, success_threshold,
               prior_weight, warmup_retest_share, ...); validated by ``CurriculumConfig``

Relative paths (``[model] path``, ``[data] path``) are resolved against the working directory,
not the config file: the examples are written to be run from the repository root.
Every mistake (unknown section or key, wrong type, out-of-range value, missing file) raises
``ConfigError`` naming the key and what to change; a bad table or row raises ``DataError`` naming
``file:line`` or the row; the CLI prints either without a traceback. Types are exact: TOML has
booleans, so ``use_curriculum = "false"`` is refused rather than read as a true string.
Only the core reads files: each package keeps its own config object and never imports this module.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passband._overrides import blamed, check_override_key, parse_overrides, set_dotted
from passband.errors import ConfigError, DataError, unknown_names

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

__all__ = [
    "ModelSection",
    "DataSection",
    "RewardSection",
    "RunConfig",
    "load_config",
    "parse_overrides",
    "load_rows",
    "read_table",
    "prompt_rows",
]


@dataclass(frozen=True)
class ModelSection:
    path: str
    """Local model directory (save_pretrained format)."""
    tokenizer: str | None = None
    """Tokenizer directory; default: the model path."""


@dataclass(frozen=True)
class DataSection:
    path: str
    """File or directory holding the training prompts."""
    split: str = "train"
    """Which ``<split>.jsonl`` / ``.json`` / ``.parquet`` / ``.csv`` to read inside a directory."""
    prompt_column: str = "prompt"
    """Column with the prompt text (or chat messages, a final assistant message kept as a prefill);
    one named ``messages`` is read as ``messages_column``."""
    messages_column: str | None = None
    """Column with chat messages instead of a prompt."""
    prompt_template: str | None = None
    """A ``str.format`` template over the row's fields, e.g. ``{question} Answer in \\boxed{}.``;
    used instead of ``prompt_column``."""
    limit: int | None = None
    """Use only the first N rows."""

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ValueError(
                f"limit = {self.limit!r} must be an integer >= 1 (or left out: all rows)"
            )


@dataclass(frozen=True)
class RewardSection:
    verifier: str = "math"
    """Registered verifier name (passband verify --list)."""
    references: dict[str, str] = field(default_factory=dict)
    """Verifier keyword -> dataset column, e.g. ``{ answer = "answer" }``."""
    penalties: dict[str, dict] = field(default_factory=dict)
    """Penalty name -> its keyword arguments, e.g. [reward.penalties.overlong] max_length = 512."""

    def build(self) -> tuple[Any, dict[str, str] | None]:
        """``(reward, reference_columns)`` for ``GRPOTrainer``: the verifier (a registered name
        as is, ``module:attr`` imported), or a ``Reward`` (verifier + penalties) that maps the
        reference columns itself."""
        from passband._verifier_spec import resolve_verifier

        verifier = resolve_verifier(self.verifier, where="[reward] verifier")
        if not self.penalties:
            return verifier, (dict(self.references) or None)
        import passband.verifiers as v

        made = []
        for name, options in self.penalties.items():
            try:
                factory = v.get_penalty(name)  # the verifiers' registry: user penalties count
            except KeyError as exc:
                raise ConfigError(f"[reward.penalties] {exc.args[0]}") from None
            try:
                made.append(factory(**options))
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"[reward.penalties.{name}] {exc}") from None
        return v.Reward.from_verifier(verifier, dict(self.references) or None, penalties=made), None


@dataclass(frozen=True)
class RunConfig:
    model: ModelSection
    """The ``[model]`` section."""
    data: DataSection
    """The ``[data]`` section."""
    reward: RewardSection
    """The ``[reward]`` section."""
    trainer: Any
    """A ``passband.trainer.GRPOConfig``."""
    source: str = ""
    """The file it came from."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": dataclasses.asdict(self.model),
            "data": dataclasses.asdict(self.data),
            "reward": dataclasses.asdict(self.reward),
            "trainer": self.trainer.to_dict(),
        }


_SECTIONS = {"model": ModelSection, "data": DataSection, "reward": RewardSection}


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Read ``path`` (TOML), apply ``overrides`` (``trainer.learning_rate=1e-6``), validate."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(_a_directory(path))
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} not found")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    pairs = parse_overrides(overrides or [])
    from_file = copy.deepcopy(raw)
    for key, value in pairs:
        check_override_key(key, value, _SECTIONS)
        set_dotted(raw, key, value)
    try:
        return _build(raw, str(path), band_override="trainer.band" in {k for k, _ in pairs})
    except ConfigError as exc:
        raise blamed(exc, from_file, pairs, str(path), _build) from None


def _a_directory(path: Path) -> str:
    """Why a directory is no config file, and what to pass instead (a run directory: the TOML
    its run was started with, which is not kept in it)."""
    if any((path / name).exists() for name in ("config.json", "metrics.jsonl", "checkpoints")):
        return (
            f"{str(path)!r} is a run directory, not a config file; pass the TOML config the run "
            f"was started with (its [trainer] output_dir names {str(path)!r}); "
            f"`passband report {path}` summarizes the run itself"
        )
    return (
        f"{str(path)!r} is a directory, not a config file; pass a TOML file ([model], [data], ...)"
    )


def _build(raw: dict, source: str, band_override: bool = False) -> RunConfig:
    from passband.trainer.config import GRPOConfig  # no torch: the trainer config is plain Python

    valid = [*_SECTIONS, "trainer", "curriculum"]
    unknown = sorted(set(raw) - set(valid))
    if unknown:
        raise ConfigError(f"{source}: {unknown_names('section', unknown, valid)}")
    for name in ("model", "data"):
        if name not in raw:
            raise ConfigError(f"{source}: missing [{name}] section with at least `path = ...`")
    sections = {
        name: _section(cls, raw.get(name, {}), name, source) for name, cls in _SECTIONS.items()
    }
    trainer = dict(raw.get("trainer", {}))
    curriculum = raw.get("curriculum", {})
    _check_once(trainer, curriculum, source)
    if isinstance(trainer.get("band"), list) and isinstance(curriculum, dict):  # the alias
        _warn_band_alias(  # (another type: [trainer] names the error)
            "command line (trainer.band=...)" if band_override else source, trainer["band"]
        )
        curriculum = {**curriculum, "band": trainer.pop("band")}
    if "curriculum" in raw or curriculum:  # its own section: [curriculum] band = [0.2, 0.8], ...
        trainer["curriculum"] = _curriculum_section(curriculum, source)
    try:
        grpo = GRPOConfig.from_dict(trainer)
    except (ValueError, TypeError) as exc:  # ConfigError included; the message names the field
        where = "[curriculum]" if "GRPOConfig.curriculum" in str(exc) else "[trainer]"
        raise ConfigError(f"{source}: {where} {exc}") from None
    return RunConfig(trainer=grpo, source=source, **sections)


def _check_once(trainer: dict, curriculum: Any, source: str) -> None:
    """A setting both sections can hold is set in one: ``[curriculum] band`` (``[trainer] band``
    is its deprecated alias) and ``[trainer] group_size`` (the curriculum takes the run's)."""
    if not isinstance(curriculum, dict):
        return  # _curriculum_section names the problem
    if "band" in trainer and "band" in curriculum:
        raise ConfigError(
            f"{source}: band is set in [trainer] ({trainer['band']!r}) and in [curriculum] "
            f"({curriculum['band']!r}); set it once, in [curriculum] band ([trainer] band is "
            "a deprecated alias)"
        )
    for key in ("group_size", "group_size_hint"):
        if key in curriculum:
            raise ConfigError(
                f"{source}: [curriculum] {key} = {curriculum[key]!r}: the curriculum uses the "
                "run's group size; set [trainer] group_size instead"
            )


def _warn_band_alias(source: str, band: Any) -> None:
    """The deprecation, pointed at the config file (and its line) rather than at our code."""

    lineno = 1
    try:
        lines = Path(source).read_text(encoding="utf-8").splitlines()
        lineno = next(i for i, line in enumerate(lines, 1) if line.strip().startswith("band"))
    except (OSError, StopIteration):
        pass  # an override (trainer.band=...) or a source that is not a file
    warnings.warn_explicit(
        f"{source}: [trainer] band = {band!r} is deprecated; set it as [curriculum] band",
        DeprecationWarning,
        filename=source,
        lineno=lineno,
        module="passband.config",  # the CLI shows passband's deprecations
    )


def _curriculum_section(values: Any, source: str):
    """``[curriculum]`` -> a ``CurriculumConfig`` (the curriculum validates its own fields)."""
    from passband.curriculum import CurriculumConfig

    if not isinstance(values, dict):
        raise ConfigError(f"{source}: [curriculum] must be a table, got {values!r}")
    try:
        return CurriculumConfig.from_options(**values)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{source}: [curriculum] {exc}") from None


def _section(cls, values: Any, name: str, source: str):
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: [{name}] must be a table, got {values!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ConfigError(f"{source}: [{name}] {unknown_names('key', unknown, fields)}")
    required = [
        n
        for n, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [n for n in required if n not in values]
    if missing:
        raise ConfigError(f"{source}: [{name}] needs {', '.join(missing)}")
    for key, value in values.items():
        _check_type(f"[{name}] {key}", cls, key, value, source)
    try:
        return cls(**values)
    except ValueError as exc:  # a value rule of the section (e.g. limit >= 1)
        raise ConfigError(f"{source}: [{name}] {exc}") from None


def _check_type(where: str, cls: type, key: str, value: Any, source: str) -> None:
    from passband.trainer._fieldtypes import type_problem  # no torch: plain typing

    problem = type_problem(cls, key, value)
    if problem is not None:
        example = ", e.g. [reward.penalties.overlong]" if key == "penalties" else ""
        raise ConfigError(f"{source}: {where} = {value!r} {problem}{example}")


# ---------------------------------------------------------------------- data
def load_rows(data: DataSection) -> list[dict[str, Any]]:
    """The training rows as dicts with a ``prompt`` (or ``messages``) key, per ``[data]``.

    The table is read by ``passband.curriculum.read_rows``, the reader ``verify`` and ``score`` use
    too; the trainer then checks every row (``passband.trainer._data.check_rows``).
    """
    return prompt_rows(data, read_table(data))


def read_table(data: DataSection) -> list[dict[str, Any]]:
    """The ``[data]`` table's rows as they are in the file (``limit`` applied): the ``path``
    half of ``load_rows``; ``DataError`` when it does not exist or holds no rows."""
    from passband.curriculum.tables import read_rows

    if not Path(data.path).exists():
        raise DataError(f"[data] path {data.path!r} does not exist")
    rows = read_rows(data.path, split=data.split)
    if data.limit:
        rows = rows[: data.limit]
    if not rows:
        raise DataError(f"[data] {data.path!r} holds no rows")
    return rows


def prompt_rows(data: DataSection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (``read_table``'s) with the ``prompt`` (or ``messages``) key ``[data]`` asks for:
    the template, messages or prompt column half of ``load_rows``."""
    from passband.curriculum.prescore_config import template_problem

    columns = list(rows[0])
    problem = data.prompt_template and template_problem(data.prompt_template)
    if problem:
        raise DataError(f"[data] prompt_template {data.prompt_template!r} {problem}")
    for i, row in enumerate(rows):
        if data.prompt_template is not None:
            try:
                row["prompt"] = data.prompt_template.format(**row)
            except (KeyError, IndexError) as exc:
                raise DataError(
                    f"[data] prompt_template uses {exc} which row {i} lacks; "
                    f"its columns: {', '.join(map(str, row))}"
                ) from None
        elif data.messages_column is not None or data.prompt_column == "messages":
            column = data.messages_column or data.prompt_column  # SFT-style: as passband score
            row["messages"] = _column(row, i, column, columns)  # asks, answer not shown
            if row.get("prompt") is not None:  # training would ask it instead of the messages
                raise DataError(
                    f"[data] reads the prompts from the chat messages in {column!r}, but row {i} "
                    "also has a 'prompt' column, which training asks first; drop or rename it, "
                    "or set [data] prompt_column = 'prompt' to ask it"
                )
        else:
            row["prompt"] = _column(row, i, data.prompt_column, columns)
    return rows


def _column(row: dict, i: int, name: str, columns: list[str]) -> Any:
    if name not in row:
        where, have = ("the dataset", columns) if i == 0 else (f"row {i}", list(row))
        raise DataError(
            f"[data] column {name!r} is not in {where}; its columns are: "
            f"{', '.join(map(str, have))} (set data.prompt_column or data.prompt_template)"
        )
    return row[name]


def __getattr__(name: str) -> Any:
    """``PENALTIES``: a deprecated copy of ``passband.verifiers.penalty_names()``."""
    if name != "PENALTIES":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    import passband.verifiers as v

    warnings.warn(
        "passband.config.PENALTIES is deprecated and goes in the next release; "
        "use passband.verifiers.penalty_names()",
        DeprecationWarning,
        stacklevel=2,
    )
    return tuple(v.penalty_names())
