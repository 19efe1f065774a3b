"""Expected values first: the test's reference code, rewritten so that a program cannot change the
inputs an expected value is computed from (``_code_rewrite.compile_tests`` applies it).

Python evaluates left to right, so in ``candidate(lst) == sorted(lst)`` a program that empties its
argument (the harness writes a program's changes to its arguments back into the test's objects, as
one interpreter would) and returns [] was compared with ``sorted([])`` and passed. An *expected
value* is a part built only from the test's names, literals, operators, slices, comprehensions,
lambdas and pure functions (``sorted``, ``len``, ``math.prod``, ``Counter``, ``np.array``, pure
methods such as ``' '.join`` on a name or a literal), standing after a part that makes a call in:

- a comparison whose first operand makes the call, every operand after it
  (``f(x) == sorted(x) != []``); a call inside a chain keeps Python's order
  (``0 <= insert_sorted(a, 5) < len(a)`` means the length after the insertion);
- the arguments after the first of a comparing function (``math.isclose(f(x), sum(x))``,
  ``np.allclose``, ``assertEqual``, ``operator.eq``) or of a function the test defines
  (``assertion(candidate(x), sorted(x), 0)``);
- a subtraction (``abs(f(x) - sum(x)) < 1e-9``).

``ordered`` computes (and copies) those parts before anything else in the expression, unless a name
they read holds a program object (``len(stack)`` after ``stack.push(1)`` reads the program's
state, as the test means); a part that raises when computed first (``lst[0]`` of an empty list
that a chain would never reach) is left to Python's order. A bare name compared for equality
(``sort_in_place(x) == x``; ``pick(a) in a`` is rewritten), an attribute of a name other than a
pure method or a module's pure function (``acc.balance``), and expressions that await, yield or call
``super()`` keep Python's order, as do statements of a class body.

Not covered: an expected value in a later statement (``out = f(nums)`` then
``assert sorted(out) == sorted(nums)``) reads the arguments as the program left them, as Python
does. Computing it from the arguments before the call (tried in stop 38) refused right programs
that change their argument and return it or what they removed (``add_item(inv, x)`` returning
``inv``, then ``len(updated) == len(inv)``): 29 of 191 realistic tests in a review.
"""

from __future__ import annotations

import ast
import copy
from decimal import Decimal
from fractions import Fraction

from passband.sandbox import RemoteObject

ORDERED = "__passband_ordered__"
_PICK = "__passband_pick__"

# Builtins that cannot call the program or change their arguments
_PURE = frozenset(
    "abs all any bool dict divmod enumerate filter float frozenset int len list map max min pow "
    "range reversed round set sorted str sum tuple zip chr ord hex bin oct repr".split()
)
# Names a test imports that compute without changing their arguments; a program's function of
# that name is caught at run time (``ordered``: a name holding a program object)
_PURE_NAMES = frozenset(
    "Counter OrderedDict deque defaultdict Fraction Decimal accumulate nlargest nsmallest prod "
    "fsum sqrt isqrt gcd lcm factorial comb perm floor ceil mean median mode reduce chain "
    "combinations permutations product islice".split()
)
# Methods that read their object and arguments and change neither
_PURE_METHODS = frozenset(
    "join upper lower strip lstrip rstrip split rsplit splitlines replace format title capitalize "
    "casefold swapcase zfill center ljust rjust fromkeys keys values items get copy count index "
    "startswith endswith isdigit isalpha isalnum isspace isupper islower union intersection "
    "difference symmetric_difference".split()
)
# Modules (and types) whose functions an expected value may call
_PURE_MODULES = {
    "math": None,  # every function of math is pure
    "statistics": None,
    "heapq": frozenset({"nlargest", "nsmallest"}),
    "itertools": frozenset(
        "accumulate chain combinations permutations product islice starmap zip_longest".split()
    ),
    "collections": frozenset({"Counter", "OrderedDict", "deque", "defaultdict"}),
    "functools": frozenset({"reduce"}),
    "operator": None,
    "np": frozenset(
        "array asarray sort sum cumsum prod mean median unique abs sqrt round min max argsort "
        "argmax argmin concatenate zeros ones arange".split()
    ),
    "copy": frozenset({"copy", "deepcopy"}),
    "pytest": frozenset({"approx"}),
    "str": _PURE_METHODS,
    "dict": _PURE_METHODS,
}
_PURE_MODULES["numpy"] = _PURE_MODULES["np"]

