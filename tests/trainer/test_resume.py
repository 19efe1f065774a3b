"""Kill-and-resume: a run SIGKILLed after a checkpoint and resumed logs the same metrics, step for
step, as an uninterrupted run with the same seed (CPU, deterministic)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from passband.trainer._metrics import PHASES

# Wall-clock figures differ between any two runs; everything else must match exactly.
_TIMING = {"time_s", "time/step_s", "throughput/tokens_per_s", *(f"time/{p}_s" for p in PHASES)}

_CONFIG = """
[model]
path = "{root}/model"

[data]
path = "{root}/data.jsonl"

[reward]
verifier = "regex"
references = {{ pattern = "pattern" }}

[trainer]
group_size = 4
prompts_per_step = 3
max_new_tokens = 6
learning_rate = 0.003
pretrained = false
beta = 0.01
mu = 2
grad_accum = 2
max_steps = 5
checkpoint_every = 2
keep_checkpoints = 2
seed = 3
verifier_workers = 1
progress = false
"""


def _cmd(cfg: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "passband.cli",
        "train",
        str(cfg),
        f"trainer.output_dir={json.dumps(str(out))}",
        *extra,
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def _metrics(out: Path) -> list[dict]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in _TIMING} for line in lines]


@pytest.mark.slow
def test_sigkill_then_resume_matches_uninterrupted_run(tmp_path, tiny):
    cfg = tiny.run_setup(tmp_path, _CONFIG)
    straight, broken = tmp_path / "straight", tmp_path / "broken"
    # Both runs start together (start-up dominates the wall time); only one is killed.
    whole = subprocess.Popen(
        _cmd(cfg, straight),
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc = subprocess.Popen(
        _cmd(cfg, broken), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 240
    while not (broken / "checkpoints" / "step_2" / "state.json").exists():
        assert proc.poll() is None, "training exited before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 240 s"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = len((broken / "metrics.jsonl").read_text().splitlines())
    assert killed_at < 5, "the run finished before it could be killed"

    assert whole.wait(timeout=300) == 0, whole.stderr.read()[-3000:]
    done = subprocess.run(
        _cmd(cfg, broken, "--resume"), env=_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resuming from" in done.stdout

    expected, got = _metrics(straight), _metrics(broken)
    assert [m["step"] for m in got] == list(range(1, 6))
    for want, have in zip(expected, got):
        assert have == want, f"step {want['step']} differs after resume"
    # The run learned something and used both refill and the KL term (the test is not vacuous).
    assert any(m["kl"] for m in got) and any(m["groups/effective"] for m in got)
    group_lines = [json.loads(x) for x in (broken / "groups.jsonl").read_text().splitlines()]
    assert group_lines == [
        json.loads(x) for x in (straight / "groups.jsonl").read_text().splitlines()
    ]


def test_the_rows_digest_is_the_same_in_every_process_and_takes_any_cell():
    """A dict with int and str keys crashed the first checkpoint (json sort_keys), and a set or an
    object showing its address read differently in each process: "other columns changed" on a
    resume of the same data."""
    code = (
        "from passband.trainer._resume import rows_digest\n"
        "rows = [{'prompt': 'p', 'meta': {1: 'x', 'b': 2}, 'tags': {'a', 'b', 'c', 'd'},"
        " 'obj': object()}]\n"
        "print(rows_digest(rows))\n"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout  # fmt: skip
        for seed in ("1", "2", "3")
    }
    assert len(seen) == 1 and len(seen.pop().strip()) == 64
    from passband.trainer._resume import rows_digest

    same = rows_digest([{"prompt": "a", "answer": "2"}])
    assert same == rows_digest([{"prompt": "b (truncated)", "answer": "2"}])  # prompts aside
    assert same != rows_digest([{"prompt": "a", "answer": "3"}])


def test_ctrl_c_during_a_checkpoint_write_finishes_the_write_then_stops():
    """A SIGINT inside torch.save broke it off with a RuntimeError ("unexpected pos"), so the run
    ended with a traceback instead of the resume guidance."""
    import signal

    from passband.trainer._runstate import _interrupt_after

    done = []
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with _interrupt_after():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the signal is delivered here, and held
            done.append("written")
    assert done == ["written"] and signal.getsignal(signal.SIGINT) is before
    with _interrupt_after():  # no signal: nothing raised
        done.append("again")
    assert done == ["written", "again"]
