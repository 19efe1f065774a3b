"""``code``: run the completion's program against the reference tests, in the sandbox.

Reference fields (dataset columns), one of:
- ``tests`` (list of assert statements, MBPP style) with optional ``test_imports`` (list of import
  lines), ``test_setup_code`` and ``entry_point`` (only used to pick the prompt prefix, see below);
- ``test`` (HumanEval style: code defining ``check(candidate)``) with ``entry_point``; or a pytest
  / ``unittest`` module (``test*`` functions, ``parametrize``, ``capsys`` / ``capfd`` included,
  ``TestCase`` classes; it may import the program as ``solution``, KodCode style:
  ``_code_suite.py``);
- ``io`` (list of ``{"stdin": ..., "stdout": ...}``): the program reads stdin and prints; output
  matches when equal after dropping trailing whitespace on every line and trailing blank lines,
  or, with ``float_tol``, token by token with numbers within that absolute/relative tolerance
  (where the expected number has a point or an exponent; an expected integer must be equal).
Per-call options (reference fields or factory arguments): ``timeout_s``, ``memory_mb``,
``partial_credit`` (score = fraction of checks passed instead of all-or-nothing), ``language``
(``io`` only: ``python``, ``c``, ``cpp``). C and C++ are compiled once per completion, in the
sandbox under the compiler's own limits (``passband.sandbox.COMPILE_LIMITS``: 20 s, 1 GiB), and each
case runs the binary under ``timeout_s`` / ``memory_mb``; a program that does not compile fails
every case.

The code is the last fenced block tagged python (or the language asked for), else the last fenced
block, else the whole completion; among several blocks, the last one defining a name the tests call
wins over a trailing usage example. If the code does not define ``entry_point`` but the row's
``prompt`` does, the prompt is prepended (HumanEval completions continue the prompt); if it does,
the prompt still goes in front when it is Python on its own (so the program may use the prompt's
imports and helpers). ``entry_point`` is a function name or, LiveCodeBench style, a method such as
``Solution().twoSum`` (then ``check(Solution().twoSum)``; MBPP-style asserts may also call
``Solution().twoSum(...)`` directly).

What the test code sees. The tests run in the harness: calls reach the program, results come back
as plain data (``None``, bool, int, float, complex, str, bytes, lists, tuples, dicts, sets,
namedtuples, ``Fraction``, ``Decimal``, ``deque``; numpy scalars as the Python number they hold);
any other object stays in the sandbox as a handle the tests can call, read (attributes, items,
``len``, iteration, ``next``, ``str``/``int``/``float``) and set attributes or items on, but that
equals only itself. Exceptions come back as the built-in class they derive from (the program's
``ValueError`` subclass is caught by ``except ValueError``); ``SystemExit`` fails the test, and a
``StopIteration`` escaping a call becomes ``RuntimeError`` (as PEP 479 does), so it cannot end the
test's own ``all(map(...))`` early. Helpers the prompt defines besides the entry point (HumanEval's
``poly``, ``encode_cyclic``) run in the harness, so redefining them in the program changes nothing
the tests compute; a standard-library module (or ``np``, ``pd``, numpy, pandas, scipy, sympy) the
tests use without importing it is the harness's own, not the program's object of that name, and a
name an assert binds with ``:=`` is the test's.
Arguments are copied in; a list, dict, set or bytearray argument the call changed is updated in
the test's copy too (in-place sorts, or tests that an input was left alone, behave as in Python).
Known limits: functions, lambdas and instances of classes the *test* defines cannot be passed in
(the verdict is ``error``); only the top level of a changed argument is written back; without
``entry_point``, a task function named like a builtin is graded on the builtin and on the
program's function, and must pass both (``_code_calls.py``), so ``def sum(a, b, c)`` needs
``entry_point``; tests using ``sp`` unimported are ``error``; a prompt's helpers are safe
only when the row's ``prompt`` is passed. LiveCodeBench's functional rows (JSON lines of arguments)
need converting to asserts or a ``check`` first; APPS/CodeContests problems with several answers
(a special checker) are not supported by ``io``.

Why the verdict cannot be forged: expected values and every comparison stay in this process. For
``tests``/``test`` the program runs in a sandbox session and only its functions' *return values*
come back, as plain data (see ``passband.sandbox.session``); for ``io`` only its stdout does. Exit
codes, ``sys.exit(0)``, printed markers, patched builtins or a patched ``assert`` inside the sandbox,
deleting files there, or objects with a lying ``__eq__`` decide nothing. Statuses: ``ok`` all checks
passed; ``wrong`` a check failed, or the program ran out of its ``timeout_s`` (an infinite loop is a
wrong answer: masking it as a checker failure would let a policy escape the reward of a wrong one);
``invalid`` no code in the completion; ``error`` the reference data or the sandbox failed.
The reference test code itself (and the prompt's helpers) runs here, unsandboxed: it is dataset
code, trusted like the dataset. The completion is never compiled or run here.
(``_code_harness.py`` runs the test code against the sandboxed program; ``_code_io.py`` grades
``io`` rows.)
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Mapping

from passband.sandbox import Limits, SandboxError
from passband.sandbox.build import COMPILE_LIMITS
from passband.sandbox.languages import get_language
from passband.verifiers._code_calls import entry_ok, entry_parts, grade_calls, readings
from passband.verifiers._code_harness import Check, HarnessFault, called_names
from passband.verifiers._code_io import grade_io, outputs_match
from passband.verifiers._code_suite import program_names
from passband.verifiers.registry import register
from passband.verifiers.verdict import Verdict

__all__ = ["code_verifier", "extract_code", "outputs_match"]

# the info string is read whole and its first word taken in Python: "[ \t]*([\w+#.-]*)[^\n]*"
# backtracked quadratically over a fence followed by a long run of spaces (a degenerate output)
_FENCE = re.compile(r"^[ \t]*```([^\n]*)\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_TAG = re.compile(r"[\w+#.-]*")
_TAGS = {"python": ("python", "py", "python3"), "c": ("c",), "cpp": ("cpp", "c++", "cc", "cxx")}


def code_verifier(
    *,
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    partial_credit: bool = False,
    float_tol: float | None = None,
):
    """The ``code`` verifier with other defaults (reference fields still override per call)."""
    Limits(timeout_s=timeout_s, memory_mb=memory_mb)  # validates both, naming the bad value
    if float_tol is not None and not (isinstance(float_tol, (int, float)) and 0 <= float_tol < 1):
        raise ValueError(f"float_tol must be a number in [0, 1), got {float_tol!r}")
    return _Code(float(timeout_s), int(memory_mb), bool(partial_credit), float_tol)


class _Code:
    returns_verdict = True  # a Verdict for every answer: success_threshold decides nothing

    def __init__(
        self, timeout_s: float, memory_mb: int, partial_credit: bool, float_tol: float | None
    ) -> None:
        self.timeout_s, self.memory_mb = timeout_s, memory_mb
        self.partial_credit, self.float_tol = partial_credit, float_tol

    def __repr__(self) -> str:
        return (
            f"code_verifier(timeout_s={self.timeout_s:g}, memory_mb={self.memory_mb}, "
            f"partial_credit={self.partial_credit}, float_tol={self.float_tol})"
        )

    def time_limit(self, reference: Mapping) -> float:
        """Seconds this check may take before it grades the program itself (an ``io`` row runs
        each case under ``timeout_s``): ``verify_batch`` waits at least this long before killing
        it, so an infinite loop is graded ``wrong`` here, not masked as a ``timeout``."""
        try:
            each = float(reference.get("timeout_s") or self.timeout_s)
        except (TypeError, ValueError):
            return self.timeout_s
        io = reference.get("io")
        if io is None:  # a second reading may run (``_code_calls``): its own ``timeout_s``
            return each * readings(reference.get("entry_point"))
        cases = len(io) if isinstance(io, (list, tuple)) and io else 1
        return each * cases + _compile_time(reference.get("language") or "python")

    def __call__(
        self,
        completion: str,
        *,
        tests=None,
        test=None,
        io=None,
        entry_point=None,
        test_imports=None,
        test_setup_code=None,
        prompt=None,
        timeout_s=None,
        memory_mb=None,
        partial_credit=None,
        float_tol=None,
        language="python",
        **_ignored,
    ) -> Verdict:
        try:
            limits = Limits(
                timeout_s=float(timeout_s or self.timeout_s),
                memory_mb=int(memory_mb or self.memory_mb),
            )
        except (TypeError, ValueError) as exc:
            return Verdict.error(f"bad limits in the reference: {exc}")
        partial = self.partial_credit if partial_credit is None else bool(partial_credit)
        tol = self.float_tol if float_tol is None else float_tol
        if sum(x is not None for x in (tests, test, io)) != 1:
            return Verdict.error("the reference needs exactly one of 'tests', 'test' or 'io'")
        if not isinstance(completion, str):
            return Verdict.invalid(f"completion is {type(completion).__name__}, not text")
        program = extract_code(
            completion,
            language if io is not None else "python",
            _tested_names(tests, entry_point, test) if io is None else (),
        )
        if program is None:
            return Verdict.invalid("no code found in the completion")
        try:
            if io is not None:
                checks, timed_out = grade_io(program, io, limits, language, tol, partial)
            else:
                program = _with_prompt(program, prompt, entry_point)
                imports = (
                    [test_imports] if isinstance(test_imports, str) else list(test_imports or [])
                )
                imports += [test_setup_code] if test_setup_code else []
                checks, timed_out = grade_calls(
                    program, tests, test, entry_point, imports, limits, partial, prompt
                )
        except HarnessFault as exc:
            return Verdict.error(str(exc)[:500])
        except SandboxError as exc:
            return Verdict.error(f"sandbox failed: {exc}"[:500])
        except Exception as exc:  # noqa: BLE001 - a verifier never raises; this is our bug, say so
            return Verdict.error(f"code verifier failed: {type(exc).__name__}: {exc}"[:500])
        return _verdict(checks, timed_out, partial)


def _compile_time(language) -> float:
    """The compile's deadline where ``language`` builds its program once (C, C++), else 0."""
    try:
        return COMPILE_LIMITS.timeout_s if get_language(language).artifact else 0.0
    except (ValueError, TypeError):  # an unknown language: the call says so, as an error
        return 0.0


