"""Strict string checks for ``json_schema``: formats and ``pattern`` as JSON Schema means them.

jsonschema's own checkers are lenient where a reward must not be:
- ``email`` only asks for an ``@`` somewhere (``"@"`` and ``"not an email@"`` passed);
- ``uuid`` accepts what Python's ``UUID`` parses, with a hyphen in four places (an extra hyphen,
  a ``+`` or a full-width digit passed);
- ``duration`` accepts fractions (``P1.5Y``), which RFC 3339's grammar has not;
- several checkers accept a trailing newline (``"2023-01-01T00:00:00Z\\n"``, ``"example.com\\n"``).
``strict_checker(cls)`` is the draft's own checker with those formats checked again here first.

``pattern`` is an ECMA-262 regular expression: ``$`` matches only at the end of the string,
``\\d`` and ``\\w`` only ASCII, and ``.`` no line terminator. Python's ``re.search`` lets
``^[0-9]{3}$`` match ``"123\\n"`` and ``\\d`` match ``"١٢٣"``; ``ecma_pattern`` translates the
pattern (``_ecma``) before compiling it.
"""

from __future__ import annotations

import functools
import ipaddress
import re

__all__ = ["ecma_pattern", "ecma_search", "formats_named", "strict_checker", "STANDARD_FORMATS"]

STANDARD_FORMATS = frozenset(
    "date-time date time duration email idn-email hostname idn-hostname ipv4 ipv6 uri "
    "uri-reference iri iri-reference uuid uri-template json-pointer relative-json-pointer "
    "regex".split()
)
# formats whose grammar has no whitespace at either end (json-pointer tokens and regexes may)
_NO_EDGE_SPACE = STANDARD_FORMATS - {"json-pointer", "relative-json-pointer", "regex"}

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_D = r"[0-9]+"
_DUR_TIME = rf"T(?:{_D}H(?:{_D}M(?:{_D}S)?)?|{_D}M(?:{_D}S)?|{_D}S)"
_DUR_DATE = rf"(?:{_D}Y(?:{_D}M(?:{_D}D)?)?|{_D}M(?:{_D}D)?|{_D}D)(?:{_DUR_TIME})?"
_DURATION = re.compile(rf"P(?:{_DUR_DATE}|{_DUR_TIME}|{_D}W)")  # RFC 3339, appendix A
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = re.compile(
    rf"{_ATOM}(?:\.{_ATOM})*|\"(?:[^\"\\\r\n]|\\.)+\""
)  # RFC 5322 dot-atom / quoted
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_IDN_LABEL = re.compile(r"[^\W_](?:[\w-]{0,61}[^\W_])?")
_IDN_LOCAL = re.compile(r"[^\s@\"(),:;<>\[\\\]]+(?:\.[^\s@\"(),:;<>\[\\\].]+)*")
_ADDRESS_LITERAL = re.compile(r"\[(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|IPv6:[0-9A-Fa-f:.]+)\]")


def _domain(text: str, label: re.Pattern) -> bool:
    if _ADDRESS_LITERAL.fullmatch(text):  # [1.2.3.4] or [IPv6:...]: a real address inside
        inner = text[1:-1].removeprefix("IPv6:")
        try:
            ipaddress.ip_address(inner)
        except ValueError:
            return False
        return (":" in inner) == text.startswith("[IPv6:")
    labels = text.split(".")
    return len(text) <= 253 and all(label.fullmatch(part) for part in labels)


def _email(text: str, idn: bool) -> bool:
    """``local@domain``: one ``@`` outside a quoted local part, a dot-atom or quoted local part
    of at most 64 characters, and a host name (labels of letters, digits and hyphens) or an
    address literal."""
    local, at, domain = text.rpartition("@")
    if not at or not local or not domain or len(local) > 64:
        return False
    local_ok = (_IDN_LOCAL if idn else _LOCAL).fullmatch(local) or _LOCAL.fullmatch(local)
    return bool(local_ok) and _domain(domain, _IDN_LABEL if idn else _LABEL)


_STRICT = {
    "email": lambda s: _email(s, idn=False),
    "idn-email": lambda s: _email(s, idn=True),
    "uuid": lambda s: bool(_UUID.fullmatch(s)),
    "duration": lambda s: bool(_DURATION.fullmatch(s)),
}


