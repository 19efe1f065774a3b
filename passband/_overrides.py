"""Command-line overrides of a run's TOML (``section.key=value``): parsed as TOML values, checked
as the command line's own (an unknown key or a bad value is named as the override, not as the
config file's), and set into the file's table before it is built (``passband.config``).
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from typing import Any

from passband.errors import ConfigError, unknown_names

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

__all__ = ["blamed", "check_override_key", "parse_overrides", "set_dotted"]


def blamed(exc: ConfigError, from_file: dict, pairs: list, source: str, build) -> ConfigError:
    """The error named as the command line's when an override's value caused it: the first
    override that alone, applied to the file, fails the same way under ``build(raw, source)``.
    Only on the error path."""
    if not pairs:
        return exc
    message = str(exc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the successful build already warned
        if _build_error(build, from_file, source) == message:
            return exc  # the file alone fails so: it is the file's
        for key, value in pairs:
            raw = copy.deepcopy(from_file)
            set_dotted(raw, key, value)
            if _build_error(build, raw, source) == message:
                where = f"command-line override {key}={value!r}"
                return ConfigError(where + message.removeprefix(source))
    return exc


def _build_error(build, raw: dict, source: str) -> str | None:
    try:
        build(raw, source)
    except ConfigError as exc:
        return str(exc)
    return None


def check_override_key(key: str, value: Any, sections: dict) -> None:
    """An override's section and key, checked as the command line's (an unknown one would be
    reported as the config file's)."""
    from passband.curriculum import CurriculumConfig
    from passband.trainer.config import GRPOConfig

    section, _, name = key.partition(".")
    known = {**sections, "trainer": GRPOConfig, "curriculum": CurriculumConfig}
    where = f"command-line override {key}={value!r}"
    if section not in known:
        raise ConfigError(f"{where}: {unknown_names('section', [section], known)}")
    fields = [f.name for f in dataclasses.fields(known[section])]
    accepted = CurriculumConfig.option_names() if section == "curriculum" else set(fields)
    if "." not in name and name not in accepted:
        kind = {"trainer": "trainer setting", "curriculum": "curriculum option"}.get(
            section, f"[{section}] key"
        )
        raise ConfigError(f"{where}: {unknown_names(kind, [name], fields)}")


def parse_overrides(items: list[str]) -> list[tuple[str, Any]]:
    """``["trainer.beta=0.001", "model.path=/m"]`` -> typed pairs; values are parsed as TOML,
    so ``band=[0.1,0.9]`` is a list and an unquoted path stays a string."""
    pairs = []
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or "." not in key or not key.strip():
            raise ConfigError(
                f"override {item!r} must look like section.key=value, "
                "e.g. trainer.learning_rate=1e-6"
            )
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text  # a bare word or path
        pairs.append((key.strip(), value))
    return pairs


def set_dotted(raw: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = raw
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {key!r}: {part!r} is a value, not a section")
    node[parts[-1]] = value
