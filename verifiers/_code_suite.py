"""Test modules as datasets ship them: pytest functions, ``unittest`` classes, ``from solution``.

KodCode-style rows test a program with a pytest module that imports it (``from solution import
f``, ``import solution``) and may parametrize its tests; others ship ``unittest.TestCase``
classes that end with ``unittest.main()``. The harness runs such code as it runs asserts:

- ``rewrite_imports``: an import of the program's module (``solution``, as KodCode names it, or
  ``submission``, ``program``, ``candidate``, ``main``; always the program, whatever file of that
  name the harness's own path holds) reads the program's names: ``from solution import f as g``
  binds ``g`` to the program's ``f`` (a name the program does not define fails the test:
  ``NameError``); ``from solution import *`` binds the program's names, except a name the test
  bound itself, a standard-library or third-party module alias and comparison helpers
  (``isclose``, ``approx``, ...), which stay the harness's own, and a builtin's name, which stays
  the builtin (``Runner._program_star``; a program's function of that name the tests call must
  pass them both ways, ``_code_calls``); ``import solution`` binds a handle whose
  attributes are the program's names.
  Any other module is imported as the test asked: a missing ``numpy`` never becomes the
  program's own ``allclose``. ``unittest.main`` / ``TestProgram`` and ``pytest.main``, through
  any alias, do nothing: they would parse the trainer's command line or collect files.
- ``expand``: a test function's ``pytest.mark.parametrize`` marks (positional or keyword), as
  the calls pytest makes (the product of stacked marks); a ``pytest.param`` case whose ``skip`` /
  ``skipif`` mark holds, or that is ``xfail``, is left out, as pytest does not count it.
- ``case_runs``: each ``test*`` method (or ``runTest``) of a ``TestCase`` subclass, run as
  ``unittest`` runs it (``setUpClass`` once, then ``setUp``, the method, ``tearDown``), and of a
  pytest ``Test*`` class. A test the harness cannot run (a fixture argument, ``async def``) is no
  pass: ``Runner`` records it as the reference's problem.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import unittest
from collections.abc import Callable, Iterator, Mapping

__all__ = [
    "COMPARATORS",
    "NotRunnable",
    "NOOP",
    "PROGRAM_IMPORT",
    "PROGRAM_MODULE",
    "PROGRAM_STAR",
    "case_runs",
    "expand",
    "is_suite",
    "module_calls",
    "program_names",
    "runnable",
    "star_imports",
    "rewrite_imports",
]

PROGRAM_IMPORT = "__passband_import__"  # (module, name) -> the program's ``name``
PROGRAM_MODULE = "__passband_module__"  # a handle whose attributes are the program's names
PROGRAM_STAR = "__passband_star__"  # () -> binds the program's names, as ``import *`` does
NOOP = "__passband_noop__"  # what ``unittest.main`` / ``pytest.main`` become: returns None
_RUNNERS = {"unittest": ("main", "TestProgram"), "pytest": ("main",)}
_PROGRAM_MODULES = frozenset({"solution", "submission", "program", "candidate", "main"})
# comparison helpers a star import must not take from the program: name -> (module, attribute)
COMPARATORS = {
    "isclose": ("math", "isclose"),
    "approx": ("pytest", "approx"),
    "allclose": ("numpy", "allclose"),
    "array_equal": ("numpy", "array_equal"),
    "assert_allclose": ("numpy.testing", "assert_allclose"),
    "assert_array_equal": ("numpy.testing", "assert_array_equal"),
    "assert_almost_equal": ("numpy.testing", "assert_almost_equal"),
}


class NotRunnable(Exception):
    """A test the harness cannot run as pytest would (a fixture argument, ``async def``): the
    reference's problem, never a pass."""


