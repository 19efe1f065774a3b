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
from dataclasses import dataclass

from passband.sandbox import CandidateError, CandidateGone, Session
from passband.sandbox._wire import Unencodable

_RECORD = "__passband_check__"


class HarnessFault(Exception):
    """The reference test code itself is broken or asks for something the harness cannot do."""


@dataclass(frozen=True)
class Check:
    label: str  # the assert's source text (clipped)
    passed: bool
    kind: str = "ok"  # ok | wrong (failed or raised) | gone (program ended) | harness (reference problem)
    message: str = ""


class _Namespace(dict):
    """Globals for test code: its own names, then builtins, then the candidate's module."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self._session = session

    def __missing__(self, key: str):
        if hasattr(builtins, key):
            return getattr(builtins, key)
        if key in self._session.names:
            return self._session.lookup(key)
        raise KeyError(key)


class _AssertRewriter(ast.NodeTransformer):
    """``assert T, M`` -> ``__passband_check__(lambda: T, "<source of T>")``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        self.generic_visit(node)
        label = (ast.get_source_segment(self.source, node) or ast.unparse(node))[:200]
        thunk = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                           body=node.test)
        call = ast.Call(func=ast.Name(_RECORD, ast.Load()), args=[thunk, ast.Constant(label)], keywords=[])
        return ast.copy_location(ast.Expr(call), node)


@functools.lru_cache(maxsize=4096)
def compile_tests(source: str, filename: str):
    """Parse and rewrite reference test code; a syntax error is the dataset's fault.

    Cached: a prompt's tests are compiled once however many completions are graded against them.
    """
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        raise HarnessFault(f"reference test code does not parse ({filename}, line {exc.lineno}): {exc.msg}") from None
    tree = ast.fix_missing_locations(_AssertRewriter(source).visit(tree))
    return compile(tree, filename, "exec")


class Runner:
    """Executes test units against one session and collects a ``Check`` per evaluated assert."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.ns = _Namespace(session)
        self.ns[_RECORD] = self._record
        self.checks: list[Check] = []

    def _record(self, thunk, label: str) -> None:
        try:
            value = thunk()
            truth = bool(value)
        except (HarnessFault, Unencodable) as exc:
            self.checks.append(Check(label, False, "harness", str(exc)))
            return
        except AssertionError as exc:
            self.checks.append(Check(label, False, "wrong", f"AssertionError: {exc}"[:300]))
            return
        except Exception as exc:  # noqa: BLE001 - the candidate raised, or returned something unusable
            self.checks.append(Check(label, False, "wrong", f"{type(exc).__name__}: {exc}"[:300]))
            return
        self.checks.append(Check(label, truth, "ok" if truth else "wrong", "" if truth else "assertion is false"))

    def run_unit(self, code, label: str) -> None:
        """Execute one unit; an exception outside an assert is one failed check."""
        before = len(self.checks)
        try:
            exec(code, self.ns)
        except CandidateGone as exc:
            self.checks.append(Check(label, False, "gone", str(exc)))
            return
        except (HarnessFault, Unencodable) as exc:
            self.checks.append(Check(label, False, "harness", str(exc)))
            return
        except NameError as exc:
            self.checks.append(Check(label, False, "wrong", f"NameError: {exc} (not defined by the program)"))
            return
        except Exception as exc:  # noqa: BLE001
            self.checks.append(Check(label, False, "wrong", f"{type(exc).__name__}: {exc}"[:300]))
            return
        if len(self.checks) == before:  # a unit without asserts passes by running cleanly
            self.checks.append(Check(label, True))

    def setup(self, source: str, filename: str) -> None:
        """Imports and definitions the tests need (HumanEval's test module, MBPP ``test_imports``)."""
        try:
            exec(compile_tests(source, filename), self.ns)
        except HarnessFault:
            raise
        except CandidateGone:
            raise
        except CandidateError as exc:
            raise HarnessFault(f"reference setup code failed against the program: {exc}") from None
        except Exception as exc:  # noqa: BLE001
            raise HarnessFault(f"reference setup code failed: {type(exc).__name__}: {exc}") from None
