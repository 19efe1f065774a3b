r"""What may stand at the top level of an answer: an allow-list.

math-verify reads one side of a construct it does not know and drops the rest, so ``x \approx 5``,
``6 \Rightarrow 5``, ``3 \equiv 4``, ``3 \\ 4``, ``3 \tag{4}`` or ``x ≯ 5`` were graded as one of
their numbers. A deny-list of such commands never ends; instead ``foreign_part`` accepts at the
top level of an answer (outside ``{...}`` groups) only the commands of a value: numbers' and
functions' names, operators, fonts, brackets and spacing, the relations that have their own rules
(``=``, ``\le``/``\ge``, ``\ne``, ``\in``) and ``\approx`` between an exact value and its decimal.
Anything else the gold itself does not use makes the answer no single value: another command,
a math symbol not spelled as LaTeX, ``&`` or ``\\`` outside a matrix, an environment other than
a matrix, set operations between numbers (``3 \cup 4``), or an ASCII arrow (``->``, ``=>``, ``=/=``).
The gold's own top level is allowed as well (a gold ``x \to \infty`` lets ``\to`` through).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["foreign_part"]

_GREEK = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi "
    "omicron pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega "
    "Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega"
)
_ALLOWED = frozenset(
    (
        _GREEK + " infty emptyset varnothing circ degree prime ell hbar imath jmath partial nabla "
        "dots ldots cdots ddots vdots dotsc dotsb dotsm "
        "cdot times div pm mp ast star over choose bmod pmod mod "
        "frac dfrac tfrac cfrac sqrt binom dbinom tbinom left right middle big Big bigg Bigg "
        "bigl bigr Bigl Bigr biggl biggr Biggl Biggr "
        "text textbf textit textrm textnormal textsf texttt mathrm mathbf mathit mathbb mathcal "
        "mathsf mathfrak mathscr boldsymbol bm bf rm it mbox hbox operatorname displaystyle "
        "textstyle tiny scriptsize footnotesize small normalsize large Large LARGE huge Huge "
        "nonumber notag sfrac overline underline bar hat widehat vec tilde widetilde dot ddot "
        "overrightarrow overleftrightarrow overarc arc overbrace underbrace overset underset "
        "sin cos tan cot sec csc arcsin arccos arctan arccot arcsec arccsc sinh cosh tanh coth "
        "sech csch log ln lg exp lim limsup liminf max min gcd lcm det deg arg sup inf Pr dim ker "
        "sum prod int iint oint limits nolimits euro pounds "
        "lfloor rfloor lceil rceil vert lvert rvert Vert lVert rVert langle rangle "
        "quad qquad angle triangle "
        "le leq ge geq ne neq lt gt leqslant geqslant in boxed"
    ).split()
)
_SET_OPS = frozenset({"cup", "cap", "setminus"})
_APPROX = frozenset({"approx", "simeq"})
# a derivation's step to its result, "2x = 10 \implies x = 5" (equations on every side), or
# "\therefore 5" (nothing on one side)
_STEPS = ("implies", "Rightarrow", "Longrightarrow", "therefore")
_STEP_RE = re.compile(rf"\\(?:{'|'.join(_STEPS)})(?![A-Za-z])")
# a congruence, "x \equiv 3 \pmod{5}": the modulus stated after it
_CONGRUENCE_RE = re.compile(r"\\equiv(?![A-Za-z]).*\\(?:pmod|bmod|mod)(?![A-Za-z])")
# spacing between two values ("3 \hspace{1cm} 4", read as 4); before a unit it stays
_SPACING = frozenset("hspace hskip kern mkern enspace thinspace medspace thickspace".split())
_VALUE_AFTER_RE = re.compile(r"\s*(?:\{[^{}]*\}\s*)?[-+]?[\d.]")
# words between two values: "\frac12 \text{ vs } \frac23", "\sqrt2 \textbf{ or } \sqrt3", "2\pi
# \text{ (}3\pi\text{)}" (not \text{ and } / \text{ or }, which join the parts of one answer and
# have their rule, nor an option "\textbf{(B)} 12"), or a value inside words
_WORDS_BETWEEN_RE = re.compile(
    r"(?<=[\w})])\s*(?!\\text\s*\{\s*(?:and|or|,)?\s*\})(?!\\text[a-z]*\s*\{\s*\(?[A-E]\)?\s*\})"
    r"\\(?:text[a-z]*|mathrm|mbox)\s*\{[^{}]*\}\s*(?=[-+]?\d|\\(?:[dt]?frac|sqrt|pi)(?![A-Za-z]))"
    r"|\\(?:text[a-z]*|mbox)\s*\{[^{}]*\\(?:[dt]?frac|sqrt|pi)(?![A-Za-z])"
)
_MATRICES = frozenset(
    "matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix array".split()
)  # fmt: skip
_TOKEN_RE = re.compile(r"\\begin\s*\{\s*(\w+\*?)\s*\}|\\end\s*\{[^{}]*\}|\\[A-Za-z]+|\\.|[{}&]")
_ARROW_RE = re.compile(r"<?[-=]+>|=/=|\|->")
_SET_BEFORE_RE = re.compile(r"(?:[)\]]|\\\}|\}|\\(?:emptyset|varnothing|infty))\s*\Z")
_SET_AFTER_RE = re.compile(r"\s*(?:[(\[]|\\\{|\\(?:left|mathbb|emptyset|varnothing)\b)")


def foreign_part(pred: str, gold: str, approximation: bool = False) -> str | None:
    """What at the top level of ``pred`` makes it no single value, unless ``gold`` has it too;
    None when nothing does. ``approximation``: ``pred`` is ``exact \\approx decimal``."""
    theirs = {key for key, _ in _findings(gold)}
    steps = _STEP_RE.split(pred)
    allowed = {
        *theirs,
        *(_APPROX if approximation else ()),
        *(_STEPS if all("=" in step for step in steps) or not steps[0].strip() else ()),
        *(_STEPS if len(steps) == 2 and not steps[1].strip() else ()),
        *(("equiv", "pmod") if _CONGRUENCE_RE.search(pred) else ()),
    }
    for key, why in _findings(pred):
        if key not in allowed:
            return why
    if _ARROW_RE.search(pred) and not _ARROW_RE.search(gold):
        return "has an arrow: not a single value"
    if _WORDS_BETWEEN_RE.search(pred) and not _WORDS_BETWEEN_RE.search(gold):
        return "joins values by words: not a single value"
    return None


def _findings(text: str) -> list[tuple[str, str]]:
    """(key, why) for each thing at the top level of ``text`` (outside ``{...}`` groups and
    matrices) that is not in the allow-list."""
    found, depth, matrix, braces = [], 0, 0, 0
    for match in _TOKEN_RE.finditer(text):
        token, env = match.group(), match.group(1)
        if env is not None:
            matrix += env in _MATRICES
            if depth == 0 and env not in _MATRICES:
                found.append((env, f"has a {env} environment: not a single value"))
        elif token.startswith("\\end"):
            matrix = max(0, matrix - any(m in token for m in _MATRICES))
        elif token in "{}":
            depth = max(0, depth + (1 if token == "{" else -1))
        elif token in ("\\{", "\\}"):
            braces = max(0, braces + (1 if token == "\\{" else -1))
        elif depth or matrix or braces and token in ("\\mid", "\\colon"):
            continue  # "\\{x \\mid x > 0\\}": a set's condition
        elif token in ("&", "\\&", "\\\\"):
            found.append((token, f"has {token} outside a matrix: not a single value"))
        elif token[1:].isalpha() and not _allowed(token[1:], text, match.start(), match.end()):
            found.append((token[1:], f"has {token} at its top level: not a single value"))
    found += [
        (c, f"has {c!r} at its top level: not a single value")
        for c in text
        if ord(c) > 0x7F and unicodedata.category(c) == "Sm"
    ]
    return found


def _allowed(name: str, text: str, start: int, end: int) -> bool:
    """Whether the command ``name`` at ``text[start:end]`` may stand at the top level."""
    if name in _ALLOWED or name.startswith(("text", "math")):
        return True
    if name in _SET_OPS:  # "(1, 2) \\cup (3, 4)", "\\mathbb{R} \\setminus \\{0\\}"; not "3 \\cup 4"
        return bool(_SET_BEFORE_RE.search(text, 0, start) and _SET_AFTER_RE.match(text, end))
    return name in _SPACING and not _VALUE_AFTER_RE.match(text, end)