def runnable(func: Callable, label: str, fixtures: Mapping[str, Callable] = {}) -> Callable:  # noqa: B006
    """``func`` when it can be called without arguments or with ``fixtures`` only (name -> maker,
    ``_code_fixtures``), else a thunk raising ``NotRunnable``."""
    why = ""
    if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
        why = "it is async"
    else:
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            params = []
        need = [
            p.name
            for p in params
            if p.default is p.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        if need and all(n in fixtures for n in need):
            return lambda: func(**{n: fixtures[n]() for n in need})
        need = [n for n in need if n not in fixtures]
        why = f"it needs the fixture(s) {', '.join(need)}" if need else ""
    if not why:
        return func

    def refuse() -> None:
        raise NotRunnable(f"{label}: the harness cannot run this test ({why}; it provides none)")

    return refuse


def _is_program(module: str) -> bool:
    """Whether an import of ``module`` means the program under test: always for these names,
    whatever file of that name the harness's own path holds."""
    return module.split(".")[0] in _PROGRAM_MODULES


def _main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``"""
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


@functools.lru_cache(maxsize=1024)
def module_calls(source: str) -> frozenset[str]:
    """The names a test module calls directly, with the ``test*`` names only where its own
    top-level code calls them (not inside functions, classes or a ``__main__`` block, which the
    harness does not run): those tests ran already; the others are collected and run."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    top = [
        n
        for n in tree.body
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and not _main_guard(n)
    ]
    everywhere = {n for n in _calls(tree.body) if not n.startswith("test")}
    return frozenset(everywhere | _calls(top))


def _calls(nodes: list[ast.stmt]) -> set[str]:
    return {
        n.func.id
        for top in nodes
        for n in ast.walk(top)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }


@functools.lru_cache(maxsize=1024)
def program_names(source: str) -> tuple[str, ...]:
    """The names a test module imports from the program (``from solution import f, g``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    return tuple(
        sorted(
            a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and _is_program(n.module)
            for a in n.names
            if a.name != "*"
        )
    )


@functools.lru_cache(maxsize=1024)
def star_imports(source: str) -> bool:
    """Whether a test module takes the program's names wholesale (``from solution import *``):
    then, as in plain Python, a name the program binds may be what the tests call."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        a.name == "*"
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module and _is_program(n.module)
        for a in n.names
    )


@functools.lru_cache(maxsize=1024)
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


def _call(name: str, *args: str) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), [ast.Constant(a) for a in args], [])


