"""Every answer a math completion states, for ``answer_hedging``: read the way the extractors of
``_math_extract`` read each one, so a spelling the verifier takes as the answer is counted too.

Where the verifier looks for *the* answer, this looks for every one the model states, so it
reads more of the text: everything after the first ``</think>`` (a second ``</think>`` does not
hide what comes before it) and past the run-on markers (``Question:``, ``User:``) where the
verifier stops; code is left out, as there.
"""

from __future__ import annotations

import re
from fractions import Fraction

from passband.verifiers._math_equiv import fast_equal
from passband.verifiers._math_extract import (
    _ANSWER_IS_RE,
    _ANSWER_LINE_RE,
    _BOX_RE,
    _box_body,
    _trim_phrase,
    gsm8k_answer,
)
from passband.verifiers._math_final import CODE_RE, spelled
from passband.verifiers._text import after_reasoning

__all__ = ["candidate_answers", "distinct_answers", "stated_answers"]

_ANSWER_CHARS = 1_000  # as far into a box or phrase as the verifier reads (max_answer_chars)
_OPENS_MATH = " \t\n$*:([\\"  # what may stand between "the answer is" and its own box


def _statement_part(text: str) -> str:
    """The text after the reasoning: from the first ``</think>`` on, code left out."""
    return spelled(CODE_RE.sub("\n", after_reasoning(text, first=True)))


def stated_answers(text: str, *, max_chars: int = 20_000, limit: int = _ANSWER_CHARS) -> list[str]:
    """Every answer the completion *states* (not only the last): each box (``\\boxed{..}`` or
    ``\\boxed 5``), each "the answer is ..." / "the correct option is ...", each ``Answer:`` line
    and each ``####`` line, read as the extractors read them (see the module for where).
    ``answer_hedging`` counts how many differ."""
    text = _statement_part(text)[-max_chars:]
    found = []
    for box in _BOX_RE.finditer(text):
        body = _box_body(text, box.end(), limit)
        if body is not None and body[1] >= 0:
            found.append((box.start(), body[0]))
    for marker in _ANSWER_IS_RE.finditer(text):
        own_box = _BOX_RE.search(text, marker.end(), marker.end() + 40)
        if own_box and not text[marker.end() : own_box.start()].strip(_OPENS_MATH):
            continue  # "the answer is \\boxed{18}": its box is counted
        phrase = _trim_phrase(text[marker.end() : marker.end() + limit]) or ""
        found.append((marker.start(), phrase))
    for line in _ANSWER_LINE_RE.finditer(text):
        phrase = line.group(1).strip(" *_")
        if not phrase:  # "**Final Answer**" and the answer on the next non-empty line
            phrase = text[line.end() : line.end() + limit].strip().split("\n", 1)[0]
        inner = [m.start() for m in (_BOX_RE.search(phrase), _ANSWER_IS_RE.search(phrase)) if m]
        head = phrase[: min(inner)] if inner else phrase  # a box or marker in it is counted
        if head.count("(") > head.count(")"):  # "Answer: (my answer is 18)": an aside opens
            head = head.rsplit("(", 1)[0]
        if head.strip(_OPENS_MATH):  # "Answer: 17 (my answer is 18)": 17 is stated too
            found.append((line.start(1), _trim_phrase(head[:limit]) or ""))
    for hashes in re.finditer(r"####", text):
        found.append((hashes.start(), gsm8k_answer(text, hashes.start(), limit)))
    return [answer.strip() for _, answer in sorted(found) if answer.strip()]


def distinct_answers(answers: list[str], most: int | None = None) -> list[str]:
    """One of each group of answers the math verifier's exact comparison (``fast_equal``) reads
    as the same value: "18 apples", "$18^\\circ$" and "18\\%" state 18 as ``\\boxed{18}`` does,
    and counting them apart took a clean right answer's reward away. ``most``: stop once more
    than that many groups are found (each answer is compared with every group: 1,000 different
    boxes took 40 s, and the penalty needs only to know the cap is passed)."""
    groups: list[str] = []
    letters: dict[str, str] = {}  # option letter -> its first statement
    for answer in sorted(set(answers), key=len):  # the plainest spelling of a value leads
        option = _OPTION.match(answer)
        letter = option and (option.group(1) or option.group(3))
        if letter and letters and letter not in letters:  # "(C) 12" then "(D) 12": two options,
            groups.append(answer)  # whatever value each shows (both joined a bare "12")
        elif not any(_same(g, answer) for g in groups):
            groups.append(answer)
        if letter:
            letters.setdefault(letter, answer)
        if most is not None and len(groups) > most:
            break
    return groups


