"""One run per output_dir, nothing overwritten without being asked, damaged checkpoints skipped,
resume overrides applied and recorded: ``passband train`` in real processes on real files."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
prompts_per_step = 2
max_new_tokens = 4
learning_rate = 0.003
pretrained = false
beta = 0.0
max_steps = 4
checkpoint_every = 2
keep_checkpoints = 2
seed = 3
verifier_workers = 1
progress = false
use_curriculum = false
"""


def _train(cfg: Path, out: Path, *extra: str, cwd: Path | None = None, wait: bool = True):
    cmd = [
        sys.executable,
        "-m",
        "passband.cli",
        "train",
        str(cfg),
        f"trainer.output_dir={json.dumps(str(out))}",
        *extra,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    if not wait:
        return subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _steps(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_second_run_on_the_same_output_dir_is_refused(tiny, tmp_path):
    cfg = tiny.run_setup(tmp_path, _CONFIG)
    out = tmp_path / "run"
    first = _train(
        cfg, out, "trainer.max_steps=100000", "trainer.checkpoint_every=100000", wait=False
    )
    try:
        deadline = time.monotonic() + 240
        while not ((out / "metrics.jsonl").exists() and _steps(out)):
            assert first.poll() is None and time.monotonic() < deadline, (
                "the first run did not start"
            )
            time.sleep(0.1)
        second = _train(cfg, out)
        assert second.returncode == 2, second.stderr[-2000:]
        assert f"is in use by another run (pid {first.pid})" in second.stderr
        assert "Traceback" not in second.stderr
        assert first.poll() is None  # the first run was not disturbed
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    steps = [m["step"] for m in _steps(out)]
    assert steps == list(range(1, len(steps) + 1))  # one run's steps, not two interleaved
    # The kernel dropped the killed run's lock; its logs are still protected without --resume.
    third = _train(cfg, out)
    assert third.returncode == 2 and "holds a previous run (metrics.jsonl" in third.stderr


@pytest.mark.slow
def test_old_logs_without_checkpoints_are_kept_unless_overwrite(tiny, tmp_path):
    cfg = tiny.run_setup(tmp_path, _CONFIG)
    # The verifier is a module:attr in the working directory, scored in worker processes.
    (tmp_path / "my_checks.py").write_text(
        "import re\nfrom passband.verifiers import Verdict\n"
        "def matches(completion, pattern):\n"
        "    ok = re.fullmatch(pattern, completion) is not None\n"
        "    return Verdict(float(ok), 'ok' if ok else 'wrong', '')\n"
    )
    cfg.write_text(cfg.read_text().replace('verifier = "regex"', 'verifier = "my_checks:matches"'))
    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"step": 1, "note": "an earlier run"}\n')
    before = (out / "metrics.jsonl").read_bytes()
    for flags, message in [
        # no checkpoint: it said "pass --resume", and --resume then failed
        ((), "holds a previous run (metrics.jsonl) that stopped before its first checkpoint"),
        (("--resume",), "but no checkpoint to resume from"),
    ]:
        done = _train(cfg, out, "trainer.max_steps=1", *flags, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr, done.stderr[-2000:]
        assert "pass --resume" not in done.stderr
        assert (out / "metrics.jsonl").read_bytes() == before
    done = _train(cfg, out, "trainer.max_steps=1", "--overwrite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    steps = _steps(out)
    assert [m["step"] for m in steps] == [1] and "note" not in steps[0]
    assert steps[0]["verifier/error_rate"] == 0.0  # the module:attr verifier really ran
    # the report page of the replaced run goes with it, not left to describe the old run
    from passband.cli import main

    assert main(["report", str(out)]) == 0 and (out / "report" / "index.html").is_file()
    done = _train(cfg, out, "trainer.max_steps=1", "--overwrite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (out / "report").exists() and [m["step"] for m in _steps(out)] == [1]


@pytest.mark.slow
def test_resume_skips_a_damaged_checkpoint_applies_overrides_and_sweeps_leftovers(tiny, tmp_path):
    cfg = tiny.run_setup(tmp_path, _CONFIG)
    out = tmp_path / "run"
    done = _train(cfg, out)
    assert done.returncode == 0, done.stderr[-2000:]
    weights = out / "checkpoints" / "step_4" / "model" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:64])
    leftovers = [out / ".metrics.jsonl.tmp4242", out / "checkpoints" / ".tmp_step_6_4242"]
    leftovers[0].write_text("")
    leftovers[1].mkdir()
    done = _train(
        cfg, out, "--resume", "trainer.max_steps=5", "trainer.learning_rate=0.001", "trainer.seed=9"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        "step_4 cannot be loaded" in done.stderr and "model.safetensors is 64 bytes" in done.stderr
    )
    assert "falling back to step_2" in done.stderr
    assert f"resuming from {out / 'checkpoints' / 'step_2'} (step 2)" in done.stdout
    assert "applied trainer.learning_rate = 0.001 (checkpoint 0.003)" in done.stdout
    assert "ignored trainer.seed = 9 (checkpoint 3)" in done.stdout
    config = json.loads((out / "config.json").read_text())
    assert config["learning_rate"] == 0.001 and config["max_steps"] == 5
    steps = _steps(out)
    assert [m["step"] for m in steps] == [1, 2, 3, 4, 5]
    assert [m["lr"] for m in steps] == [0.003, 0.003, 0.001, 0.001, 0.001]
    assert not any(p.exists() for p in leftovers)


def test_a_run_that_cannot_start_is_refused_before_anything_loads(tmp_path, capsys):
    """The output_dir check runs before the model and data load: here neither exists, and the
    refusal is still about the previous run (a real model would take minutes to load first)."""
    from passband.cli import main

    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"step": 1}\n')
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        f'[model]\npath = "{tmp_path / "no_model"}"\n[data]\npath = "{tmp_path / "no.jsonl"}"\n'
        f'[reward]\nverifier = "exact"\n[trainer]\noutput_dir = "{out}"\n'
    )
    assert main(["train", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "holds a previous run (metrics.jsonl)" in err and "no_model" not in err
    assert (out / "metrics.jsonl").read_text() == '{"step": 1}\n'  # nothing touched


@pytest.mark.slow
def test_a_run_that_failed_before_its_first_step_does_not_block_the_retry(tiny, tmp_path):
    """A reward that fails on every answer stops the run at its first rollout, after the run's
    config.json was written; that file alone is no previous run, so the fixed command starts
    without --overwrite (and an earlier run's metrics are still refused, as above)."""
    cfg = tiny.run_setup(tmp_path, _CONFIG)
    checks = tmp_path / "my_checks.py"
    checks.write_text("def matches(completion, pattern):\n    raise RuntimeError('broken')\n")
    cfg.write_text(cfg.read_text().replace('verifier = "regex"', 'verifier = "my_checks:matches"'))
    out = tmp_path / "run"
    failed = _train(cfg, out, "trainer.max_steps=1", cwd=tmp_path)
    assert failed.returncode == 2 and "failed on all" in failed.stderr, failed.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["config.json"]
    checks.write_text(
        "import re\nfrom passband.verifiers import Verdict\n"
        "def matches(completion, pattern):\n"
        "    ok = re.fullmatch(pattern, completion) is not None\n"
        "    return Verdict(float(ok), 'ok' if ok else 'wrong', '')\n"
    )
    done = _train(cfg, out, "trainer.max_steps=1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [m["step"] for m in _steps(out)] == [1]


def test_ctrl_c_says_where_the_run_stopped_and_how_to_resume(tiny, tmp_path):
    """It printed only "interrupted": not the step, the newest checkpoint, nor the command."""
    cfg = tiny.run_setup(tmp_path, _CONFIG)
    out = tmp_path / "run"
    cmd = [
        sys.executable, "-m", "passband.cli", "train", str(cfg),
        f"trainer.output_dir={json.dumps(str(out))}", "trainer.max_steps=100000",
        "trainer.checkpoint_every=1",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    run = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 240
        while not any((out / "checkpoints").glob("step_*/state.json")):
            assert run.poll() is None and time.monotonic() < deadline, "no checkpoint was written"
            time.sleep(0.1)
        run.send_signal(signal.SIGINT)
        err = run.communicate(timeout=120)[1]
    finally:
        run.kill()
    assert run.returncode == 130, err[-2000:]
    said = re.search(r"interrupted at step (\d+); the newest checkpoint is step (\d+)", err)
    assert said and int(said[1]) >= int(said[2]) >= 1, err[-2000:]
    assert f"resume with: passband train {cfg} --resume" in err
