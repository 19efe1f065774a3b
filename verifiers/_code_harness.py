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
import sys
from dataclasses import dataclass

from passband.sandbox import CandidateGone, Session
from passband.sandbox._wire import Unencodable

_RECORD = "__passband_check__"
_BIND = "__passband_bind__"  # a ``:=`` inside an assert, which the thunk would keep to itself
# Module aliases tests use without importing them (the prompt did): the harness's own module,
# never the program's object of that name (a program's ``np`` whose ``allclose`` is always True).
_ALIASES = {"np": "numpy", "pd": "pandas", "plt": "matplotlib.pyplot"}  # not "sp": scipy or sympy
_THIRD_PARTY = frozenset({"numpy", "pandas", "scipy", "sympy", "networkx", "matplotlib"})


class HarnessFault(Exception):
    """The reference test code itself is broken or asks for something the harness cannot do."""


@dataclass(frozen=True)
class Check:
    label: str  # the assert's source text (clipped)
    passed: bool
    kind: str = (
        "ok"  # ok | wrong (failed or raised) | gone (program ended) | harness (reference problem)
    )
    message: str = ""


class _Namespace(dict):
    """Globals for test code: its own names, then builtins, then the candidate's module.

    A standard-library module name the tests use but do not import (they relied on the program's
    ``import math``) is the harness's own module, never the program's object of that name, unless
    the tests call the name itself (then it is the program's function that happens to share it).
    """

    def __init__(
        self, session: Session, called: frozenset[str] = frozenset(), entry: str = ""
    ) -> None:
        super().__init__()
        self._session, self._called, self._entry = session, called, entry

    def __missing__(self, key: str):
        if key == self._entry and key in self._session.names:  # the function under test, even if
            return self._session.lookup(key)  # it is named like a builtin (``entry_point`` says so)
        if hasattr(builtins, key):
            return getattr(builtins, key)
        if key in sys.stdlib_module_names and key not in self._called and not key.startswith("_"):
            try:
                module = importlib.import_module(key)
            except ImportError:
                pass
            else:
                self[key] = module
                return module
        if (key in _ALIASES or key in _THIRD_PARTY) and key not in self._called:
            try:  # not installed here: the name is undefined, as it is for the tests
                module = importlib.import_module(_ALIASES.get(key, key))
            except ImportError:
                raise KeyError(key) from None
            self[key] = module
            return module
        if key in self._session.names:
            return self._session.lookup(key)
        raise KeyError(key)


@functools.lru_cache(maxsize=1024)
def called_names(*sources: str) -> frozenset[str]:
    """Names the test code calls directly (``f(...)``): those are the program's functions.
    Cached like ``compile_tests``: a prompt's tests are parsed once, not once per completion."""
    names = set()
    for source in sources:
        try:
            tree = ast.parse(source or "")
        except SyntaxError:
            continue
        names.update(
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        )
    return frozenset(names)


class _AssertRewriter(ast.NodeTransformer):
    """``assert T, M`` -> ``__passband_check__(lambda: T, "<source of T>", "<file:line:col>")``."""

    def __init__(self, source: str, filename: str = "") -> None:
        self.source, self.filename = source, filename

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        if isinstance(node.test, ast.Constant):  # HumanEval's "assert True, '...'" checks nothing
            return node
        self.generic_visit(node)
        label = (ast.get_source_segment(self.source, node) or ast.unparse(node))[:200]
        thunk = ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=_ExpectedFirst().visit(_Binder().visit(node.test)),
        )
        site = ast.Constant(f"{self.filename}:{node.lineno}:{node.col_offset}")
        call = ast.Call(
            func=ast.Name(_RECORD, ast.Load()), args=[thunk, ast.Constant(label), site], keywords=[]
        )
        return ast.copy_location(ast.Expr(call), node)


class _Binder(ast.NodeTransformer):
    """``(r := f(3))`` -> ``__passband_bind__("r", f(3))``: inside the assert's thunk the walrus
    would bind a name of the thunk alone, and a later ``r`` would reach the program's global of
    that name (its own answers). The test namespace gets it instead, as the assert meant."""

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.expr:
        self.generic_visit(node)
        call = ast.Call(
            func=ast.Name(_BIND, ast.Load()),
            args=[ast.Constant(node.target.id), node.value],
            keywords=[],
        )
        return ast.copy_location(call, node)


# Builtins that cannot call the program or change their arguments: an expected value built from
# them (``sorted(lst)``, ``len(s)``) is computed before the program runs.
_PURE = frozenset(
    "abs all any bool dict divmod float frozenset int len list max min pow reversed round set "
    "sorted str sum tuple".split()
)
_EXPECTED = "__passband_expected__"


