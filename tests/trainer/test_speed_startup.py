"""Start-up: a cheap verifier that declares ``inline_safe`` is scored in the trainer's process, so
the first step does not wait for the verifier worker pool to start (seconds on a busy CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHECK = """
import json
import passband.demo.task  # registers demo_arith
from passband.verifiers import _deadline, verify_batch

answers = ["12", " 12", "13", "12 apples", "x", "9" * 5000]
out = verify_batch("demo_arith", answers, {"answer": "12"}, workers=2)
print(json.dumps({"status": [v.status for v in out], "pool": _deadline._POOL is not None}))
"""


def test_the_demo_verifier_scores_inline_without_starting_workers():
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    proc = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["pool"] is False, "an inline_safe verifier must not start the worker pool"
    assert got["status"][:5] == ["ok", "ok", "wrong", "wrong", "invalid"]
    assert got["status"][5] != "ok", "a 5000-digit answer is not 12, and is still bounded"
