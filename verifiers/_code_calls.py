"""Grade a program by calling it from the reference's test code (``tests`` and ``test`` rows).

A builtin the tests call is the builtin, whatever the program binds to that name, so no program
answers for the tests' ``len`` or ``set``. Without ``entry_point``, a task whose own function is
named like a builtin (``def max``) would then be graded on the builtin: every answer passed. So
where plain Python would let the program's binding win (MBPP asserts, and a test module that
takes the program's names wholesale, ``from solution import *``), and the program binds a
builtin's name the tests call (any way: ``def``, ``class``, assignment, import; the names its
module holds once loaded), the tests run twice, once with the builtin and once with the program's
object, and a check passes only if it passed both times. Neither reading alone can pass a wrong
answer: a ``def max`` that returns -1 fails the second, and a ``def len`` that lies fails the
first. The cost is a false negative, never a false positive: a task function that takes other
arguments than the builtin (``def sum(a, b, c)``) fails the builtin reading, so it still needs
``entry_point``; a usage example's ``list = [3, 1, 2]`` fails the asserts' ``list(...)`` as it
would in Python. A module that imports names one by one sees the builtins, as under pytest.
An MBPP assert that passed without asking the program anything, while calling builtins the
program does not bind on literals only (``max([1, 5, 3])``), was answered by those builtins: it
fails (an empty program passed a ``max`` task). Left as pytest grades it: a test module's test of
a builtin-named function the program never wrote.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import re

from passband.sandbox import CandidateGone, SandboxError, default_pool
from passband.verifiers._code_harness import (
    Check,
    HarnessFault,
    Runner,
    called_names,
    compile_tests,
    trusted_prompt,
)
from passband.verifiers._code_io import tail
from passband.verifiers._code_suite import is_suite, module_calls, star_imports

__all__ = ["entry_ok", "entry_parts", "grade_calls", "readings"]


def grade_calls(
    program, tests, test, entry_point, test_imports, limits, partial, prompt
) -> tuple[list[Check], bool]:
    """The checks of ``tests`` (MBPP asserts) or ``test`` (``check(candidate)``, a test module)
    against ``program`` in a sandbox session, and whether the program ran out of time."""
    units, setup = _units(tests, test, entry_point, test_imports)
    called = called_names(setup, *(tests or ())).union(*(calls for _, _, calls in units))
    prelude = (
        trusted_prompt(prompt, entry_parts(entry_point)[0])
        if isinstance(prompt, str) and isinstance(entry_point, str)
        else ""
    )
    entry = entry_parts(entry_point)[0] if entry_ok(entry_point) else ""
    probes = (
        [_literal_builtins(t) for t in tests] if tests is not None else [frozenset()] * len(units)
    )
    run = (program, list(zip(units, probes)), setup, called, prelude, entry, limits)
    checks, timed_out, names, reached = _session_checks(*run, partial)
    wholesale = tests is not None or (isinstance(test, str) and star_imports(test))
    shadowed = frozenset(n for n in called & names if _builtin(n))
    shadowed = shadowed if wholesale and not entry else frozenset()
    if shadowed and (partial or all(c.passed for c in checks)):
        # every check of the second reading, so the two line up label by label
        again, late, _, also = _session_checks(*run, True, shadowed)
        checks, timed_out = _both(checks, again, shadowed), timed_out or late
        reached = reached or also
    if not reached and all(c.passed for c in checks):
        why = _untouched(called, entry)
        checks = [Check(c.label, False, why.kind, why.message) for c in checks] + [why]
    return checks, timed_out


def readings(entry_point) -> int:
    """How many sandbox sessions grading a row may take: two where the tests may run a second
    time with the program's function for a builtin's name (no ``entry_point``)."""
    return 1 if entry_ok(entry_point) else 2


def _builtin(name: str) -> bool:
    return hasattr(builtins, name) and not name.startswith("_")


def _both(first: list[Check], second: list[Check], shadowed: frozenset[str]) -> list[Check]:
    """Per check, the builtin reading's failure, else the program's reading's result."""
    note = f"with the program's {', '.join(sorted(shadowed))}"
    second = [
        c if c.passed else dataclasses.replace(c, message=f"{note}: {c.message}"[:300])
        for c in second
    ]
    if [c.label for c in first] == [c.label for c in second]:
        return [a if not a.passed else b for a, b in zip(first, second)]
    # the readings ran different checks (one stopped a test early): a pass counts only where
    # the other reading passed that check too, and the second reading's failures all count
    passed = {c.label for c in second if c.passed}
    why = f"{note}: this check did not pass"
    kept = [
        c if not c.passed or c.label in passed else Check(c.label, False, "wrong", why)
        for c in first
    ]
    labels = {c.label for c in first}
    return kept + [c for c in second if not c.passed and c.label not in labels]