# functions that compare their first argument with the rest
_COMPARING = frozenset(
    "isclose allclose array_equal array_equiv assert_allclose assert_array_equal assert_equal "
    "assert_almost_equal assert_array_almost_equal assertEqual assertAlmostEqual assertListEqual "
    "assertCountEqual assertDictEqual assertSetEqual assertTupleEqual assertSequenceEqual "
    "assertIn assert_frame_equal assert_series_equal eq".split()
)
_PLAIN_NODES = (
    ast.Name, ast.Constant, ast.Load, ast.Store, ast.Subscript, ast.Slice, ast.List, ast.Tuple,
    ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Call, ast.keyword,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension, ast.Lambda,
    ast.arguments, ast.arg, ast.IfExp, ast.Compare, ast.cmpop, ast.BoolOp, ast.boolop,
    ast.Starred, ast.JoinedStr, ast.FormattedValue,
)  # fmt: skip


class ExpectedFirst(ast.NodeTransformer):
    """The rewrite (module docstring). ``defined``: the functions the test code defines."""

    def __init__(self, defined: frozenset[str] = frozenset()) -> None:
        self.defined = defined

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        """A class body's own statements keep their scope (a lambda there cannot see the class's
        names); its methods are rewritten."""
        node.body = [
            self.visit(s) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) else s
            for s in node.body
        ]
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        parts = [node.left, *node.comparators]
        if not _calls(node.left) or _opaque(node):  # a call in the middle of a chain
            return node  # (``0 <= insert(a, x) < len(a)``) may mean the bound after it
        member = [False] + [isinstance(op, (ast.In, ast.NotIn)) for op in node.ops]
        early = [i for i in range(1, len(parts)) if _expected(parts[i], member[i])]
        return _rewrite(node, parts, early) if early else node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func, args = node.func, node.args
        if isinstance(func, ast.Attribute):
            comparing = func.attr in _COMPARING
        else:  # a method the test defines is not matched by its name: it may be the program's
            comparing = isinstance(func, ast.Name) and (
                func.id in _COMPARING or func.id in self.defined
            )
        if not comparing or len(args) < 2 or any(isinstance(a, ast.Starred) for a in args):
            return node
        if _opaque(node) or not _calls(args[0]):
            return node
        early = [i for i in range(1, len(args)) if _expected(args[i])]
        return _rewrite(node, args, early) if early else node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Sub) or not _calls(node.left) or _opaque(node):
            return node
        return _rewrite(node, [node.left, node.right], [1]) if _expected(node.right) else node


def needs_its_frame(node: ast.AST) -> bool:
    """Whether ``node`` awaits, yields or calls ``super()``: in a lambda these mean something else."""
    return any(
        isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom))
        or isinstance(n, ast.Name)
        and n.id == "super"
        for n in ast.walk(node)
    )


def _opaque(node: ast.AST) -> bool:
    """``needs_its_frame``, or a ``:=`` (its name must bind where the test wrote it)."""
    return needs_its_frame(node) or any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


def _calls(node: ast.AST) -> bool:
    """Whether ``node`` calls anything: even ``map(f, x)`` or ``sorted(x, key=f)`` may call the
    program, and ``j.join(x)`` may be a program object's method."""
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _plain(node: ast.AST, functions: set[int]) -> bool:
    """A node an expected value may hold (module docstring)."""
    if isinstance(node, ast.Attribute):
        base = node.value
        if isinstance(base, ast.Name) and base.id in _PURE_MODULES:
            allowed = _PURE_MODULES[base.id]
            return allowed is None or node.attr in allowed
        return id(node) in functions and node.attr in _PURE_METHODS and _plain_base(base)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in _PURE or func.id in _PURE_NAMES
        return isinstance(func, ast.Attribute)  # checked as the Attribute node itself
    return isinstance(node, _PLAIN_NODES)


def _plain_base(node: ast.AST) -> bool:
    return isinstance(node, (ast.Name, ast.Constant))


def _expected(node: ast.expr, bare: bool = False) -> bool:
    """A part that is an expected value: at least one name of the test's and nothing but plain
    nodes; a bare name only where ``bare`` (``pick(a) in a``)."""
    if isinstance(node, ast.Name) and not bare:
        return False
    nodes = list(ast.walk(node))
    functions = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    return bool(_read_names(node)) and all(_plain(n, functions) for n in nodes)


def _read_names(node: ast.AST) -> list[str]:
    """The names ``node`` reads from its scope: not those its comprehensions and lambdas bind;
    the functions it calls included (a program's ``Counter`` is caught at run time)."""
    nodes = list(ast.walk(node))
    bound = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in nodes if isinstance(n, ast.Lambda) for a in _lambda_args(n)}
    reads = [n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return [name for name in dict.fromkeys(reads) if name not in bound and name not in _PURE]


def _lambda_args(node: ast.Lambda) -> list[ast.arg]:
    a = node.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]


