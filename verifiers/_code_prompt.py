"""The prompt's own helpers, which the tests must use as the dataset wrote them."""

from __future__ import annotations

import ast
import functools

__all__ = ["trusted_prompt"]


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