# A leap second (RFC 3339 5.7): second 60 is valid only at 23:59 UTC, after the offset is applied
_LEAP = re.compile(
    r"(?P<h>[0-9]{2}):(?P<m>[0-9]{2}):60(?:\.[0-9]+)?(?P<off>[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _without_leap_second(name: str, text: str) -> str | None:
    """``text`` with a valid leap second read as second 59 (the checkers refuse second 60), the
    text itself when it has none, None when its second 60 is not at 23:59 UTC."""
    at = text.find("T") if name == "date-time" else 0
    if at < 0:
        at = text.find("t")
    leap = _LEAP.fullmatch(text, at + (name == "date-time"))
    if name not in ("date-time", "time") or at < 0 or not leap:
        return text
    off = leap.group("off")
    shift = 0 if off in "Zz" else (1 if off[0] == "+" else -1) * (int(off[1:3]) * 60 + int(off[4:]))
    if (int(leap.group("h")) * 60 + int(leap.group("m")) - shift) % 1440 != 23 * 60 + 59:
        return None
    return text[: leap.start() + 6] + "59" + text[leap.start() + 8 :]


def _strictly(name: str, check, raises, schema: bool = False):
    """``check`` (the draft's own) behind passband's stricter rule for ``name``. ``schema``: the
    checker of a schema's own keywords, where a ``pattern`` written in Python's syntax, which
    datasets carry, still compiles (``_ecma`` reads it)."""

    def strict(instance) -> bool:
        if not isinstance(instance, str):
            return check(instance)  # formats apply to strings only; the draft's rule decides
        if name in _NO_EDGE_SPACE and instance != instance.strip():
            return False
        if name in _STRICT and not _STRICT[name](instance):
            return False
        if name == "regex":
            return _is_ecma_regex(instance, python_ok=schema)
        instance = _without_leap_second(name, instance)
        return instance is not None and check(instance)

    return strict, raises


@functools.lru_cache(maxsize=32)
def strict_checker(cls, schema: bool = False):
    """A copy of ``cls.FORMAT_CHECKER`` (one per draft) with the stricter rules above;
    ``schema=True`` for checking a schema itself (see ``_strictly``). A standard format the
    draft does not define (``uuid`` and ``duration`` came in 2019-09, ``date`` in draft 7) is
    checked by the latest draft's rule: a draft-07 schema naming ``uuid`` means a UUID."""
    from jsonschema import FormatChecker, validators

    checks = {
        **{
            name: pair
            for name, pair in validators.Draft202012Validator.FORMAT_CHECKER.checkers.items()
            if name in STANDARD_FORMATS
        },
        **cls.FORMAT_CHECKER.checkers,
    }
    checker = FormatChecker(formats=())
    checker.checkers = {
        name: _strictly(name, check, raises, schema) for name, (check, raises) in checks.items()
    }
    return checker


# ECMA-262 classes, without Python's Unicode reading: \d and \w are ASCII there, \s is
# Unicode there too (kept), and . leaves out every line terminator, not only \n.
_IN_CLASS = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "D": r"\x00-/:-\U0010ffff",  # all but 0-9 ([^\D] is 0-9 only, not every script's digits)
    "W": r"\x00-/:-@\[-\^`\{-\U0010ffff",  # all but A-Za-z0-9_
}
_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "b": r"(?a:\b)",  # a word boundary between ASCII word characters and the rest
    "B": r"(?a:\B)",
}
_DOT = "[^\\n\\r\\u2028\\u2029]"


