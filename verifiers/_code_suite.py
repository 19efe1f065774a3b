"""Test modules as datasets ship them: pytest functions, ``unittest`` classes, ``from solution``.

KodCode-style rows test a program with a pytest module that imports it (``from solution import
f``, ``import solution``) and may parametrize its tests; others ship ``unittest.TestCase``
classes that end with ``unittest.main()``. The harness runs such code as it runs asserts:

- ``rewrite_imports``: an import of the program's module (``solution``, as KodCode names it, or
  ``submission``, ``program``, ``candidate``, ``main``; only when no such module is installed
  here) reads the program's names: ``from solution import f as g`` binds ``g`` to the program's
  ``f`` (a name the program does not define fails the test: ``NameError``), ``import solution``
  binds a handle whose attributes are the program's names. Any other module is imported as the
  test asked: a missing ``numpy`` must never become the program's own ``allclose``.
  ``unittest.main()`` and ``pytest.main()`` calls are dropped: they would run the harness's own
  ``__main__``.
- ``expand``: a test function's ``pytest.mark.parametrize`` marks, as the calls pytest makes
  (the product of stacked marks); ``pytest.param(..., marks=skip)`` cases are left out.
- ``case_runs``: each ``test*`` method of a ``TestCase`` subclass, run as ``unittest`` runs it
  (``setUpClass`` once, then ``setUp``, the method, ``tearDown``; an exception fails it).
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import unittest
from collections.abc import Callable, Iterator

__all__ = [
    "PROGRAM_IMPORT",
    "PROGRAM_MODULE",
    "case_runs",
    "expand",
    "is_suite",
    "rewrite_imports",
]

PROGRAM_IMPORT = "__passband_import__"  # (module, name) -> the program's ``name``
PROGRAM_MODULE = "__passband_module__"  # a handle whose attributes are the program's names
_MAINS = frozenset({"unittest", "pytest"})
_PROGRAM_MODULES = frozenset({"solution", "submission", "program", "candidate", "main"})


def _is_program(module: str) -> bool:
    """Whether an import of ``module`` means the program under test."""
    root = module.split(".")[0]
    if root not in _PROGRAM_MODULES:
        return False
    try:
        return importlib.util.find_spec(root) is None
    except (ImportError, ValueError):
        return True


def is_suite(source: str) -> bool:
    """Whether test code defines pytest ``test*`` functions, ``Test*`` classes or subclasses
    (``unittest.TestCase``) at its top level."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"))
        or (isinstance(n, ast.ClassDef) and (n.bases or n.name.startswith("Test")))
        for n in tree.body
    )


class _Imports(ast.NodeTransformer):
    """The rewrite ``rewrite_imports`` describes, on one parsed test module."""

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.stmt | list[ast.stmt]:
        if node.level or not node.module or not _is_program(node.module):
            return node
        binds = [
            ast.Assign(
                targets=[ast.Name(alias.asname or alias.name, ast.Store())],
                value=ast.Call(
                    ast.Name(PROGRAM_IMPORT, ast.Load()),
                    [ast.Constant(node.module), ast.Constant(alias.name)],
                    [],
                ),
            )
            for alias in node.names
            if alias.name != "*"  # ``from solution import *``: every name reaches the program
        ]
        return [ast.copy_location(b, node) for b in binds] or ast.copy_location(ast.Pass(), node)

    def visit_Import(self, node: ast.Import) -> ast.stmt | list[ast.stmt]:
        kept = [a for a in node.names if not _is_program(a.name)]
        binds = [
            ast.Assign(
                targets=[ast.Name(a.asname or a.name.split(".")[0], ast.Store())],
                value=ast.Name(PROGRAM_MODULE, ast.Load()),
            )
            for a in node.names
            if _is_program(a.name)
        ]
        out = ([ast.Import(names=kept)] if kept else []) + binds
        return [ast.copy_location(s, node) for s in out] or node

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        call = node.value
        func = call.func if isinstance(call, ast.Call) else None
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "main"
            and isinstance(func.value, ast.Name)
            and func.value.id in _MAINS
        ):
            return ast.copy_location(ast.Pass(), node)
        return node

    def visit_FunctionDef(self, node):  # imports inside a test function are its own business
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def rewrite_imports(tree: ast.Module) -> ast.Module:
    """``tree`` with the program's imports bound and ``*.main()`` calls dropped (module level
    and inside top-level ``if`` / ``try`` blocks, such as ``if __name__ == "__main__":``)."""
    return _Imports().visit(tree)


def expand(func: Callable) -> Iterator[tuple[str, dict]]:
    """(label suffix, keyword arguments) of each call pytest's parametrize marks make of
    ``func``; one call without arguments when it has none."""
    marks = [m for m in getattr(func, "pytestmark", ()) if getattr(m, "name", "") == "parametrize"]
    if not marks:
        yield "", {}
        return
    tables = [_cases(m) for m in reversed(marks)]  # the mark nearest the function varies first
    for combo in itertools.product(*tables):
        kwargs: dict = {}
        for _, values in combo:
            kwargs.update(values)
        yield "[" + "-".join(i for i, _ in combo) + "]", kwargs


def _cases(mark) -> list[tuple[str, dict]]:
    names, values = (list(mark.args) + [None, None])[:2]
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    names = list(names or [])
    out = []
    for k, value in enumerate(values or []):
        if hasattr(value, "values") and hasattr(value, "marks"):  # pytest.param(...)
            if any(getattr(m, "name", "") in ("skip", "skipif", "xfail") for m in value.marks):
                continue  # a case the dataset itself does not expect to pass
            value = value.values
        row = value if len(names) != 1 else (value,)
        out.append((str(k), dict(zip(names, row))))
    return out


def case_runs(cls: type) -> Iterator[tuple[str, Callable[[], None]]]:
    """(label, thunk) for each test of the class ``cls``: the ``test*`` methods of a
    ``unittest.TestCase`` subclass, run as ``unittest`` runs them (``setUpClass`` with the first),
    or of a pytest ``Test*`` class (a fresh instance each, ``setup_method`` / ``teardown_method``
    around it, parametrize cases expanded). A failing assertion or any exception raises."""
    if not isinstance(cls, type) or getattr(cls, "__unittest_skip__", False):
        return
    if issubclass(cls, unittest.TestCase):
        yield from _unittest_runs(cls)
    elif cls.__name__.startswith("Test") and "__init__" not in vars(cls):
        for method in sorted(m for m in dir(cls) if m.startswith("test")):
            if callable(getattr(cls, method)):
                for suffix, kwargs in expand(getattr(cls, method)):
                    yield f"{cls.__name__}.{method}{suffix}", _pytest_run(cls, method, kwargs)


def _unittest_runs(cls: type) -> Iterator[tuple[str, Callable[[], None]]]:
    ready = []

    def run(method: str) -> None:
        if not ready:
            ready.append(True)
            cls.setUpClass()
        cls(method).debug()  # setUp, the method, tearDown and cleanups; exceptions propagate

    for method in unittest.TestLoader().getTestCaseNames(cls):
        if not getattr(getattr(cls, method), "__unittest_skip__", False):
            yield f"{cls.__name__}.{method}", (lambda m=method: run(m))


def _pytest_run(cls: type, method: str, kwargs: dict) -> Callable[[], None]:
    def run() -> None:
        instance = cls()
        bound = getattr(instance, method)
        if hasattr(instance, "setup_method"):
            instance.setup_method(bound)
        try:
            bound(**kwargs)
        finally:
            if hasattr(instance, "teardown_method"):
                instance.teardown_method(bound)

    return run