class _ExpectedFirst(ast.NodeTransformer):
    """``candidate(lst) == sorted(lst)`` -> ``(lambda e: candidate(lst) == e)(sorted(lst))``.

    Python evaluates the left side first, so a program that empties its argument and returns []
    made the test compare [] with ``sorted([])`` and pass. A right side that reads names but calls
    nothing except pure builtins is the expected value: it is computed from the inputs as the test
    wrote them, before the program can change them. Only one-operator comparisons whose left side
    makes a call are rewritten; everything else keeps Python's order."""

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) != 1 or not _calls(node.left):
            return node
        right = node.comparators[0]
        calls = [n for n in ast.walk(right) if isinstance(n, ast.Call)]
        if not any(isinstance(n, ast.Name) for n in ast.walk(right)) or not all(
            isinstance(c.func, ast.Name) and c.func.id in _PURE for c in calls
        ):
            return node
        args = ast.arguments(
            posonlyargs=[], args=[ast.arg(_EXPECTED)], kwonlyargs=[], kw_defaults=[], defaults=[]
        )
        body = ast.Compare(node.left, node.ops, [ast.Name(_EXPECTED, ast.Load())])
        return ast.copy_location(ast.Call(ast.Lambda(args, body), [right], []), node)


def _calls(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


@functools.lru_cache(maxsize=4096)
def compile_tests(source: str, filename: str):
    """Parse and rewrite reference test code; a syntax error is the dataset's fault.

    Cached: a prompt's tests are compiled once however many completions are graded against them.
    """
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        raise HarnessFault(
            f"reference test code does not parse ({filename}, line {exc.lineno}): {exc.msg}"
        ) from None
    tree = ast.fix_missing_locations(_AssertRewriter(source, filename).visit(tree))
    return compile(tree, filename, "exec")


class Runner:
    """Executes test units against one session and collects a ``Check`` per evaluated assert."""

    def __init__(
        self, session: Session, called: frozenset[str] = frozenset(), entry: str = ""
    ) -> None:
        self.session = session
        self.ns = _Namespace(session, called, entry)
        self.ns[_RECORD] = self._record
        self.ns[_BIND] = self._bind
        self.checks: list[Check] = []
        self._sites: dict[str, int] = {}  # an assert statement -> its check's index
        self._evaluated = 0  # asserts evaluated, repeats included

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
        except (HarnessFault, Unencodable) as exc:
            return Check(label, False, "harness", str(exc))
        except CandidateGone as exc:  # each later assert fails too: ending the program early
            return Check(label, False, "gone", str(exc))  # must not end the count with it
        except AssertionError as exc:
            return Check(label, False, "wrong", f"AssertionError: {exc}"[:300])
        except Exception as exc:  # noqa: BLE001 - the candidate raised, or returned something unusable
            return Check(label, False, "wrong", f"{type(exc).__name__}: {exc}"[:300])
        return Check(
            label, truth, "ok" if truth else "wrong", "" if truth else "assertion is false"
        )

    def run_unit(self, code, label: str) -> None:
        """Execute one unit; an exception outside an assert is one failed check."""
        before = self._evaluated
        try:
            exec(code, self.ns)
        except CandidateGone as exc:
            self.checks.append(Check(label, False, "gone", str(exc)))
            return
        except (HarnessFault, Unencodable) as exc:
            self.checks.append(Check(label, False, "harness", str(exc)))
            return
        except NameError as exc:
            self.checks.append(
                Check(label, False, "wrong", f"NameError: {exc} (not defined by the program)")
            )
            return
        except Exception as exc:  # noqa: BLE001
            self.checks.append(Check(label, False, "wrong", f"{type(exc).__name__}: {exc}"[:300]))
            return
        if self._evaluated == before:  # a unit without asserts passes by running cleanly
            self.checks.append(Check(label, True))

    def prelude(self, source: str) -> None:
        """The prompt's trusted helpers (``trusted_prompt``); one that fails here is simply absent."""
        if not source:
            return
        try:
            exec(compile(source, "<prompt>", "exec"), self.ns)
        except CandidateGone:
            raise
        except Exception:  # noqa: BLE001 - e.g. a prompt whose module code needs the entry point
            pass

    def setup(self, source: str, filename: str) -> None:
        """Imports and definitions the tests need (HumanEval's test module, MBPP ``test_imports``)."""
        calls_before = self.session.calls
        try:
            exec(compile_tests(source, filename), self.ns)
        except (HarnessFault, CandidateGone):
            raise
        except Unencodable as exc:
            raise HarnessFault(f"reference setup code: {exc}") from None
        except Exception as exc:  # noqa: BLE001
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
