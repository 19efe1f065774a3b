"""Reference test code, rewritten for the harness (``_code_harness``).

Each ``assert`` becomes a recorded check (``_AssertRewriter``): one failure does not hide the rest
(partial credit), and a test counts only when its assertion was actually evaluated. A ``:=`` inside
an assert binds in the test namespace (``_Binder``). A comparison's expected value is computed
before the program's call on its left when it is built only from the test's own names
(``_ExpectedFirst``), so a program cannot change its arguments to make it agree.
"""

from __future__ import annotations

import ast
import copy
import functools

from passband.sandbox import RemoteObject


class HarnessFault(Exception):
    """The reference test code itself is broken or asks for something the harness cannot do."""


RECORD = "__passband_check__"
BIND = "__passband_bind__"  # a ``:=`` inside an assert, which the thunk would keep to itself
ORDERED = "__passband_ordered__"


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
            func=ast.Name(RECORD, ast.Load()), args=[thunk, ast.Constant(label), site], keywords=[]
        )
        return ast.copy_location(ast.Expr(call), node)


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


# Builtins that cannot call the program or change their arguments: an expected value built from
# them (``sorted(lst)``, ``len(s)``) is computed before the program runs.
_PURE = frozenset(
    "abs all any bool dict divmod enumerate float frozenset int len list map max min pow range "
    "reversed round set sorted str sum tuple zip".split()
)
# Methods that read their object and arguments and change neither: an expected value may call
# them on a name or a literal (``' '.join(words)``, ``dict.fromkeys(lst)``, ``s.upper()``); a name
# that holds a program object keeps Python's order at run time (``ordered``)
_PURE_METHODS = frozenset(
    "join upper lower strip lstrip rstrip split rsplit splitlines replace format title capitalize "
    "casefold swapcase zfill center ljust rjust fromkeys keys values items get copy count index "
    "startswith endswith isdigit isalpha isalnum isspace isupper islower union intersection "
    "difference symmetric_difference".split()
)
_LEFT, _RIGHT = "__passband_left__", "__passband_right__"
# what an expected value may be built from: names, literals, operators, slices, pure builtins;
# no attribute (``acc.balance`` reads the program's state after the call, as the test means)
_PLAIN_NODES = (
    ast.Name, ast.Constant, ast.Load, ast.Subscript, ast.Slice, ast.List, ast.Tuple, ast.Set,
    ast.Dict, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Call, ast.keyword,
)  # fmt: skip


class _ExpectedFirst(ast.NodeTransformer):
    """``candidate(lst) == sorted(lst)`` -> ``(lambda l, r: l == r)(*ordered(lambda: candidate(lst),
    lambda: sorted(lst), lambda: (lst,)))``.

    Python evaluates the left side first, so a program that empties its argument and returns []
    made the test compare [] with ``sorted([])`` and pass. A right side made only of the test's
    names, literals, operators, slices and pure builtins is the expected value: ``ordered``
    computes (and copies) it from the inputs as the test wrote them, before the program can change
    them, unless one of its names holds a program object (``len(stack)`` after ``stack.push(1)``
    reads the program's state, as the test means). Only one-operator comparisons whose left side
    makes a call and binds no name (``:=``) are rewritten; a right side that is a bare name
    compared for equality (``sort_in_place(x) == x``; ``pick(a) in a`` is rewritten) or reads an
    attribute other than a pure method called on a name or a literal (``' '.join(words)``)
    keeps Python's order."""

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) != 1 or not _calls(node.left) or _binds(node.left):
            return node
        right = node.comparators[0]
        nodes = list(ast.walk(right))
        functions = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        names = [n.id for n in nodes if isinstance(n, ast.Name) and id(n) not in functions]
        bare = isinstance(right, ast.Name) and not isinstance(node.ops[0], (ast.In, ast.NotIn))
        if bare or not names or not all(_plain(n, functions) for n in nodes):
            return node
        compare = ast.Lambda(
            _params(_LEFT, _RIGHT),
            ast.Compare(ast.Name(_LEFT, ast.Load()), node.ops, [ast.Name(_RIGHT, ast.Load())]),
        )
        held = ast.Tuple([ast.Name(n, ast.Load()) for n in dict.fromkeys(names)], ast.Load())
        thunks = [ast.Lambda(_params(), part) for part in (node.left, right, held)]
        pair = ast.Call(ast.Name(ORDERED, ast.Load()), thunks, [])
        return ast.copy_location(ast.Call(compare, [ast.Starred(pair, ast.Load())], []), node)


def _plain(node: ast.AST, functions: set[int]) -> bool:
    """A node an expected value may hold: a name, literal, operator, slice, a pure builtin's call,
    or a pure method called on a name or a literal (the method's attribute node itself)."""
    if isinstance(node, ast.Attribute):
        return id(node) in functions and node.attr in _PURE_METHODS and _plain_base(node.value)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in _PURE
        return isinstance(func, ast.Attribute)  # checked as the Attribute node itself
    return isinstance(node, _PLAIN_NODES)


def _plain_base(node: ast.AST) -> bool:
    return isinstance(node, (ast.Name, ast.Constant))


def _params(*names: str) -> ast.arguments:
    return ast.arguments(
        posonlyargs=[], args=[ast.arg(n) for n in names], kwonlyargs=[], kw_defaults=[], defaults=[]
    )


def ordered(left, right, names) -> tuple:
    """(left(), right()) with the expected value ``right`` computed and copied first, unless a
    name it reads holds a program object (then Python's order: its state after the call)."""
    try:
        held = names()
    except Exception:  # noqa: BLE001 - e.g. a name not bound yet: Python's order decides
        held = None
    if held is None or any(isinstance(v, RemoteObject) for v in held):
        first = left()
        return first, right()
    expected = snapshot(right())
    return left(), expected


def _calls(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _binds(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.NamedExpr)
        or isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == BIND
        for n in ast.walk(node)
    )


_CONTAINERS = (list, tuple, dict, set, frozenset, bytearray)
_SCALARS = (int, float, complex, str, bytes, bool, type(None))


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def snapshot(value, budget: int = 100_000):
    """A copy of an expected value made of plain data (a later write-back into the test's list
    must not change it); anything else (a program's object, a structure of more than ``budget``
    items) as it is."""
    if type(value) in _VIEWS:  # a live view of the test's dict: its state now, not after the call
        frozen = snapshot(dict(value.mapping), budget)
        return getattr(frozen, type(value).__name__.removeprefix("dict_"))()
    if type(value) not in _CONTAINERS:
        return value
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > budget:
            return value
        if type(item) in (dict,):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif type(item) in _CONTAINERS:
            stack.extend(item)
        elif type(item) not in _SCALARS:
            return value
    return copy.deepcopy(value)


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
