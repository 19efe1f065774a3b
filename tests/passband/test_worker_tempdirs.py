"""A run killed with -9 leaves no multiprocessing temp dir for good: the CLI keeps them under
``<tmp>/passband-mp-<uid>/<pid>`` and the next run removes those of dead processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def test_the_temp_dir_of_a_killed_run_is_swept_by_the_next_one(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text(
        "".join(json.dumps({"completion": str(i), "answer": str(i)}) + "\n" for i in range(20_000))
    )
    base = Path(tempfile.gettempdir()) / f"passband-mp-{os.getuid()}"
    # math, not exact: exact is inline-safe and runs in the CLI's own process, with no workers
    cmd = [
        sys.executable,
        "-m",
        "passband.cli",
        "verify",
        str(src),
        "-v",
        "math",
        "--workers",
        "2",
        "--chunk-size",
        "64",
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd + ["-o", str(tmp_path / "a.jsonl")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    mine = base / str(proc.pid)
    deadline = time.monotonic() + 120
    while not (mine.is_dir() and any(mine.iterdir())):  # the worker machinery put files there
        assert proc.poll() is None and time.monotonic() < deadline, "no worker temp dir appeared"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert mine.is_dir()  # kill -9: nothing could clean up
    done = subprocess.run(
        [sys.executable, "-m", "passband.cli", "verify", "--list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not mine.exists()