def _ecma(pattern: str) -> str:
    """``pattern`` in Python's syntax with ECMA-262's meaning: ``$`` (outside a class, not
    escaped) as ``\\Z``, ``\\d`` / ``\\w`` / ``\\D`` / ``\\W`` / ``\\b`` ASCII, ``.``
    without any line terminator, ``(?<name>`` as ``(?P<name>`` and ``\\k<name>`` as ``(?P=name)``."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and pattern.startswith("\\k<", i) and ">" in pattern[i + 3 :]:
            end = pattern.index(">", i)
            out.append(f"(?P={pattern[i + 3 : end]})")  # a named backreference
            i = end + 1
            continue
        if ch == "\\":
            esc = pattern[i + 1 : i + 2]
            table = _IN_CLASS if in_class else _OUTSIDE
            out.append(table.get(esc, pattern[i : i + 2]))
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":  # a class opens; a ] right after [ or [^ is literal (Python's reading)
            j = i + 1 + (pattern[i + 1 : i + 2] == "^")
            j += pattern[j : j + 1] == "]"
            out.append(pattern[i:j])
            i, in_class = j, True
            continue
        elif ch == "$":
            ch = r"\Z"
        elif ch == ".":
            ch = _DOT
        elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            ch, i = "(?P<", i + 2  # a named group
        out.append(ch)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def ecma_pattern(pattern: str) -> re.Pattern:
    """``pattern`` compiled as ECMA-262 reads it (see ``_ecma`` and the module). Unicode property
    classes (``\\p{L}``), which ``re`` lacks, compile with the ``regex`` package."""
    translated = _ecma(pattern)
    if re.search(r"\\[pP]\{", translated):
        import regex

        engine = regex.compile
    else:
        engine = re.compile
    bare = translated.replace(_OUTSIDE["b"], r"\b").replace(_OUTSIDE["B"], r"\B")
    if bare != translated:  # a quantified \b (\b+) has nothing to repeat, as in ECMA-262, though
        engine(bare)  # its ASCII group would compile
    return engine(translated)


PATTERN_BUDGET = 1.0  # seconds one schema ``pattern`` may take on one string


@functools.lru_cache(maxsize=1024)
def _bounded_pattern(pattern: str):
    """``pattern`` translated once (``_ecma``) and compiled by ``regex``, whose matches take a
    timeout; None when only ``re`` reads it."""
    import regex

    try:
        return regex.compile(_ecma(pattern))
    except Exception:  # noqa: BLE001 - regex.error and the like
        return None


def ecma_search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` (ECMA-262) matches somewhere in ``text``; None when matching ran past
    ``PATTERN_BUDGET``: a string that makes the pattern backtrack for ever is no match (a
    ``timeout`` is masked in training, so the string escaped its zero)."""
    bounded = _bounded_pattern(pattern)
    if bounded is None:  # read only by ``re``: unbounded, as before
        return ecma_pattern(pattern).search(text) is not None
    try:
        return bounded.search(text, timeout=PATTERN_BUDGET) is not None
    except TimeoutError:
        return None


# Python-only syntax: \A and \Z; outside escapes and classes, named groups (?P<..>), inline
# flags (?i) / (?i:..), atomic groups (?>..), possessive quantifiers (a++, a*+, a?+, a{2}+)
_PYTHON_ANCHOR = re.compile(r"(?<!\\)(?:\\\\)*\\[AZ]")
_ESCAPE = re.compile(r"\\[pPk][{<][^}>]*[}>]|\\.", re.DOTALL)
_CLASS = re.compile(r"\[\^?\]?[^\]]*\]")
_PYTHON_ONLY = re.compile(r"\(\?P[<=>]|\(\?[aiLmsux-]+[):]|\(\?>|[*+?]\+|\{\d+(?:,\d*)?\}\+")


def _python_only(text: str) -> bool:
    plain = _CLASS.sub("_", _ESCAPE.sub("_", text))
    return bool(_PYTHON_ANCHOR.search(text) or _PYTHON_ONLY.search(plain))


def _is_ecma_regex(text: str, python_ok: bool = False) -> bool:
    """The ``regex`` format: ECMA-262 syntax, so a value only Python reads (``(?i)``,
    ``(?P<y>..)``, ``\\Z``, ``a++``) is not one (``python_ok``: a schema's own pattern)."""
    if not python_ok and _python_only(text):
        return False
    try:
        ecma_pattern(text)
    except re.error:
        return False
    except Exception as exc:  # regex.error; an OverflowError is a value too big to check
        if type(exc).__module__.startswith("regex"):
            return False
        raise
    return True


def formats_named(schema) -> set[str]:
    """Every ``format`` a schema names, at any depth (an explicit stack: a schema nested deeper
    than the recursion limit is still searched, so an unchecked format cannot hide in it)."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("format"), str):
                found.add(node["format"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found