def extract_code(text: str, language: str = "python", defines: tuple[str, ...] = ()) -> str | None:
    """The last fenced block tagged ``language``, else the last fenced block, else the whole text.

    With ``defines`` (the names the tests call), the last block that defines one of them is
    preferred: chat models often end with a usage example after the solution block.
    """
    blocks = [
        (_TAG.match(info.strip()).group(0).lower(), body) for info, body in _FENCE.findall(text)
    ]
    wanted = _TAGS.get(language, (language,))
    for chosen in ([b for t, b in blocks if t in wanted], [b for _, b in blocks]):
        chosen = [b for b in chosen if b.strip()]
        if chosen and defines:
            pattern = re.compile(
                rf"^[ \t]*(?:(?:async\s+)?def|class)\s+(?:{'|'.join(map(re.escape, defines))})\b"
                rf"|^(?:{'|'.join(map(re.escape, defines))})\s*=",
                re.MULTILINE,
            )
            defining = [b for b in chosen if pattern.search(b)]
            chosen = defining or chosen
        if chosen:
            return chosen[-1]
    if "```" in text:
        return None  # only empty fences: nothing to run
    return text if text.strip() else None


def _tested_names(tests, entry_point, test=None) -> tuple[str, ...]:
    """The program's names the tests call: the entry point, the functions MBPP asserts call, or
    the names a test module imports from the program (``from solution import f``)."""
    if isinstance(entry_point, str) and entry_ok(entry_point):
        return tuple(entry_parts(entry_point))
    if isinstance(test, str):
        return program_names(test)
    if isinstance(tests, (list, tuple)) and all(isinstance(t, str) for t in tests):
        return tuple(sorted(n for n in called_names(*tests) if not hasattr(builtins, n)))
    return ()


