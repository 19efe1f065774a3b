"""Checkpoints fail loudly and fall back: a manifest of sizes and hashes is checked before loading,
a damaged newest checkpoint is named and skipped, a full disk says so and leaves no temp files.
Real tiny model, real optimizer, real files (and a real full file system where root can mount one)."""

from __future__ import annotations

import subprocess
import uuid

import pytest
import torch

from passband.errors import CheckpointError, DiskFullError
from passband.trainer._checkpoint import load_latest_checkpoint, save_checkpoint


def _parts(tiny, tokenizer):
    model = tiny.model(tokenizer)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0)
    return model, optimizer, scheduler


def _save(out, step, model, optimizer, scheduler, tokenizer, keep=3):
    return save_checkpoint(
        out,
        step,
        model=model,
        tokenizer=tokenizer,
        optimizer=optimizer,
        scheduler=scheduler,
        state={"step": step},
        keep=keep,
    )


def _load(out, model, optimizer, scheduler):
    return load_latest_checkpoint(out, model=model, optimizer=optimizer, scheduler=scheduler)


def test_a_damaged_newest_checkpoint_is_named_and_the_previous_one_loaded(
    tiny, tokenizer, tmp_path
):
    model, optimizer, scheduler = _parts(tiny, tokenizer)
    _save(tmp_path, 1, model, optimizer, scheduler, tokenizer)
    newest = _save(tmp_path, 2, model, optimizer, scheduler, tokenizer)
    weights = newest / "model" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # truncated, as a full disk leaves it
    with pytest.warns(
        UserWarning,
        match=r"step_2 cannot be loaded .*model.safetensors is 100 "
        r"bytes, the manifest says .*falling back to step_1",
    ):
        path, state = _load(tmp_path, *_parts(tiny, tokenizer))
    assert path.name == "step_1" and state == {"step": 1}


def test_a_flipped_byte_is_caught_by_the_hash(tiny, tokenizer, tmp_path):
    model, optimizer, scheduler = _parts(tiny, tokenizer)
    _save(tmp_path, 1, model, optimizer, scheduler, tokenizer)
    newest = _save(tmp_path, 2, model, optimizer, scheduler, tokenizer)
    data = bytearray((newest / "optimizer.pt").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (newest / "optimizer.pt").write_bytes(bytes(data))
    with pytest.warns(UserWarning, match=r"optimizer.pt does not match its SHA-256"):
        path, _ = _load(tmp_path, *_parts(tiny, tokenizer))
    assert path.name == "step_1"


def test_no_loadable_checkpoint_is_one_error_naming_each(tiny, tokenizer, tmp_path):
    model, optimizer, scheduler = _parts(tiny, tokenizer)
    for step in (1, 2):
        ckpt = _save(tmp_path, step, model, optimizer, scheduler, tokenizer)
        (ckpt / "state.json").write_text('{"step": ')
    with pytest.warns(UserWarning), pytest.raises(CheckpointError) as info:
        _load(tmp_path, *_parts(tiny, tokenizer))
    assert "step_2:" in str(info.value) and "step_1:" in str(info.value)
    assert "state.json" in str(info.value)


@pytest.fixture
def tiny_disk(tmp_path):
    """A 4 MiB tmpfs (needs root); skipped where it cannot be mounted."""
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_says_no_space_left_and_leaves_no_temp_files(tiny, tokenizer, tiny_disk):
    model, optimizer, scheduler = _parts(tiny, tokenizer)
    first = _save(tiny_disk, 1, model, optimizer, scheduler, tokenizer)
    with open(tiny_disk / "filler", "wb", buffering=0) as f:  # fill the disk to the last block
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    with pytest.raises(DiskFullError, match=f"no space left on {tiny_disk / 'checkpoints'}"):
        _save(tiny_disk, 2, model, optimizer, scheduler, tokenizer)
    leftovers = [p.name for p in (tiny_disk / "checkpoints").iterdir() if p.name.startswith(".")]
    assert leftovers == [] and first.is_dir()
    (tiny_disk / "filler").unlink()  # space freed: the next save works, the old one still loads
    _save(tiny_disk, 2, model, optimizer, scheduler, tokenizer)
    path, _ = _load(tiny_disk, *_parts(tiny, tokenizer))
    assert path.name == "step_2"
