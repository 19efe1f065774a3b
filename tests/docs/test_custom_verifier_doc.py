"""docs/custom_verifier.md runs as written: file blocks are saved, the other Python blocks run as a script."""

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "custom_verifier.md"
BLOCK = re.compile(r"^```python(?: file=(\S+))?\n(.*?)^```", re.DOTALL | re.MULTILINE)


def test_doc_code_blocks_run(tmp_path):
    blocks = BLOCK.findall(DOC.read_text())
    files = [(name, code) for name, code in blocks if name]
    scripts = [code for name, code in blocks if not name]
    assert files and scripts, "the doc lost its examples"
    for name, code in files:
        (tmp_path / name).write_text(code)
    (tmp_path / "example.py").write_text("\n".join(scripts))
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "status='ok'" in done.stdout and "1.5" in done.stdout
    assert "RuntimeWarning" not in done.stderr  # ran in workers, not the inline fallback


def test_each_doc_block_runs_on_its_own(tmp_path):
    """A reader copies one block: the "Coming from TRL" one failed alone (``Reward`` unimported)."""
    blocks = BLOCK.findall(DOC.read_text())
    for name, code in blocks:
        if name:
            (tmp_path / name).write_text(code)
    for i, code in enumerate(code for name, code in blocks if not name):
        (tmp_path / f"block{i}.py").write_text(code)
        done = subprocess.run(
            [sys.executable, f"block{i}.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"block {i}:\n{code}\n{done.stdout}{done.stderr}"
