"""The README's Python examples run as written, and what their comments promise is what they return.

Every ```python block runs, in order, as one script (blocks fenced ```python no-run need a model or
data a reader brings). A line ``expr  # literal`` becomes ``assert expr == literal``, so a comment
like ``check(...).status  # 'ok'`` is checked, not just shown.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _checked(line: str) -> str:
    code, sep, comment = line.partition("  # ")
    if not sep:
        return line
    try:
        ast.parse(code.strip(), mode="eval")
        expected = ast.literal_eval(comment.strip())
    except (SyntaxError, ValueError):
        return line
    return f"assert ({code.strip()}) == {expected!r}, ({code.strip()}, {expected!r})"


def _script() -> tuple[str, int]:
    blocks = [body for info, body in BLOCK.findall(README.read_text()) if "no-run" not in info]
    lines = [_checked(line) for body in blocks for line in body.splitlines()]
    return "\n".join(lines), sum(line.startswith("assert (") for line in lines)


def test_readme_python_blocks_run_and_match_their_comments(tmp_path):
    script, checks = _script()
    assert checks >= 5, "the README lost its checked examples"
    (tmp_path / "readme_example.py").write_text(script)
    done = subprocess.run(
        [sys.executable, "readme_example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