def _with_prompt(program: str, prompt, entry_point) -> str:
    """Join the prompt and the program the way each kind of completion needs.

    A body that continues the prompt (base models) is appended to it. A program that defines the
    entry point itself (chat models rewrite the whole function) still gets the prompt in front when
    the prompt is Python on its own, so it may use the prompt's imports (``List``) and helpers; its
    own definitions come later and win. Otherwise the program runs alone.
    """
    if not (isinstance(prompt, str) and isinstance(entry_point, str)):
        return program
    name = entry_parts(entry_point)[-1]
    defines = re.compile(rf"^[ \t]*(async\s+)?def\s+{re.escape(name)}\s*\(", re.MULTILINE)
    if not defines.search(prompt):
        return program
    if not defines.search(program):
        return prompt + program
    if re.search(r"^[ \t]*from[ \t]+__future__[ \t]+import", program, re.MULTILINE) or not _parses(
        prompt
    ):
        return program  # a __future__ import must come first; a stub prompt cannot go in front
    return prompt.rstrip() + "\n\n\n" + program


def _parses(source: str) -> bool:
    """Whether trusted dataset text (never the completion: that is only compiled in the sandbox)
    is Python on its own."""
    try:
        ast.parse(source)
        return True
    except (SyntaxError, ValueError):
        return False


def _verdict(checks: list[Check], timed_out: bool, partial: bool) -> Verdict:
    passed = sum(c.passed for c in checks)
    lines = [
        f"{'PASS' if c.passed else 'FAIL'} {c.label}" + (f" -- {c.message}" if c.message else "")
        for c in checks
    ]
    detail = f"{passed}/{len(checks)} checks passed\n" + "\n".join(lines[:50])
    if not checks:  # pytest-style tests never called, a unittest class, only setup lines
        return Verdict.error("the reference tests ran no assert and never called the program")
    if any(c.kind == "harness" for c in checks) and not any(
        c.kind in ("wrong", "gone") for c in checks
    ):  # a check the program failed outweighs one the reference could not run: no masked zero
        return Verdict.error(detail[:2000])
    if checks and passed == len(checks) and not timed_out:  # a timeout a test caught is no pass
        return Verdict.ok(detail[:2000])
    score = passed / len(checks) if partial and checks else 0.0
    first_bad = next((c for c in checks if not c.passed), None)
    if timed_out and (first_bad is None or first_bad.kind == "gone"):
        # the program's own time limit, whose clock starts once it has a sandbox worker to
        # itself: a loop is the completion's fault, graded, not masked as the checker's failure
        # (a policy must not escape a wrong answer's reward by never finishing)
        return Verdict.wrong("the program ran out of time: " + detail[:1960], score=score)
    return Verdict.wrong(detail[:2000], score=score)


register("code")(code_verifier())