_LEAD = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[/:]\d+)?")  # 12, 1,000, 0.5, 2/3, 3:45
_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")


_OPTION = re.compile(r"^\(?([A-E])\)(.*)$|^([A-E])$")  # "(C)12", "C)12", "(C)", "C"
_NAMED = re.compile(r"^\(?[A-Za-z](?:,[A-Za-z])*\)?=(?=.)")  # "x=", "(x,y)=": names, then values
_JOINED = re.compile(r",|or|and|\\text\{(?:or|and)\}|\\quad")


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split()
)
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD_NUMBER = re.compile(
    "^((?:"
    + "|".join(sorted([*_UNITS, *_TENS, *_SCALES, "and", "-"], key=len, reverse=True))
    + ")+)(.*)$"
)
_WORD_TOKEN = re.compile("|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True)))
_APPROX = re.compile(r"\\approx|≈|\\simeq")


def _word_value(answer: str) -> str | None:
    """A number written in words at the start, with no other number after it ("onemillion",
    "twenty-fiveapples": spaces are gone), as digits; else None."""
    match = _WORD_NUMBER.match(answer.lower())
    if not match or re.search(r"\d", match.group(2)):
        return None
    total = current = 0
    for word in _WORD_TOKEN.findall(match.group(1)):
        if word in _SCALES:
            current = max(current, 1) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0
        else:
            current += _UNITS.index(word) if word in _UNITS else 20 + 10 * _TENS.index(word)
    return str(total + current)


Reading = tuple[tuple[str, ...], tuple[str, ...]]  # (names, values); no names: ()


def _readings(answer: str) -> list[Reading]:
    """The ways to read an answer as the values it states (spaces are gone: see ``_canonical``):
    "(C)12" -> the option C, or 12; "(x,y)=(1,2)" -> x=1, y=2; "x=-4orx=1" -> x=-4, x=1; "-4,1"
    and "(1,2)" -> the values in order; "2/3\\approx0.667" -> 2/3, or 0.667; "onemillion" ->
    1000000."""
    if _APPROX.search(answer):  # "\\frac{2}{3}\\approx0.667": the exact value, or its decimal
        left, right = _APPROX.split(answer, 1)
        return [((), (left,)), ((), (right,))]
    words = _word_value(answer)
    if words is not None:
        return [((), (words,))]
    option = _OPTION.match(answer)
    if option:
        letter, rest = option.group(1) or option.group(3), option.group(2)
        return [(("option",), (letter,))] + ([((), (rest,))] if rest else [])
    named = _NAMED.match(answer)
    if named and answer.count("=") == 1 and not re.search(r"or|and", answer):
        names = answer[: named.end() - 1].strip("()").split(",")
        values = _items(answer[named.end() :]) if len(names) > 1 else (answer[named.end() :],)
        return [(tuple(names), values)] if values and len(values) == len(names) else []
    if answer[:1] == "(" and answer[-1:] == ")" and "=" not in answer:
        values = _items(answer)
        return [((), (answer,))] + ([((), values)] if values else [])  # a tuple, or its items
    parts = _JOINED.split(answer)
    names = tuple(m.group(0)[:-1] for p in parts if (m := _NAMED.match(p)))
    values = tuple(_NAMED.sub("", p) for p in parts)
    if not all(values) or names and len(names) != len(values):
        return [((), (answer,))]
    if not names and re.search(r"or|\\lor", answer):  # "12 or 13": alternatives, not a list
        return [((), (answer,))]
    return [(names, values)]


def _items(text: str) -> tuple[str, ...]:
    """The top-level items of "(a,b,...)", or () when ``text`` is not one such tuple."""
    if not (text[:1] == "(" and text[-1:] == ")"):
        return ()
    items, depth, start = [], 0, 1
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and i != len(text) - 1:
            return ()  # "(1,2)+(3,4)"
        if ch == "," and depth == 1:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:-1])
    return tuple(items) if len(items) > 1 and all(items) else ()