class _Imports(ast.NodeTransformer):
    """The rewrite ``rewrite_imports`` describes, on one parsed test module."""

    def __init__(self) -> None:
        self.runners: dict[str, str] = {}  # a name bound to unittest / pytest -> that module
        self.mains: set[str] = set()  # names bound to a runner's main / TestProgram

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.stmt | list[ast.stmt]:
        if node.module in _RUNNERS and not node.level:
            entry = _RUNNERS[node.module]
            self.mains |= {a.asname or a.name for a in node.names if a.name in entry}
            return node
        if not node.module or not _is_program(node.module):  # ``from .solution import f`` too
            return node
        binds = [
            ast.Expr(_call(PROGRAM_STAR))
            if alias.name == "*"
            else ast.Assign(
                targets=[ast.Name(alias.asname or alias.name, ast.Store())],
                value=_call(PROGRAM_IMPORT, node.module, alias.name),
            )
            for alias in node.names
        ]
        return [ast.copy_location(b, node) for b in binds]

    def visit_Import(self, node: ast.Import) -> ast.stmt | list[ast.stmt]:
        for a in node.names:
            if a.name in _RUNNERS:
                self.runners[a.asname or a.name] = a.name
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

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        base = node.value
        if isinstance(base, ast.Name) and node.attr in _RUNNERS.get(self.runners.get(base.id), ()):
            return ast.copy_location(ast.Name(NOOP, ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.mains:
            return ast.copy_location(ast.Name(NOOP, ast.Load()), node)
        return node


def rewrite_imports(tree: ast.Module) -> ast.Module:
    """``tree`` with the program's imports bound and every use of ``unittest.main``,
    ``unittest.TestProgram`` and ``pytest.main`` (through any alias; outside test functions)
    made a call that does nothing and returns None."""
    return _Imports().visit(tree)


def _marks(obj) -> list:
    marks = getattr(obj, "pytestmark", [])
    return list(marks) if isinstance(marks, (list, tuple)) else [marks]


def expand(func: Callable, owner: type | None = None) -> Iterator[tuple[str, dict]]:
    """(label suffix, keyword arguments) of each call pytest's parametrize marks make of
    ``func`` (and of its class ``owner``); one call without arguments when it has none, none
    when a ``skip``, a holding ``skipif`` or an ``xfail`` mark leaves it out."""
    marks = _marks(func) + (_marks(owner) if owner is not None else [])
    if any(_drops(m) for m in marks):
        return
    marks = [m for m in marks if getattr(m, "name", "") == "parametrize"]
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
    args, kw = list(getattr(mark, "args", ())), dict(getattr(mark, "kwargs", {}))
    names = args[0] if args else kw.get("argnames")
    values = args[1] if len(args) > 1 else kw.get("argvalues")
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    names = list(names) if names is not None else []
    out = []
    for k, value in enumerate(list(values) if values is not None else []):
        if hasattr(value, "values") and hasattr(value, "marks"):  # pytest.param(...)
            if any(_drops(m) for m in value.marks):
                continue  # pytest skips it, or does not count its outcome
            value = tuple(value.values) if len(names) != 1 else value.values[0]
        row = value if len(names) != 1 else (value,)
        out.append((str(k), dict(zip(names, row))))
    return out


def _drops(mark) -> bool:
    """Whether pytest leaves a case's outcome out: ``skip``, or ``skipif`` / ``xfail`` whose
    condition holds (no condition: it holds). A condition given as a string is evaluated by pytest
    in the module; the harness does not guess it: ``NotRunnable``."""
    name = getattr(mark, "name", "")
    if name == "skip":
        return True
    if name not in ("skipif", "xfail"):
        return False
    args, kw = getattr(mark, "args", ()), getattr(mark, "kwargs", {})
    conditions = list(args) or ([kw["condition"]] if "condition" in kw else [True])
    if any(isinstance(c, str) for c in conditions):
        raise NotRunnable(f"a {name} condition given as a string: {conditions!r}"[:200])
    return any(bool(c) for c in conditions)


def case_runs(cls: type, fixtures: Mapping = {}) -> Iterator[tuple[str, Callable[[], None]]]:  # noqa: B006
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
                for suffix, kwargs in expand(getattr(cls, method), cls):
                    run = _pytest_run(cls, method, kwargs, fixtures)
                    yield f"{cls.__name__}.{method}{suffix}", run
        for inner in vars(cls).values():  # pytest collects nested Test* classes too
            if isinstance(inner, type) and inner.__name__.startswith("Test"):
                yield from case_runs(inner, fixtures)


def _unittest_runs(cls: type) -> Iterator[tuple[str, Callable[[], None]]]:
    ready = []

    def run(method: str) -> None:
        if not ready:
            ready.append(True)
            cls.setUpClass()
        cls(method).debug()  # setUp, the method, tearDown and cleanups; exceptions propagate

    methods = list(unittest.TestLoader().getTestCaseNames(cls))
    if (
        not methods
        and "runTest" in dir(cls)
        and cls.runTest is not unittest.TestCase.__dict__.get("runTest")
    ):
        methods = ["runTest"]
    for method in methods:
        if not getattr(getattr(cls, method), "__unittest_skip__", False):
            yield f"{cls.__name__}.{method}", (lambda m=method: run(m))


def _pytest_run(cls: type, method: str, kwargs: dict, fixtures: Mapping) -> Callable[[], None]:
    def run() -> None:
        if "setup_class" in dir(cls) and not getattr(cls, "_passband_set_up", False):
            cls.setup_class()
            cls._passband_set_up = True
        instance = cls()
        bound = functools.partial(getattr(instance, method), **kwargs)
        call = runnable(bound, f"{cls.__name__}.{method}", fixtures)
        for hook in ("setup_method", "teardown_method"):  # pytest passes the method, or nothing
            if hook in dir(instance) and not _takes_one(getattr(instance, hook)):
                raise NotRunnable(f"{cls.__name__}.{hook} takes arguments the harness lacks")
        if hasattr(instance, "setup_method"):
            _hook(instance.setup_method, bound)
        try:
            call()
        finally:
            if hasattr(instance, "teardown_method"):
                _hook(instance.teardown_method, bound)

    return run


def _takes_one(hook: Callable) -> bool:
    try:
        required = [p for p in inspect.signature(hook).parameters.values() if p.default is p.empty]
    except (TypeError, ValueError):
        return False
    return len(required) <= 1


def _hook(hook: Callable, method: Callable) -> None:
    params = inspect.signature(hook).parameters
    hook(method) if params else hook()
