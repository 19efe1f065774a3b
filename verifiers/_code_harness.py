"""Run dataset test code in the harness against a program that lives in the sandbox.

The test code (MBPP asserts, HumanEval ``check(candidate)``) executes *here*, in the harness's own
interpreter; every name it uses that neither it nor Python's builtins define is looked up in the
candidate's module and becomes a ``RemoteObject``: calling it ships plain-data arguments into the
sandbox and plain-data results back. So the comparison (``==``, ``abs``, ``assert`` itself) is the
harness's, on genuine built-in values; the candidate cannot patch it, walk the stack into it, or see
an expected value. Each ``assert`` is rewritten into a recorded check so one failure does not hide
the rest (partial credit) and so a test counts only when its assertion was actually evaluated.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import sys
import unittest
from dataclasses import dataclass

from passband.sandbox import CandidateGone, Session
from passband.sandbox._wire import Unencodable
from passband.sandbox.session import RemoteObject
from passband.verifiers._code_fixtures import fixtures, quiet_print
from passband.verifiers._code_namespace import MODULE_NAMES, Namespace
from passband.verifiers._code_rewrite import (
    BIND,
    ORDERED,
    RECORD,
    HarnessFault,
    called_names,
    compile_tests,
    ordered,
)
from passband.verifiers._code_suite import (
    COMPARATORS,
    NOOP,
    PROGRAM_IMPORT,
    PROGRAM_MODULE,
    PROGRAM_STAR,
    NotRunnable,
    case_runs,
    expand,
    runnable,
)

__all__ = ["Check", "HarnessFault", "Runner", "called_names", "compile_tests", "trusted_prompt"]

# module hooks the harness runs before a module's tests: the test's own, never the program's
_HOOKS = frozenset({"setUpModule", "setup_module", "tearDownModule", "teardown_module"})

# never caught as the test's failure: the harness's own signals
_ESCAPES = (CandidateGone, KeyboardInterrupt, GeneratorExit)


def _skipped(exc: BaseException) -> bool:
    """pytest's ``Skipped`` (``pytest.skip``, ``importorskip``) or ``unittest.SkipTest``
    (``self.skipTest``): the reference, not the program."""
    kind = type(exc)
    if isinstance(exc, unittest.SkipTest):
        return True
    return kind.__name__ == "Skipped" and any(
        c.__module__.startswith("_pytest") for c in kind.__mro__
    )


@dataclass(frozen=True)
class Check:
    label: str  # the assert's source text (clipped)
    passed: bool
    kind: str = (
        "ok"  # ok | wrong (failed or raised) | gone (program ended) | harness (reference problem)
    )
    message: str = ""


def _required(func) -> int:
    """How many arguments ``func`` needs (``setup_module(module)`` takes one)."""
    try:
        return sum(p.default is p.empty for p in inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return 0


class _ProgramModule:
    """``import solution``: a module whose attributes are the program's names."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def __getattr__(self, name: str):
        if name.startswith("__") or name not in self._session.names:
            raise AttributeError(f"the program defines no {name!r}")
        return self._session.lookup(name)


