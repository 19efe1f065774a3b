"""Run configuration files: TOML plus ``section.key=value`` overrides, into typed objects.

A file has four sections::

    [model]    path (local directory), tokenizer (optional, defaults to the model path)
    [data]     path (.jsonl / .json / .parquet / .csv file, or a directory with <split>.jsonl),
               split, prompt_column, messages_column, prompt_template, limit
    [reward]   verifier (registered name), references (verifier keyword -> dataset column),
               penalties ([reward.penalties.<name>] tables of keyword arguments)
    [trainer]  every ``passband.trainer.GRPOConfig`` field
    [curriculum]  every ``passband.curriculum.CurriculumConfig`` field (band, success_threshold,
               prior_weight, warmup_retest_share, ...); validated by ``CurriculumConfig``

Relative paths (``[model] path``, ``[data] path``) are resolved against the working directory,
not the config file: the examples are written to be run from the repository root.
Every mistake (unknown section or key, wrong type, out-of-range value, missing file) raises
``UsageError`` naming the key and what to change; the CLI prints it without a traceback.
Only the core reads files: each package keeps its own config object and never imports this module.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passband.errors import UsageError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

__all__ = ["ModelSection", "DataSection", "RewardSection", "RunConfig", "load_config",
           "parse_overrides", "load_rows", "PENALTIES"]


@dataclass(frozen=True)
class ModelSection:
    path: str                        # local model directory (save_pretrained format)
    tokenizer: str | None = None     # tokenizer directory; default: the model path


@dataclass(frozen=True)
class DataSection:
    path: str                        # file or directory holding the training prompts
    split: str = "train"             # <split>.jsonl / .parquet inside a directory
    prompt_column: str = "prompt"    # column with the prompt text (or chat messages)
    messages_column: str | None = None  # column with chat messages instead of a prompt
    prompt_template: str | None = None  # e.g. "{question}\nAnswer in \\boxed{}." (row fields)
    limit: int | None = None         # use only the first N rows


PENALTIES = ("overlong", "length_cap", "length_normalized", "ngram_repetition",
             "repeated_paragraphs", "answer_hedging")


@dataclass(frozen=True)
class RewardSection:
    verifier: str = "math"           # registered verifier name (passband verify --list)
    references: dict[str, str] = field(default_factory=dict)  # verifier keyword -> column
    # penalty name -> its keyword arguments, e.g. [reward.penalties.overlong] max_length = 512
    penalties: dict[str, dict] = field(default_factory=dict)

    def build(self) -> tuple[Any, dict[str, str] | None]:
        """``(reward, reference_columns)`` for ``GRPOTrainer``: the verifier name as is, or a
        ``Reward`` (verifier + penalties) that maps the reference columns itself."""
        if not self.penalties:
            return self.verifier, (dict(self.references) or None)
        import passband.verifiers as v

        made = []
        for name, options in self.penalties.items():
            if name not in PENALTIES:
                raise UsageError(f"[reward.penalties] unknown penalty {name!r}; known: "
                                 f"{', '.join(PENALTIES)}")
            try:
                made.append(getattr(v, name)(**options))
            except (TypeError, ValueError) as exc:
                raise UsageError(f"[reward.penalties.{name}] {exc}") from None
        return v.Reward.from_verifier(self.verifier, dict(self.references) or None,
                                      penalties=made), None


@dataclass(frozen=True)
class RunConfig:
    model: ModelSection
    data: DataSection
    reward: RewardSection
    trainer: Any                     # passband.trainer.GRPOConfig
    source: str = ""                 # the file it came from

    def to_dict(self) -> dict[str, Any]:
        return {"model": dataclasses.asdict(self.model), "data": dataclasses.asdict(self.data),
                "reward": dataclasses.asdict(self.reward), "trainer": self.trainer.to_dict()}


_SECTIONS = {"model": ModelSection, "data": DataSection, "reward": RewardSection}


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Read ``path`` (TOML), apply ``overrides`` (``trainer.learning_rate=1e-6``), validate."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"config file {str(path)!r} not found")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    for key, value in parse_overrides(overrides or []):
        _set_dotted(raw, key, value)
    return _build(raw, str(path))


def parse_overrides(items: list[str]) -> list[tuple[str, Any]]:
    """``["trainer.beta=0.001", "model.path=/m"]`` -> typed pairs; values are parsed as TOML,
    so ``band=[0.1,0.9]`` is a list and an unquoted path stays a string."""
    pairs = []
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or "." not in key or not key.strip():
            raise UsageError(f"override {item!r} must look like section.key=value, "
                             "e.g. trainer.learning_rate=1e-6")
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text  # a bare word or path
        pairs.append((key.strip(), value))
    return pairs


def _set_dotted(raw: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = raw
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise UsageError(f"override {key!r}: {part!r} is a value, not a section")
    node[parts[-1]] = value


def _build(raw: dict, source: str) -> RunConfig:
    from passband.trainer.config import GRPOConfig  # no torch: the trainer config is plain Python

    valid = [*_SECTIONS, "trainer", "curriculum"]
    unknown = sorted(set(raw) - set(valid))
    if unknown:
        raise UsageError(f"{source}: unknown section(s) {unknown}; valid sections: {', '.join(valid)}")
    for name in ("model", "data"):
        if name not in raw:
            raise UsageError(f"{source}: missing [{name}] section with at least `path = ...`")
    sections = {name: _section(cls, raw.get(name, {}), name, source) for name, cls in _SECTIONS.items()}
    trainer = dict(raw.get("trainer", {}))
    if "curriculum" in raw:  # its own section: [curriculum] band = [0.2, 0.8], ...
        trainer["curriculum"] = _curriculum_section(raw["curriculum"], source)
    try:
        grpo = GRPOConfig.from_dict(trainer)
    except (ValueError, TypeError) as exc:
        where = "[curriculum]" if "GRPOConfig.curriculum" in str(exc) else "[trainer]"
        raise UsageError(f"{source}: {where} {exc}") from None
    return RunConfig(trainer=grpo, source=source, **sections)


def _curriculum_section(values: Any, source: str):
    """``[curriculum]`` -> a ``CurriculumConfig`` (the curriculum validates its own fields)."""
    from passband.curriculum import CurriculumConfig

    if not isinstance(values, dict):
        raise UsageError(f"{source}: [curriculum] must be a table, got {values!r}")
    try:
        return CurriculumConfig.from_options(**values)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{source}: [curriculum] {exc}") from None


def _section(cls, values: Any, name: str, source: str):
    if not isinstance(values, dict):
        raise UsageError(f"{source}: [{name}] must be a table, got {values!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise UsageError(f"{source}: unknown key(s) {unknown} in [{name}]; valid keys: "
                         f"{', '.join(fields)}")
    required = [n for n, f in fields.items()
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [n for n in required if n not in values]
    if missing:
        raise UsageError(f"{source}: [{name}] needs {', '.join(missing)}")
    for key, value in values.items():
        _check_type(f"[{name}] {key}", value, fields[key].type, source)
    return cls(**values)


def _check_type(where: str, value: Any, annotation: str, source: str) -> None:
    expected = {"str": str, "str | None": str, "int | None": int, "dict[str, str]": dict,
                "dict[str, dict]": dict}[annotation]
    ok = isinstance(value, expected) and not isinstance(value, bool)
    inner = str if annotation == "dict[str, str]" else dict
    if ok and expected is dict:
        ok = all(isinstance(k, str) and isinstance(v, inner) for k, v in value.items())
    if ok and expected is int and value < 1:
        ok = False
    if not ok:
        want = {str: "a string", int: "an integer >= 1", dict: "a table of strings"}[expected]
        if annotation == "dict[str, dict]":
            want = "a table of tables, e.g. [reward.penalties.overlong]"
        raise UsageError(f"{source}: {where} = {value!r} must be {want}")


# ---------------------------------------------------------------------- data
def load_rows(data: DataSection) -> list[dict[str, Any]]:
    """The training rows as dicts with a ``prompt`` (or ``messages``) key, per ``[data]``."""
    rows = _read_table(_data_file(Path(data.path), data.split))
    if data.limit:
        rows = rows[:data.limit]
    if not rows:
        raise UsageError(f"[data] {data.path!r} holds no rows")
    columns = list(rows[0])
    for i, row in enumerate(rows):
        if data.prompt_template is not None:
            try:
                row["prompt"] = data.prompt_template.format(**row)
            except (KeyError, IndexError) as exc:
                raise UsageError(f"[data] prompt_template uses {exc} which row {i} lacks; "
                                 f"columns: {', '.join(columns)}") from None
        elif data.messages_column is not None:
            row["messages"] = _column(row, data.messages_column, columns)
        else:
            row["prompt"] = _column(row, data.prompt_column, columns)
    return rows


def _column(row: dict, name: str, columns: list[str]) -> Any:
    if name not in row:
        raise UsageError(f"[data] column {name!r} is not in the dataset; its columns are: "
                         f"{', '.join(columns)} (set data.prompt_column or data.prompt_template)")
    return row[name]


def _data_file(path: Path, split: str) -> Path:
    if path.is_file():
        return path
    if path.is_dir():
        for ext in (".jsonl", ".json", ".parquet", ".csv"):
            if (path / f"{split}{ext}").is_file():
                return path / f"{split}{ext}"
        raise UsageError(f"[data] directory {str(path)!r} has no {split}.jsonl/.json/.parquet/.csv "
                         "(set data.split or point data.path at a file)")
    raise UsageError(f"[data] path {str(path)!r} does not exist")


def _read_table(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        with path.open() as f:
            return [json.loads(line) for line in f if line.strip()]
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        if isinstance(data, list):
            return data
        raise UsageError(f"[data] {path} must hold a JSON list of objects")
    if path.suffix not in (".parquet", ".csv"):
        raise UsageError(f"[data] {path}: unsupported file type; use .jsonl, .json, .parquet or .csv")
    from datasets import Dataset  # parquet / csv only

    reader = Dataset.from_parquet if path.suffix == ".parquet" else Dataset.from_csv
    return reader(str(path)).to_list()
