"""Expected values compared with a result the test saved: the arguments as they were before the call.

``_code_expected`` computes an expected value first when it stands in the same expression as the
program's call. Tests as often keep the result and compare it in a later statement::

    out = candidate(nums)
    assert sorted(out) == sorted(nums)        # any order will do

The harness writes the program's changes to ``nums`` back into the test's list (as one
interpreter would), so a program that emptied ``nums`` and returned [] passed. Here an equality
(``==``, ``!=``) that calls nothing of the program's, one of whose operands reads a name the test
assigned from a program call (``out``, the *result*), computes its other operands that are
expected values (plain data, ``_code_expected._expected``) from each argument that call changed
as it was before the call, when the call returned a collection (``session.mutations``, recorded
by ``sandbox/_writeback.py``). A call that returns a size or an element (``k = remove(nums, 3)``,
``m = pop_max(h)``) and comparisons by order or membership (``m not in h``, ``m > max(h)``) keep
Python's order: they mean the state after the call. ``assert nums[:k] == [2, 2]`` reads ``nums``
as the program left it.
"""

from __future__ import annotations

import ast

from passband.verifiers._code_expected import (
    _PICK,
    _expected,
    _opaque,
    _params,
    _program_call,
    _read_names,
    reaches_program,
    snapshot,
)

AFTER = "__passband_after__"


def result_names(tree: ast.AST) -> frozenset[str]:
    """Names the test code assigns from an expression that calls the program (``out = f(x)``,
    ``a, b = f(x)``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            if _program_call(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return frozenset(names)


class AfterCall(ast.NodeTransformer):
    """The rewrite (module docstring), of comparisons that call nothing of the program's."""

    def __init__(self, results: frozenset[str]) -> None:
        self.results = results

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.body = [
            self.visit(s) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) else s
            for s in node.body
        ]
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        parts = [node.left, *node.comparators]
        if not self.results or _opaque(node) or any(map(_program_call, parts)):
            return node
        if not all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            return node  # "m not in h", "m > max(h)" after a pop: the state after the call
        reads = [_read_names(p) for p in parts]
        links = [tuple(n for n in r if n in self.results) for r in reads]
        member = [False] + [isinstance(op, (ast.In, ast.NotIn)) for op in node.ops]
        eligible = [
            i
            for i, p in enumerate(parts)
            if not links[i]
            and _expected(p, member[i])
            and any(links[j] for j in range(len(parts)) if j != i)
        ]
        return _rewrite(node, parts, eligible, reads, links) if eligible else node


def _rewrite(node, parts, eligible, reads, links) -> ast.expr:
    """``(lambda pick: <node, part i replaced by pick(i)>)(__passband_after__([lambda: part, ...],
    {i: lambda <names of part i>: part i}, reads, links, lambda: (values,), names))``."""
    names = list(dict.fromkeys(n for r in reads for n in r))
    const = lambda v: ast.Constant(v)  # noqa: E731
    tuples = lambda rows: ast.Tuple(  # noqa: E731
        [ast.Tuple([const(n) for n in row], ast.Load()) for row in rows], ast.Load()
    )
    thunks = ast.List([ast.Lambda(_params(), p) for p in parts], ast.Load())
    calls = [any(isinstance(n, ast.Call) for n in ast.walk(p)) for p in parts]
    again = ast.Dict(  # i: (part i over its names, whether another part calls anything)
        [const(i) for i in eligible],
        [
            ast.Tuple(
                [
                    ast.Lambda(_params(*reads[i]), parts[i]),
                    const(any(c for j, c in enumerate(calls) if j != i)),
                ],
                ast.Load(),
            )
            for i in eligible
        ],
    )
    values = ast.Lambda(_params(), ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load()))
    index = {id(p): i for i, p in enumerate(parts)}

    class _Swap(ast.NodeTransformer):
        def visit(self, n):
            if id(n) in index and index[id(n)] in eligible:
                return ast.Call(ast.Name(_PICK, ast.Load()), [const(index[id(n)])], [])
            return super().visit(n)

    body = _Swap().generic_visit(node)
    call = ast.Call(
        ast.Name(AFTER, ast.Load()),
        [
            thunks,
            again,
            tuples(reads),
            tuples(links),
            values,
            ast.Tuple(list(map(const, names)), ast.Load()),
        ],
        [],
    )
    return ast.copy_location(ast.Call(ast.Lambda(_params(_PICK), body), [call], []), node)


def after_call(mutations: dict, parts, again, reads, links, values, names):
    """``pick(i)``: part i computed from the arguments as they were before the call whose result
    another part reads, when that call changed them; else computed first when it reads no program
    object (another part may call the program: ``j.join(words)``, ``sorted(x, key=f)``)."""
    fixed = {}
    try:
        current = dict(zip(names, values()))
    except Exception:  # noqa: BLE001 - a name not bound yet: Python's order
        current = None
    for i, (rebuild, hidden) in again.items() if current is not None else ():
        args = _before(mutations, current, reads, links, i)
        if args is None and not hidden:
            continue  # nothing else in the comparison calls anything: the order cannot matter
        if args is None:
            args = [current[n] for n in reads[i]]
        if any(map(reaches_program, args)):
            continue  # a program object or an iterator: Python's order
        try:
            fixed[i] = snapshot(rebuild(*args))
        except Exception:  # noqa: BLE001 - Python's order decides
            pass
    return lambda i: fixed[i] if i in fixed else parts[i]()


def _before(mutations, current, reads, links, i):
    """The values of part i's names, each argument changed by a call whose result another part
    (one that does not read that argument) holds, as it was before that call; None if none was."""
    out, changed = [], False
    for name in reads[i]:
        value = current[name]
        entry = mutations.get(id(value)) if mutations else None
        if entry is not None and entry[0] is value:
            held = [
                current[r]
                for j, row in enumerate(links)
                if j != i and name not in reads[j]
                for r in row
            ]
            if any(h is entry[2] for h in held):
                value, changed = entry[1], True
        out.append(value)
    return out if changed else None
