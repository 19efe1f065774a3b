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
            body=_Binder().visit(node.test),
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
    """Expected values are computed before the program's call that comes first.

    Python evaluates left to right, so in ``candidate(lst) == sorted(lst)`` a program that empties
    its argument and returns [] was compared with ``sorted([])`` and passed. An expected value is
    a part made only of the test's names, literals, operators, slices and pure builtins, in one of
    these places after a part that makes a call:

    - a comparison's right side, every one of a chain (``f(x) == sorted(x) != []``);
    - an argument after the first of a comparing function (``math.isclose(f(x), sum(x))``,
      ``np.allclose``, ``assertEqual``) or of a function the test itself defines
      (``assertion(candidate(x), sorted(x), 0)``);
    - the right side of a subtraction (``abs(f(x) - sum(x)) < 1e-9``).

    ``ordered`` computes (and copies) such parts from the inputs as the test wrote them, before the
    program can change them, unless one of their names holds a program object (``len(stack)``
    after ``stack.push(1)`` reads the program's state, as the test means). A part that binds a name
    (``:=``), a bare name (``sort_in_place(x) == x``; ``pick(a) in a`` is rewritten) and an
    attribute other than a pure method called on a name or a literal (``acc.balance``) keep
    Python's order."""

    def __init__(self, defined: frozenset[str] = frozenset()) -> None:
        self.defined = defined  # functions the test code defines: their arguments are its own

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        rights = node.comparators
        if not _calls(node.left) or any(map(_binds, [node.left, *rights])):
            return node
        member = [isinstance(op, (ast.In, ast.NotIn)) for op in node.ops]
        early = [i + 1 for i, r in enumerate(rights) if _expected(r, member[i])]
        if not early or len(early) + sum(map(_literal, rights)) < len(rights):
            return node
        params = [_LEFT, *(f"__passband_right{i}__" for i in range(len(rights)))]
        body = ast.Compare(
            ast.Name(_LEFT, ast.Load()), node.ops, [ast.Name(n, ast.Load()) for n in params[1:]]
        )
        return _rewrite(node, params, body, [node.left, *rights], early)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func, args = node.func, node.args
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if not (name in _COMPARING or name in self.defined) or len(args) < 2:
            return node
        if any(isinstance(a, ast.Starred) for a in args) or not _calls(args[0]):
            return node
        later = [i for i, a in enumerate(args) if i and _expected(a)]
        if not later or any(map(_binds, [*args, *node.keywords])):
            return node
        params = [f"__passband_right{i}__" for i in range(len(args))]
        body = ast.Call(func, [ast.Name(n, ast.Load()) for n in params], node.keywords)
        return _rewrite(node, params, body, args, later)

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Sub) or not _calls(node.left) or not _expected(node.right):
            return node
        if _binds(node.left):
            return node
        body = ast.BinOp(ast.Name(_LEFT, ast.Load()), node.op, ast.Name(_RIGHT, ast.Load()))
        return _rewrite(node, [_LEFT, _RIGHT], body, [node.left, node.right], [1])


# functions that compare their first argument with the rest
_COMPARING = frozenset(
    "isclose allclose array_equal array_equiv assert_allclose assert_array_equal assert_equal "
    "assert_almost_equal assert_array_almost_equal assertEqual assertAlmostEqual assertListEqual "
    "assertCountEqual assertDictEqual assertSetEqual assertTupleEqual assertSequenceEqual "
    "assertIn assert_frame_equal assert_series_equal".split()
)


def _expected(node: ast.expr, bare: bool = False) -> bool:
    """A part that is an expected value: at least one name of the test's and nothing but plain
    nodes (``_plain``); a bare name only where ``bare`` (``pick(a) in a``)."""
    if isinstance(node, ast.Name) and not bare:
        return False
    nodes = list(ast.walk(node))
    functions = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    names = [n for n in nodes if isinstance(n, ast.Name) and id(n) not in functions]
    return bool(names) and all(_plain(n, functions) for n in nodes)


def _literal(node: ast.expr) -> bool:
    """A literal value (``-1``, ``(1, 2)``): the same whenever it is computed."""
    return all(
        isinstance(n, (ast.Constant, ast.UnaryOp, ast.unaryop, ast.Tuple, ast.Load))
        for n in ast.walk(node)
    )


def _rewrite(node, params, body, parts, early) -> ast.expr:
    """``(lambda *params: body)(*__passband_ordered__([lambda: part, ...], early, lambda: names))``
    where ``names`` are the data names the early parts read."""
    names = []
    for i in early:
        nodes = list(ast.walk(parts[i]))
        functions = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        names += [n.id for n in nodes if isinstance(n, ast.Name) and id(n) not in functions]
    held = ast.Tuple([ast.Name(n, ast.Load()) for n in dict.fromkeys(names)], ast.Load())
    thunks = ast.List([ast.Lambda(_params(), part) for part in parts], ast.Load())
    early = ast.Tuple([ast.Constant(i) for i in early], ast.Load())
    values = ast.Call(
        ast.Name(ORDERED, ast.Load()), [thunks, early, ast.Lambda(_params(), held)], []
    )
    call = ast.Call(ast.Lambda(_params(*params), body), [ast.Starred(values, ast.Load())], [])
    return ast.copy_location(call, node)


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


def ordered(parts, early, names) -> list:
    """Every part's value, in order, except that the ``early`` ones (expected values) are computed
    and copied first, unless a name they read holds a program object (then Python's order: its
    state after the call)."""
    try:
        held = names()
    except Exception:  # noqa: BLE001 - e.g. a name not bound yet: Python's order decides
        held = None
    values, done = [None] * len(parts), set()
    if held is not None and not any(isinstance(v, RemoteObject) for v in held):
        for i in early:
            values[i] = snapshot(parts[i]())
            done.add(i)
    for i, part in enumerate(parts):
        if i not in done:
            values[i] = part()
    return values


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
    defined = frozenset(
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    tree = _ExpectedFirst(defined).visit(tree)
    tree = ast.fix_missing_locations(_AssertRewriter(source, filename).visit(tree))
    return compile(tree, filename, "exec")
