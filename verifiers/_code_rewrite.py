"""Reference test code, rewritten for the harness (``_code_harness``).

Each ``assert`` becomes a recorded check (``_AssertRewriter``): one failure does not hide the rest
(partial credit), and a test counts only when its assertion was actually evaluated. A ``:=`` inside
an assert binds in the test namespace (``_Binder``). Expected values are computed before the
program's call (``_code_expected``), so a program cannot change its arguments to make them agree.
An assert inside ``with pytest.raises(...)`` / ``self.assertRaises(...)`` stays a plain assert:
the exception it expects must reach the context manager.
"""

from __future__ import annotations

import ast
import functools

from passband.verifiers._code_expected import ORDERED, ExpectedFirst, needs_its_frame, ordered
from passband.verifiers._code_suite import rewrite_imports

__all__ = [
    "BIND",
    "ORDERED",
    "RECORD",
    "HarnessFault",
    "called_names",
    "compile_tests",
    "ordered",
]


class HarnessFault(Exception):
    """The reference test code itself is broken or asks for something the harness cannot do."""


RECORD = "__passband_check__"
BIND = "__passband_bind__"  # a ``:=`` inside an assert, which the thunk would keep to itself


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

    def visit_With(self, node: ast.With) -> ast.stmt:
        if any(_expects_raise(item.context_expr) for item in node.items):
            return _Plain().visit(node)  # its asserts must let the expected exception through
        return self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        if isinstance(node.test, ast.Constant):  # HumanEval's "assert True, '...'" checks nothing
            return node
        if needs_its_frame(node.test):  # a lambda around it would break it: a plain assert, whose
            return _Plain().visit(node)  # failure fails its unit
        self.generic_visit(node)
        label = (ast.get_source_segment(self.source, node) or ast.unparse(node))[:200]
        thunk = ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=_Binder().visit(node.test),
        )
        site = ast.Constant(f"{self.filename}:{node.lineno}:{node.col_offset}")
        call = ast.Call(
            func=ast.Name(RECORD, ast.Load()), args=[thunk, ast.Constant(label), site], keywords=[]
        )
        return ast.copy_location(ast.Expr(call), node)


class _Plain(ast.NodeTransformer):
    """``assert T, M`` -> ``if not T: raise AssertionError(M)``: what an assert does, also under
    ``python -O``, which would strip a plain assert and pass its unit."""

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        error = ast.Call(ast.Name("AssertionError", ast.Load()), [node.msg] if node.msg else [], [])
        test = ast.UnaryOp(ast.Not(), node.test)
        return ast.copy_location(ast.If(test, [ast.Raise(error, None)], []), node)


_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex", "warns", "assertWarns"})


def _expects_raise(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _RAISES


class _Binder(ast.NodeTransformer):
    """``(r := f(3))`` -> ``__passband_bind__("r", f(3))``: inside the assert's thunk the walrus
    would bind a name of the thunk alone, and a later ``r`` would reach the program's global of
    that name (its own answers). The test namespace gets it instead, as the assert meant."""

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.expr:
        self.generic_visit(node)
        call = ast.Call(
            func=ast.Name(BIND, ast.Load()),
            args=[ast.Constant(node.target.id), node.value],
            keywords=[],
        )
        return ast.copy_location(call, node)


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
    defined = frozenset(
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    tree = ExpectedFirst(defined).visit(rewrite_imports(tree))
    tree = ast.fix_missing_locations(_AssertRewriter(source, filename).visit(tree))
    return compile(tree, filename, "exec")