def _session_checks(
    program, units, setup, called, prelude, entry, limits, partial, shadowed=frozenset()
) -> tuple[list[Check], bool, frozenset[str], bool]:
    """The checks, whether the program ran out of time, the names it binds and whether the
    tests asked it anything."""
    with default_pool().session(program, limits=limits) as session:
        if not session.ready:
            session.close()
            if session.result is None or session.result.setup_error:
                raise SandboxError(
                    session.result.setup_error if session.result else "no result from the sandbox"
                )
            why = tail(
                (session.result.stderr if session.result else "") or "it exited while loading"
            )
            timed_out = bool(session.result and session.result.timed_out)
            kind = "gone" if timed_out else "wrong"
            why = f"the program failed while loading: {why}"
            return [Check("program loads", False, kind, why)], timed_out, frozenset(), True
        runner = Runner(session, called, entry, shadowed)
        try:
            runner.prelude(prelude)
            runner.setup(setup, "<reference setup>")
        except CandidateGone as exc:
            runner.checks.append(Check("reference setup", False, "gone", str(exc)))
            units = []
        for (code, label, calls), probe in units:
            first, asked = len(runner.checks), session.calls
            runner.run_unit(code, label, calls)
            runner.unreached(first, asked, probe)
            if not partial and any(not c.passed for c in runner.checks):
                break
        if session.gone and all(c.passed for c in runner.checks):  # caught by a bare except
            runner.checks.append(Check("the program", False, "gone", session.gone))
    result = session.result
    if result is not None and result.setup_error:
        raise SandboxError(result.setup_error)
    return runner.checks, bool(result and result.timed_out), session.names, session.calls > 0


@functools.lru_cache(maxsize=4096)  # a prompt's asserts are parsed once, not once per answer
def _literal_builtins(source: str) -> frozenset[str]:
    """Builtins an assert calls on literals only (``max([1, 5, 3])``): what such a call returns
    says nothing of the program unless the program binds that name. A builtin applied to data
    the program returned earlier (``len(res)``, ``res`` from the setup code) is not one."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and _builtin(n.func.id)
        and (n.args or n.keywords)
        and all(_literal(a) for a in [*n.args, *(k.value for k in n.keywords)])
    )


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _untouched(called: frozenset[str], entry: str) -> Check:
    """The tests passed without asking the program anything: builtins answered them (``max``
    with a program that defines no ``max``: an empty program passed), or they test nothing."""
    builtins_called = sorted(n for n in called | {entry} if n and _builtin(n))
    if builtins_called:
        why = f"the program defines none of {', '.join(builtins_called)}: the builtins answered"
        return Check("the program", False, "wrong", f"the tests never reached the program ({why})")
    return Check("the program", False, "harness", "the reference tests never reach the program")


def _units(tests, test, entry_point, test_imports):
    if tests is not None:
        if isinstance(tests, str) or not all(isinstance(t, str) for t in tests):
            raise HarnessFault(
                "reference field 'tests' must be a list of strings (assert statements)"
            )
        setup = "\n".join(test_imports or [])
        return [
            (compile_tests(t, f"<test {i}>"), t.strip()[:200], module_calls(t))
            for i, t in enumerate(tests)
        ], setup
    suite = isinstance(test, str) and is_suite(test)
    if suite and (not _defines_check(test) or not entry_ok(entry_point)):
        # a pytest / unittest module (KodCode's ``from solution import f``): one unit
        return [(compile_tests(test, "<test module>"), "test module", module_calls(test))], ""
    if not isinstance(test, str) or not entry_ok(entry_point):
        raise HarnessFault(
            "reference field 'test' needs a string of test code and an 'entry_point' "
            "(a function name, or a method such as 'Solution().twoSum')"
        )
    if not _defines_check(test):  # else "check" would be looked up in the program
        raise HarnessFault("reference field 'test' defines no check(candidate) function")
    call = f"check({entry_point.strip()})"
    return [(compile_tests(call, "<check>"), call, frozenset({"check"}))], test


def _defines_check(test: str) -> bool:
    try:
        tree = ast.parse(test)
    except SyntaxError:
        return True  # compile_tests names the syntax error
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "check":
            return True
        if isinstance(node, ast.Name) and node.id == "check" and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name) == "check":
            return True
    return False


def entry_parts(entry_point: str) -> list[str]:
    """``f`` -> ["f"]; ``Solution().twoSum`` -> ["Solution", "twoSum"] (LiveCodeBench style)."""
    return re.findall(r"[A-Za-z_]\w*", entry_point) or [entry_point]


def entry_ok(entry_point) -> bool:
    """A name, or a chain of attributes and argument-free calls on one (``Solution().twoSum``)."""
    if not isinstance(entry_point, str):
        return False
    try:
        node = ast.parse(entry_point.strip(), mode="eval").body
    except SyntaxError:
        return False
    while isinstance(node, (ast.Attribute, ast.Call)):
        if isinstance(node, ast.Call) and (node.args or node.keywords):
            return False
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return isinstance(node, ast.Name)