def _params(*names: str) -> ast.arguments:
    return ast.arguments(
        posonlyargs=[], args=[ast.arg(n) for n in names], kwonlyargs=[], kw_defaults=[], defaults=[]
    )


def _rewrite(node: ast.expr, parts: list[ast.expr], early: list[int]) -> ast.expr:
    """``(lambda pick: <node, part i replaced by pick(i)>)(__passband_ordered__([lambda: part,
    ...], early, lambda: (names the early parts read,)))``: ``pick(i)`` is the value computed
    first, or the part evaluated where Python evaluates it."""
    names = [n for i in early for n in _read_names(parts[i])]
    held = ast.Tuple([ast.Name(n, ast.Load()) for n in dict.fromkeys(names)], ast.Load())
    thunks = ast.List([ast.Lambda(_params(), part) for part in parts], ast.Load())
    index = {id(p): i for i, p in enumerate(parts)}

    class _Swap(ast.NodeTransformer):
        def visit(self, n):
            if id(n) in index:
                return ast.Call(ast.Name(_PICK, ast.Load()), [ast.Constant(index[id(n)])], [])
            return super().visit(n)

    body = _Swap().generic_visit(node)  # the parts' own nodes stay in the thunks
    values = ast.Call(
        ast.Name(ORDERED, ast.Load()),
        [
            thunks,
            ast.Tuple([ast.Constant(i) for i in early], ast.Load()),
            ast.Lambda(_params(), held),
        ],
        [],
    )
    return ast.copy_location(ast.Call(ast.Lambda(_params(_PICK), body), [values], []), node)


def ordered(parts, early, names):
    """``pick(i)``: part i's value, where the ``early`` parts (expected values) are computed and
    copied now, before the others, unless a name they read holds a program object (then Python's
    order: its state after the call) or computing one now raises (then it is computed where
    Python computes it)."""
    values = {}
    try:
        held = names()
    except Exception:  # noqa: BLE001 - e.g. a name not bound yet: Python's order decides
        held = None
    if held is not None and not any(map(reaches_program, held)):
        for i in early:
            try:
                values[i] = snapshot(parts[i]())
            except Exception:  # noqa: BLE001 - where Python would not reach it, or reach it later
                pass
    return lambda i: values[i] if i in values else parts[i]()


def reaches_program(value, budget: int = 100_000) -> bool:
    """Whether computing with ``value`` first could run the program or change what it later sees:
    a program object, in it at any depth (``[S(), S()]``), or an iterator the call may share."""
    if type(value) in _CONTAINERS and len(value) > budget:  # a long flat list of numbers is data
        return not _all_scalars(value)
    stack, seen = [value], 0
    while stack and seen < budget:
        item = stack.pop()
        seen += 1
        if isinstance(item, RemoteObject) or hasattr(type(item), "__next__"):
            return True
        if type(item) is dict:
            stack.extend(item.values())
            stack.extend(item.keys())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return bool(stack)  # too large to tell: Python's order


_CONTAINERS = (list, tuple, dict, set, frozenset, bytearray)
_SCALARS = (int, float, complex, str, bytes, bool, type(None), Decimal, Fraction)
_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def snapshot(value, budget: int = 100_000):
    """A copy of an expected value made of plain data (a later write-back into the test's list
    must not change it): lists, tuples (named ones too), dicts, sets of numbers and strings; a
    larger one than ``budget`` items is copied one level deep when that level is all scalars.
    Anything else (a program's object) as it is."""
    if type(value) in _VIEWS:  # a live view of the test's dict: its state now, not after the call
        frozen = snapshot(dict(value.mapping), budget)
        return getattr(frozen, type(value).__name__.removeprefix("dict_"))()
    if not _container(value):
        return value
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > budget:
            return _flat_copy(value)
        if type(item) is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif _container(item):
            stack.extend(item)
        elif type(item) not in _SCALARS:
            return value
    return copy.deepcopy(value)


def _container(value) -> bool:
    return type(value) in _CONTAINERS or isinstance(value, tuple)


def _flat_copy(value):
    return copy.copy(value) if type(value) in _CONTAINERS and _all_scalars(value) else value


def _all_scalars(value) -> bool:
    """Whether every item of the container ``value`` (a dict's values) is a plain scalar."""
    items = value.values() if type(value) is dict else value
    return all(type(x) in _SCALARS for x in items)