def _agree(ra: Reading, rb: Reading) -> bool:
    (na, va), (nb, vb) = ra, rb
    if len(va) != len(vb) or ("option",) in (na, nb) and na != nb:
        return False  # two options agree only by their letters
    if na and nb and len(set(na)) == len(na):  # x=1, y=2: each name keeps its value
        if sorted(na) != sorted(nb):
            return False
        va, vb = (tuple(v for _, v in sorted(zip(n, vals))) for n, vals in ((na, va), (nb, vb)))
    elif (na and len(set(na)) == 1) or (nb and len(set(nb)) == 1):
        if na and nb and set(na) != set(nb):
            return False
        va, vb = sorted(va), sorted(vb)  # the roots of one unknown, in any order
    return all(fast_equal(x, y) is True for x, y in zip(va, vb))


def _same_values(a: str, b: str) -> bool:
    """Both state the same values once names and option text are read: "(C) 12" and "C" or
    "12" (but not "(D) 12"), "(x, y) = (1, 2)" and "(1, 2)" (but not "(y, x) = (1, 2)"), "x = -4
    or x = 1" and "-4, 1"."""
    plain = [((), (a,))], [((), (b,))]
    readings = _readings(a), _readings(b)
    if readings == plain:
        return False
    if all(r and r[0][0] == ("option",) for r in readings):  # two options: their letters decide
        readings = readings[0][:1], readings[1][:1]
    return any(_agree(ra, rb) for ra in readings[0] for rb in readings[1])


def _same(a: str, b: str) -> bool:
    """Whether two statements give one value: the verifier's exact comparison, or one is that
    value followed by words in which no other number appears ("12 - the number of cookies",
    "12: Sam has 12 cookies left", "3:45 PM"), or both state the same values once names and
    option text are set aside ("(C) 12" and "C", "(x, y) = (1, 2)" and "(1, 2)", "x = -4 or
    x = 1" and "-4, 1"); "12 or 13" stays two answers."""
    if fast_equal(a, b) or fast_equal(b, a) or _same_values(a, b):
        return True
    for short, long in ((a, b), (b, a)):
        lead = _LEAD.match(long)
        if lead and lead.end() < len(long) and (fast_equal(short, lead.group(0)) is True):
            rest = [n for n in _NUMBER.findall(long[lead.end() :]) if n != lead.group(0)]
            if not rest:
                return True
    return False


def candidate_answers(text: str) -> list[str]:
    """Every stated final answer, normalised (spaces, ``$``, trailing period dropped): the math
    verifier's own reading of each statement (``_math_statements.stated_answers``), so a spelling
    it accepts as the answer ("Final Answer:", " #### 42", ``\\boxed 5``) is counted too, and
    the working inside ``<think>`` is not."""
    normalised = (_canonical(a) for a in stated_answers(text))
    return [a for a in normalised if a]


def _canonical(answer: str) -> str:
    """Cheap normal form so ``\\frac{1}{2}``, ``1/2``, ``0.50`` (and ``1,000``/``1000``) count once."""
    a = "".join(answer.split()).strip("$.")
    for old, new in (
        ("\\!", ""),
        ("\\,", ""),
        ("\\left", ""),
        ("\\right", ""),
        ("\\dfrac", "\\frac"),
        ("\\tfrac", "\\frac"),
    ):
        a = a.replace(old, new)
    if a.endswith(")") and a.count(")") > a.count("("):  # "(my answer is 18)": 18
        a = a[:-1]
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", a):
        a = a.replace(",", "")
    m = re.fullmatch(r"(-?)(?:\\frac\{(\d+)\}\{(\d+)\}|(\d+)/(\d+))", a)
    try:
        if m:
            num, den = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
            return str(Fraction(int(num), int(den)) * (-1 if m.group(1) else 1))
        if re.fullmatch(r"-?\d+(?:\.\d+)?", a) and len(a) < 40:
            return str(Fraction(a))
    except ZeroDivisionError:
        pass
    return a