class Runner:
    """Executes test units against one session and collects a ``Check`` per evaluated assert."""

    def __init__(
        self,
        session: Session,
        called: frozenset[str] = frozenset(),
        entry: str = "",
        shadowed: frozenset[str] = frozenset(),
    ) -> None:
        self.session, self.entry = session, entry
        self.ns = Namespace(session, called, entry, shadowed)
        self.ns["__file__"] = "test_module.py"  # ``__name__`` is no "__main__": no main block
        self.ns[RECORD] = self._record
        self.ns[BIND] = self._bind
        self.ns[ORDERED] = ordered
        self.ns[PROGRAM_IMPORT] = self._program_import
        self.ns[PROGRAM_MODULE] = _ProgramModule(session)
        self.ns[PROGRAM_STAR] = self._program_star
        self.ns[NOOP] = lambda *args, **kwargs: None
        if entry != "print":  # the test's own prints (pytest captures them)
            self.ns["print"] = quiet_print((sys.stdout, sys.stderr))
        self.checks: list[Check] = []
        self._sites: dict[str, int] = {}  # an assert statement -> its check's index
        self._evaluated = 0  # asserts evaluated, repeats included

    def _program_import(self, module: str, name: str):
        """``from solution import name``: the program's ``name``."""
        if name in self.session.names:
            return self.session.lookup(name)
        raise NameError(f"the tests import {name!r} from {module!r}")

    def _program_star(self) -> None:
        """``from solution import *``: the program's public names, except a name the test bound
        itself, a module name (the harness's own module, unless the tests call the name) and a
        comparison helper (``isclose``, ``approx``: the harness's own function), nor a program's
        module hook (``setup_module``) or ``test*`` name the tests do not call, nor a name of a
        builtin: the tests' ``len`` is the builtin whatever the program binds to it (binding one
        must change no verdict, or ``def sorted`` would turn a wrong answer into an error)."""
        for name in sorted(self.session.names):
            own = name.startswith("_") or name in self.ns or name in _HOOKS
            if own or (name.startswith(("test", "Test")) and name not in self.ns.called):
                continue  # the test's names (``import pytest``); no program hook or own test
            if hasattr(builtins, name) and name not in self.ns.shadowed:  # the builtin, whatever
                continue  # the program binds to its name (but see ``_code_calls``)
            is_module = name in sys.stdlib_module_names or name in MODULE_NAMES
            if is_module and name not in self.ns.called:
                continue  # the program's ``import numpy as np``: the harness's (unless called)
            if name in COMPARATORS:
                module, attr = COMPARATORS[name]
                try:
                    self.ns[name] = getattr(importlib.import_module(module), attr)
                except (ImportError, AttributeError):
                    pass  # not installed here: the name stays undefined, never the program's
                continue
            self.ns[name] = self.session.lookup(name)

    def _bind(self, name: str, value):
        self.ns[name] = value
        return value

    def _record(self, thunk, label: str, site: str | None = None) -> None:
        """One check per assert *statement*: run again (in a loop over the program's output), it
        passes only if it passed every time, so a wrong program cannot multiply its passing
        checks (``for v in out: assert v % 2 == 0`` over 2,000 items scored 0.9995)."""
        check, self._evaluated = self._evaluate(thunk, label), self._evaluated + 1
        at = self._sites.get(site) if site is not None else None
        if at is None:
            if site is not None:
                self._sites[site] = len(self.checks)
            self.checks.append(check)
        elif self.checks[at].passed and not check.passed:
            self.checks[at] = check  # the first failure is the statement's result

    def _evaluate(self, thunk, label: str) -> Check:
        try:
            value = thunk()
            truth = bool(value)
        except (HarnessFault, Unencodable, NotRunnable) as exc:
            return Check(label, False, "harness", str(exc))
        except CandidateGone as exc:  # each later assert fails too: ending the program early
            return Check(label, False, "gone", str(exc))  # must not end the count with it
        except AssertionError as exc:
            return Check(label, False, "wrong", f"AssertionError: {exc}"[:300])
        except _ESCAPES:
            raise
        except BaseException as exc:  # noqa: BLE001 - the candidate raised or returned something
            # unusable; SystemExit and pytest's Failed (``pytest.raises`` that saw nothing) included
            if _skipped(exc):
                return Check(label, False, "harness", f"the test skipped itself: {exc}"[:300])
            return Check(label, False, "wrong", f"{type(exc).__name__}: {exc}"[:300])
        return Check(
            label, truth, "ok" if truth else "wrong", "" if truth else "assertion is false"
        )

    def run_unit(self, code, label: str, calls: frozenset[str] = frozenset()) -> None:
        """Execute one unit, then each pytest-style ``test*`` function it defines and does not
        call itself (``calls``; once per ``parametrize`` case) and each test of the ``TestCase``
        and ``Test*`` classes it defines, each on its own (``_run``). A test it cannot run (a
        fixture, ``async``) is a harness check: no pass."""
        names = set(self.ns)
        if not self._run(lambda: exec(code, self.ns), label):
            return
        for hook in ("setUpModule", "setup_module"):  # once, before the module's tests
            value = self.ns.get(hook)  # the test's own (a partial too), never the program's
            if hook not in names and callable(value) and not isinstance(value, RemoteObject):
                setup = self.ns[hook]
                if not self._run(lambda f=setup: f(*[None] * min(_required(f), 1)), hook):
                    return
        made = fixtures(self.session)  # capsys / capfd (``_code_fixtures``)
        for name in [n for n in self.ns if n not in names]:
            value, where = self.ns[name], f"of {label[:80]}"
            if isinstance(value, type):
                tests = self._collect(lambda v=value: list(case_runs(v, made)), f"{name} {where}")
            elif name.startswith("test") and name not in calls and inspect.isfunction(value):
                cases = self._collect(lambda v=value: list(expand(v)), f"{name} {where}")
                tests = [
                    (
                        f"{name}{suffix}()",
                        runnable(functools.partial(value, **kw), name + suffix, made),
                    )
                    for suffix, kw in cases
                ]
            else:
                continue
            for case, thunk in tests:
                self._run(thunk, f"{case} {where}")

    def unreached(self, first: int, asked: int, answered: frozenset[str]) -> None:
        """The checks from ``first`` on fail if they passed while the program was asked nothing
        (still ``asked`` requests) and the unit called, on the test's own literals, builtins
        ``answered`` that the program does not bind, with no ``entry_point``: those builtins
        answered it (``assert max([1, 5, 3]) == 5`` beside a ``second_max`` test, and no
        ``max`` written, passed)."""
        names = sorted(answered - self.session.names)  # ``answered``: builtins already
        if self.entry or self.session.calls != asked or not names:
            return
        why = f"this test never reached the program: the builtin {', '.join(names)} answered it"
        for i in range(first, len(self.checks)):
            if self.checks[i].passed:
                self.checks[i] = Check(self.checks[i].label, False, "wrong", why[:300])

    def _collect(self, listing, label: str) -> list:
        """The tests ``listing()`` finds; none, and a harness check, when reading them fails (a
        parametrize table the harness cannot read)."""
        try:
            return listing()
        except CandidateGone as exc:  # a table built from the program's answers, after it left
            self.checks.append(Check(label, False, "gone", str(exc)))
            return []
        except _ESCAPES:
            raise
        except Exception as exc:  # noqa: BLE001 - the reference's markers, not the program
            why = f"the harness cannot read these tests: {type(exc).__name__}: {exc}"
            self.checks.append(Check(label, False, "harness", why[:300]))
            return []

    def _run(self, thunk, label: str) -> bool:
        """Run one unit of test code; False when it stopped early. An exception outside an assert
        is one failed check, and the checks it recorded before that fail too: a program that
        answers the first case of a loop (``for x, y in cases: assertion(candidate(x), y)``) and
        then raises or exits must not keep a passing check an honest wrong answer would lose."""
        before, first, calls = self._evaluated, len(self.checks), self.session.calls
        try:
            self._guarded(thunk, label)
        except CandidateGone as exc:
            self._cut_short(first, Check(label, False, "gone", str(exc)))
            return False
        except (HarnessFault, Unencodable, NotRunnable) as exc:
            self.checks.append(Check(label, False, "harness", str(exc)))
            return False
        except NameError as exc:
            why = f"NameError: {exc} (not defined by the program)"
            self._cut_short(first, Check(label, False, "wrong", why))
            return False
        except _ESCAPES:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit, pytest's Failed included
            if _skipped(exc) or (isinstance(exc, ImportError) and self.session.calls == calls):
                # ``pytest.importorskip``, or an import of a module the harness lacks, before
                # the program took part: the reference, not the program
                self.checks.append(
                    Check(label, False, "harness", f"the test code stopped: {exc!r}"[:300])
                )
                return False
            if not (isinstance(exc, SystemExit) and exc.code in (None, 0, False)):
                why = f"{type(exc).__name__}: {exc}"[:300]
                self._cut_short(first, Check(label, False, "wrong", why))
                return False  # else the test code ended itself with success: unittest.main()
        if self._evaluated == before and self.session.calls > calls:
            self.checks.append(Check(label, True))  # no assert: it passes by running cleanly
        # a unit that neither asserted nor called the program ("lst = [3, 1, 2]") checks nothing
        return True

    def _guarded(self, thunk, label: str) -> None:
        """``thunk()``; a refusal it caught itself (``Namespace.refuse``) is raised again, also
        when the test code then ended another way (``sys.exit(0)``)."""
        seen = len(self.ns.refused)
        try:
            thunk()
        except _ESCAPES:
            raise
        except BaseException:
            if len(self.ns.refused) == seen:
                raise
        if len(self.ns.refused) > seen:
            raise NotRunnable(f"{self.ns.refused[-1]} (the test code caught it: {label[:80]})")

    def _cut_short(self, first: int, failure: Check) -> None:
        """The unit stopped before its end: its recorded checks fail, then ``failure``."""
        note = f"the test stopped before its end ({failure.message})"[:300]
        for i in range(first, len(self.checks)):
            if self.checks[i].passed:
                self.checks[i] = Check(self.checks[i].label, False, failure.kind, note)
        self.checks.append(failure)

    def prelude(self, source: str) -> None:
        """The prompt's trusted helpers (``trusted_prompt``); one that fails here is simply absent."""
        if not source:
            return
        try:
            exec(compile(source, "<prompt>", "exec"), self.ns)
        except CandidateGone:
            raise
        except _ESCAPES:
            raise
        except BaseException:  # noqa: BLE001 - e.g. a prompt whose module code needs the entry point
            pass

    def setup(self, source: str, filename: str) -> None:
        """Imports and definitions the tests need (HumanEval's test module, MBPP ``test_imports``)."""
        calls_before = self.session.calls
        try:
            code = compile_tests(source, filename)
            self._guarded(lambda: exec(code, self.ns), filename)
        except NotRunnable as exc:
            raise HarnessFault(f"reference setup code: {exc}") from None
        except (HarnessFault, CandidateGone):
            raise
        except Unencodable as exc:
            raise HarnessFault(f"reference setup code: {exc}") from None
        except _ESCAPES:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit (``unittest.main()``) included
            if (
                self.session.calls == calls_before
            ):  # the program never took part: the reference is broken
                raise HarnessFault(
                    f"reference setup code failed: {type(exc).__name__}: {exc}"
                ) from None
            # Setup code that already runs the tests (MultiPL-E's trailing ``check(f)``) or builds
            # data with the program's classes failed on what the program answered: a failed test.
            self.checks.append(
                Check("reference setup", False, "wrong", f"{type(exc).__name__}: {exc}"[:300])
            )


@functools.lru_cache(maxsize=1024)
def trusted_prompt(prompt, entry_root: str) -> str:
    """The prompt's own definitions except the entry point, to run in the harness before the tests.

    HumanEval tests call helpers the prompt defines (``poly``, ``encode_cyclic``). They are dataset
    code: the tests must use the prompt's version, not one the program redefined to agree with any
    answer. Returns "" when the prompt is not Python on its own (prose, an unfinished stub).
    """
    if not isinstance(prompt, str):
        return ""
    try:
        tree = ast.parse(prompt)
    except SyntaxError:
        return ""
    kept = [
        node
        for node in tree.body
        if not (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and (node.name == entry_root or _is_stub(node))
        )
    ]
    if not any(
        isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
        )
        for n in kept
    ):
        return ""
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def _is_stub(node: ast.AST) -> bool:
    """A function the model is asked to write (only a docstring, ``pass`` or ``...``): the tests
    must then call the program's version, so it is not a trusted helper."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return all(
        isinstance(stmt, ast.Pass)
        or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        for stmt in node.body
    )
